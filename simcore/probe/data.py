"""A target's labelled splits: found in a directory (CoNLL files, or a Hub folder's Parquet shards), read
with simcore's readers, capped, and stored as spaCy DocBin files (the form spaCy's training reads through
its config)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.corpus import Corpus
from ..corpora.formats import format_of, is_dataset_metadata
from ..corpora.notes import ReadNotes
from ..corpora.tokenize import TokenizerOptions
from ..utils.errors import CorpusError, SimcoreError
from ..utils.store import ArtefactStore, digest
from .scoring import spans

SPLITS = ("train", "dev", "test")
_ALIASES = {"train": ("train", "training"), "dev": ("dev", "devel", "valid", "validation"), "test": ("test",)}
# The Hub's shard names: train-00000-of-00001.parquet, and the older train-00000-of-00001-5c5d3ab1.parquet
_SHARD = re.compile(r"-\d{5}-of-\d{5}(?:-[0-9a-f]+)?$")
_KEEP_CASE = TokenizerOptions(lowercase=False)  # the tagger sees the tokens as written
_TEXT_LIKE = (None, "text", "conll")  # a train.txt or train.data split is read as CoNLL, as it always was

Sentences = list[tuple[list[str], list[str]]]


def _split_of(entry: Path) -> str | None:
    """Which split a file or folder holds, by its name as data sets and the Hub name them, or None."""
    if entry.name.startswith(".") or (entry.is_file() and is_dataset_metadata(entry)):
        return None
    stem = _SHARD.sub("", entry.name.split(".")[0].lower())
    last = re.split(r"[-_]", stem)[-1]  # Universal Dependencies: de_gsd-ud-train.conllu
    return next((split for split, aliases in _ALIASES.items() if stem in aliases or last in aliases), None)


@dataclass(frozen=True)
class TargetSplits:
    """A target NER data set: its name and the file of each split (dev is optional).

    A split may also be a folder (``datasets.save_to_disk`` writes ``train/``) or, on the Hub, several
    shards (``data/train-00000-of-00002.parquet`` ...): ``train``/``dev``/``test`` then name its first file
    or its folder, and ``shards`` holds every file.
    """

    name: str
    train: Path
    test: Path
    dev: Path | None = None
    shards: tuple[tuple[str, tuple[Path, ...]], ...] = field(default=(), compare=False)

    @classmethod
    def from_directory(cls, directory: Path | str, name: str | None = None) -> TargetSplits:
        """Find ``train``/``dev``/``test`` (any CoNLL suffix, Parquet, Arrow or JSON Lines, Hub shard names,
        split folders) in a target directory or its ``data/`` folder; metadata files are never splits."""
        directory = Path(directory)
        if not directory.is_dir():
            raise SimcoreError(f"{directory} is not a directory; give a directory holding train and test files")
        found: dict[str, list[Path]] = {}
        for folder in (directory, directory / "data"):
            if not folder.is_dir():
                continue
            for p in sorted(folder.iterdir()):
                split = _split_of(p)
                if split is None or not (p.is_file() or p.is_dir()):
                    continue
                if split in found and found[split][0].parent != p.parent:
                    continue  # the split was found in the folder above
                if split in found and (p.is_dir() or found[split][0].is_dir() or not _SHARD.search(p.name.split(".")[0])):
                    continue  # one file per split unless they are the Hub's shards
                found.setdefault(split, []).append(p)
        missing = [s for s in ("train", "test") if s not in found]
        if missing:
            raise SimcoreError(f"{directory} has no {' or '.join(missing)} file; a probe target needs "
                               "train.conll and test.conll (dev.conll optional), or the Hub's train and test "
                               "Parquet files")
        shards = tuple((split, tuple(paths)) for split, paths in found.items() if len(paths) > 1)
        return cls(name or directory.name, found["train"][0], found["test"][0],
                   found["dev"][0] if "dev" in found else None, shards)

    def corpus(self, split: str) -> Corpus:
        path = getattr(self, split)
        if path is None:
            raise SimcoreError(f"{self.name} has no {split} split")
        files = dict(self.shards).get(split, ())
        label = f"{self.name}/{split}"
        if files:
            return Corpus(name=label, path=path.parent, files=files, fmt=_forced(path))
        return Corpus(name=label, path=path, fmt=None if path.is_dir() else _forced(path))

    def fingerprint(self, split: str) -> str:
        """A hash of the split's bytes."""
        return self.corpus(split).raw_fingerprint(_KEEP_CASE)


def _forced(path: Path) -> str | None:
    """``conll`` for a text-like split file (CoNLL-U found inside is still read as CoNLL-U), else its own format."""
    return "conll" if format_of(path.name) in _TEXT_LIKE else None


def read_split(splits: TargetSplits, split: str) -> Sentences:
    """(tokens, tags) of every sentence of a split; a clear error when there are none."""
    sentences = [(tokens, tags) for tokens, tags in splits.corpus(split).tagged_sentences() if tokens]
    if not sentences:
        raise CorpusError(f"{splits.name}: the {split} file holds no tagged sentences")
    return sentences


def split_notes(splits: TargetSplits) -> list[str]:
    """One line per split whose reader skipped or repaired rows (null Hub rows, null tags, blank tokens):
    ``news/train: 24 lines skipped (e.g. ...)``; a split that cannot be read is left to the probe's own error."""
    lines = []
    for split in SPLITS:
        if getattr(splits, split) is None:
            continue
        notes = ReadNotes()
        try:
            for _ in splits.corpus(split).tagged_sentences(notes):
                pass
        except SimcoreError:
            continue
        if notes:
            lines.append(f"{splits.name}/{split}: {notes.summary()}")
    return lines


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


def stored_split_key(splits: TargetSplits, split: str, limit: int | None, seed: int) -> str:
    """The store key of the split's ``docs.spacy`` under this cap (estimates ask whether it is built)."""
    return digest("probe-docs", splits.fingerprint(split), limit, seed)


def stored_split(splits: TargetSplits, split: str, limit: int | None, seed: int,
                 store: ArtefactStore) -> StoredSplit:
    """The split, capped to ``limit`` sentences, as ``docs.spacy`` (built once per file and cap)."""
    key = stored_split_key(splits, split, limit, seed)

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
