"""File names to formats: which reader a file gets, and which decompressor sits under it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..utils.errors import CorpusError

FORMATS = ("text", "jsonl", "csv", "conll", "conllu", "parquet", "arrow")
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd")
SUFFIX_FORMAT = {
    ".txt": "text", ".text": "text", ".tok": "text", ".tokens": "text", ".raw": "text",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
    ".csv": "csv",
    ".conll": "conll", ".conllu": "conllu", ".conllup": "conllu", ".bio": "conll", ".iob": "conll", ".iob2": "conll",
    ".bioes": "conll", ".ner": "conll", ".tsv": "conll",
    ".parquet": "parquet", ".pq": "parquet",
    ".arrow": "arrow",
}
COLUMNAR = ("parquet", "arrow")  # read by pyarrow, never through a text decoder or a decompressor of ours
# What `datasets.save_to_disk` writes beside its data-*.arrow files, and the Hub beside its data/ folder:
# metadata, never corpus text (a README.md is metadata when it opens with YAML front matter, a dataset card).
DATASET_METADATA = ("dataset_info.json", "state.json", "dataset_dict.json")
DATASET_CARDS = ("readme.md",)


def split_suffixes(name: str) -> tuple[str, str | None]:
    """(format suffix, compression suffix) of a file name, both lower-case."""
    lower = name.lower()
    compression = next((c for c in COMPRESSION_SUFFIXES if lower.endswith(c)), None)
    if compression:
        lower = lower[: -len(compression)]
    return os.path.splitext(lower)[1], compression


def format_of(name: str) -> str | None:
    """The format implied by a file name, or None when the suffix says nothing."""
    suffix, compression = split_suffixes(name)
    fmt = SUFFIX_FORMAT.get(suffix)
    if fmt in COLUMNAR and compression:
        return None  # a compressed Parquet or Arrow file is not something pyarrow reads
    return fmt


def is_dataset_metadata(path: Path | Any) -> bool:
    """True for a file of a Hub folder or a `datasets` export that describes the data and holds none of it:
    ``dataset_info.json``, ``state.json``, ``dataset_dict.json``, and a README.md that opens with YAML front
    matter (a dataset card). Such files are never read as corpus text."""
    name = path.name.lower()
    if name in DATASET_METADATA:
        return True
    if name in DATASET_CARDS:
        try:
            with path.open("rb") as f:  # a Path, or a remote object (simcore.corpora.remote.RemoteFile)
                return f.read(4).rstrip(b"\r\n") == b"---"
        except (OSError, CorpusError):
            return False
    return False
