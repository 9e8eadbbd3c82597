"""Hub-style NER data sets: rows holding a token list and integer tags, the tags' names in the features.

`datasets` stores a NER data set as rows ``{"tokens": [...], "ner_tags": [3, 0, ...]}`` with the
names of the tags in its features (a ``ClassLabel`` inside a ``Sequence``), kept in
``dataset_info.json`` beside the Arrow files, or in the ``huggingface`` entry of a Parquet or Arrow
schema's metadata. The names can also be given (``Corpus.labels``, the ``--labels`` option).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CorpusError
from .notes import ReadNotes

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus

_INFO_FILES = ("dataset_info.json",)


def clean_tokens(values: Sequence[Any], where: str, notes: ReadNotes) -> list[str]:
    """The tokens of one row: a null token is dropped and a non-string one written as text, both counted."""
    tokens = []
    for value in values:
        if isinstance(value, str) and value.strip():
            tokens.append(value)
        elif isinstance(value, str):
            notes.note("skipped", f"{where}: a blank token dropped", "blank token")
        elif value is None:
            notes.note("skipped", f"{where}: a null token dropped", "null token")
        else:
            tokens.append(str(value))
            notes.note("repaired", f"{where}: a {type(value).__name__} token written as text", "non-text token")
    return tokens


def names_in_features(features: Any, field: str) -> list[str] | None:
    """The ClassLabel names of ``field`` in a `datasets` features record (any of its spellings), or None."""
    if isinstance(features, list):  # an older spelling: a list of {"name": ..., ...}
        features = {f.get("name"): f for f in features if isinstance(f, dict)}
    node = features.get(field) if isinstance(features, dict) else None
    for _ in range(8):  # Sequence(ClassLabel) / List(ClassLabel) / [ClassLabel]
        if isinstance(node, list) and len(node) == 1:
            node = node[0]
        if not isinstance(node, dict):
            return None
        names = node.get("names")
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            return names
        node = node.get("feature", node.get("dtype"))
    return None


def label_names(path: Path, corpus: Corpus, schema_metadata: dict[bytes, bytes] | None = None) -> list[str] | None:
    """The tag names for the integer tags of ``path``: given labels, else dataset_info.json, else the schema's."""
    if corpus.labels:
        return list(corpus.labels)
    for folder in (path.parent, path.parent.parent):
        for name in _INFO_FILES:
            info = folder / name
            if info.is_file() and info.stat().st_size < (16 << 20):
                try:
                    record = json.loads(info.read_text(encoding="utf-8"))
                except (OSError, ValueError, UnicodeDecodeError):
                    continue
                names = names_in_features(record.get("features") if isinstance(record, dict) else None,
                                          corpus.tags_field)
                if names:
                    return names
    raw = (schema_metadata or {}).get(b"huggingface")
    if raw:
        try:
            record = json.loads(raw)
        except ValueError:
            return None
        info = record.get("info", {}) if isinstance(record, dict) else {}
        return names_in_features(info.get("features") if isinstance(info, dict) else None, corpus.tags_field)
    return None


def tag_names(tags: Sequence[Any], names: list[str] | None, where: str, corpus: Corpus) -> list[str]:
    """Integer tags as their names (string tags as they are); an unknown number is refused."""
    out = []
    for tag in tags:
        if isinstance(tag, str):
            out.append(tag)
            continue
        if names is None:
            raise CorpusError(f"{corpus.name}: {where} has numeric tags and no tag names were found (no "
                              "dataset_info.json, no features in the file); give them with --labels")
        if not isinstance(tag, int) or not 0 <= tag < len(names):
            raise CorpusError(f"{corpus.name}: {where} has tag {tag!r}, but only {len(names)} tag names are known")
        out.append(names[tag])
    return out
