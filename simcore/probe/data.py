"""A target's labelled splits: found in a directory, read with simcore's CoNLL reader, capped,
and stored as spaCy DocBin files (the form spaCy's training reads through its config)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import Corpus
from ..errors import CorpusError, SimcoreError
from ..store import ArtefactStore, digest
from ..tokenize import TokenizerOptions
from .scoring import spans

SPLITS = ("train", "dev", "test")
_ALIASES = {"train": ("train", "training"), "dev": ("dev", "devel", "valid", "validation"), "test": ("test",)}
_KEEP_CASE = TokenizerOptions(lowercase=False)  # the tagger sees the tokens as written

Sentences = list[tuple[list[str], list[str]]]


@dataclass(frozen=True)
class TargetSplits:
    """A target NER data set: its name and the CoNLL file of each split (dev is optional)."""

    name: str
    train: Path
    test: Path
    dev: Path | None = None

    @classmethod
    def from_directory(cls, directory: Path | str, name: str | None = None) -> TargetSplits:
        """Find ``train``/``dev``/``test`` files (any CoNLL suffix) in a target directory."""
        directory = Path(directory)
        if not directory.is_dir():
            raise SimcoreError(f"{directory} is not a directory; give a directory holding train and test files")
        files: dict[str, Path] = {}
        for p in sorted(directory.iterdir()):
            if not p.is_file() or p.name.startswith("."):
                continue
            stem = p.name.split(".")[0].lower()
            for split, aliases in _ALIASES.items():
                if stem in aliases and split not in files:
                    files[split] = p
        missing = [s for s in ("train", "test") if s not in files]
        if missing:
            raise SimcoreError(f"{directory} has no {' or '.join(missing)} file; a probe target needs "
                               "train.conll and test.conll (dev.conll optional)")
        return cls(name or directory.name, files["train"], files["test"], files.get("dev"))

    def corpus(self, split: str) -> Corpus:
        path = getattr(self, split)
        if path is None:
            raise SimcoreError(f"{self.name} has no {split} split")
        return Corpus(name=f"{self.name}/{split}", path=path, fmt="conll")

    def fingerprint(self, split: str) -> str:
        """A hash of the split file's bytes."""
        return self.corpus(split).raw_fingerprint(_KEEP_CASE)


def read_split(splits: TargetSplits, split: str) -> Sentences:
    """(tokens, tags) of every sentence of a split; a clear error when there are none."""
    sentences = [(tokens, tags) for tokens, tags in splits.corpus(split).tagged_sentences() if tokens]
    if not sentences:
        raise CorpusError(f"{splits.name}: the {split} file holds no tagged sentences")
    return sentences


def cap_sentences(sentences: Sentences, limit: int | None, seed: int) -> Sentences:
    """At most ``limit`` sentences drawn at random (fixed seed), in their original order.

    A random draw, not the first sentences: data sets stored by document start topically narrow.
    """
    if limit is None or len(sentences) <= limit:
        return sentences
    keep = np.sort(np.random.default_rng(seed).choice(len(sentences), size=limit, replace=False))
    return [sentences[i] for i in keep]


def to_docs(sentences: Sentences, vocab: Any) -> list[Any]:
    """spaCy Docs with the entities of the tags (chunks read as conlleval reads them)."""
    from spacy.tokens import Doc, Span

    docs = []
    for tokens, tags in sentences:
        doc = Doc(vocab, words=tokens, spaces=[True] * len(tokens))
        doc.ents = [Span(doc, start, end, label=kind or "ENT") for start, end, kind in spans(tags)]
        docs.append(doc)
    return docs


@dataclass(frozen=True)
class StoredSplit:
    """A capped split written as a DocBin in the artefact store."""

    path: Path
    key: str
    sentences: int
    entities: int


def stored_split(splits: TargetSplits, split: str, limit: int | None, seed: int,
                 store: ArtefactStore) -> StoredSplit:
    """The split, capped to ``limit`` sentences, as ``docs.spacy`` (built once per file and cap)."""
    key = digest("probe-docs", splits.fingerprint(split), limit, seed)

    def build(out: Path) -> dict[str, Any]:
        import spacy
        from spacy.tokens import DocBin

        sentences = cap_sentences(read_split(splits, split), limit, seed)
        docs = to_docs(sentences, spacy.blank("en").vocab)
        DocBin(docs=docs, store_user_data=False).to_disk(out / "docs.spacy")
        return {"sentences": len(docs), "entities": sum(len(d.ents) for d in docs)}

    path = store.build("probe-docs", key, build)
    meta = store.meta(path)
    return StoredSplit(path / "docs.spacy", key, meta["sentences"], meta["entities"])
