"""Hub-style NER data sets: rows holding a token list and integer tags, the tags' names in the features.

`datasets` stores a NER data set as rows ``{"tokens": [...], "ner_tags": [3, 0, ...]}`` with the
names of the tags in its features (a ``ClassLabel`` inside a ``Sequence``), kept in
``dataset_info.json`` beside the Arrow files, in the YAML front matter of a Hub dataset card
(``README.md``, ``dataset_info``), or in the ``huggingface`` entry of a Parquet or Arrow schema's metadata. The names can also be given (``Corpus.labels``, the ``--labels`` option).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..utils.errors import CorpusError
from .notes import ReadNotes

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus

_INFO_FILES = ("dataset_info.json",)
_CARDS = ("README.md", "readme.md")
MAX_INFO_BYTES = 16 << 20
MAX_CARD_BYTES = 1 << 20


def bad_label_name(name: object) -> str | None:
    """Why ``name`` cannot be a tag name (not text, blank, a control character), or None when it can."""
    if not isinstance(name, str):
        return f"{name!r} is not text"
    if not name.strip():
        return "a tag name is empty"
    if any(unicodedata.category(c) == "Cc" for c in name):
        return f"tag name {name[:40]!r} holds a control character"
    return None


def checked_names(names: list[str] | None, where: str, corpus: Corpus) -> list[str] | None:
    """``names`` when every one is a usable tag name, as ``--labels`` checks them; else a CorpusError."""
    for name in names or ():
        why = bad_label_name(name)
        if why:
            raise CorpusError(f"{corpus.name}: {where}: {why}; fix the file or give the names with --labels")
    return names


def _json_file(info: Path, corpus: Corpus) -> object:
    """The JSON value of a metadata file; None when it is unreadable, a CorpusError when nested too deeply."""
    try:
        return json.loads(info.read_text(encoding="utf-8"))
    except RecursionError:
        raise CorpusError(f"{corpus.name}: {info.name} is JSON nested too deeply to read") from None
    except (OSError, ValueError, UnicodeDecodeError, CorpusError):
        return None


def card_info(card: Path, corpus: Corpus) -> object:
    """The ``dataset_info`` of a Hub dataset card (README.md's YAML front matter), or None."""
    try:
        with card.open(encoding="utf-8") as f:  # a Path, or a remote object (RemoteFile)
            head = f.read(MAX_CARD_BYTES)
    except (OSError, UnicodeDecodeError, CorpusError):
        return None
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    if end < 0:
        return None
    import yaml  # with its first-use regexes, only for a README that has front matter

    try:
        record = yaml.safe_load(head[3:end])
    except RecursionError:
        raise CorpusError(f"{corpus.name}: {card.name}'s YAML header is nested too deeply to read") from None
    except (yaml.YAMLError, ValueError):
        return None
    return record.get("dataset_info") if isinstance(record, dict) else None


def clean_pairs(tokens: Sequence[Any], tags: Sequence[Any], where: str,
                notes: ReadNotes) -> tuple[list[Any], list[Any]]:
    """The (token, tag) pairs of one row that can be read; a null tag drops its pair, counted."""
    kept_tokens, kept_tags = [], []
    for token, tag in zip(tokens, tags):
        if tag is None:
            notes.note("skipped", f"{where}: a token with a null tag dropped", "null tag")
            continue
        words = clean_tokens([token], where, notes)
        if words:
            kept_tokens.append(words[0])
            kept_tags.append(tag)
    return kept_tokens, kept_tags


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


def _names(values: Any) -> list[str] | None:
    """ClassLabel names as a list: ``["O", ...]``, or the dataset card's ``{"0": "O", ...}``."""
    if isinstance(values, list) and all(isinstance(n, str) for n in values):
        return values
    if isinstance(values, dict) and values:
        try:
            numbered = {int(k): v for k, v in values.items()}
        except (TypeError, ValueError):
            return None
        if sorted(numbered) == list(range(len(numbered))) and all(isinstance(v, str) for v in numbered.values()):
            return [numbered[i] for i in range(len(numbered))]
    return None


def names_in_features(features: Any, field: str) -> list[str] | None:
    """The ClassLabel names of ``field`` in a `datasets` features record (any of its spellings), or None.

    ``dataset_info.json`` writes ``{"ner_tags": {"feature": {"names": [...]}}}``; a dataset card's YAML
    writes ``[{"name": "ner_tags", "sequence": {"class_label": {"names": {"0": "O", ...}}}}]``.
    """
    if isinstance(features, list):  # an older spelling, and the card's: a list of {"name": ..., ...}
        features = {f.get("name"): f for f in features if isinstance(f, dict)}
    node = features.get(field) if isinstance(features, dict) else None
    for _ in range(8):  # Sequence(ClassLabel) / List(ClassLabel) / [ClassLabel] / sequence: class_label:
        if isinstance(node, list) and len(node) == 1:
            node = node[0]
        if not isinstance(node, dict):
            return None
        names = _names(node.get("names"))
        if names:
            return names
        node = next((node[k] for k in ("feature", "sequence", "list", "class_label", "dtype") if k in node), None)
    return None


def _info_features(info: Any) -> Any:
    """The features of a dataset_info record, or of the first config of a card's list of them."""
    if isinstance(info, list):
        info = next((i for i in info if isinstance(i, dict) and "features" in i), None)
    return info.get("features") if isinstance(info, dict) else None


def label_names(path: Path, corpus: Corpus, schema_metadata: dict[bytes, bytes] | None = None) -> list[str] | None:
    """The tag names for the integer tags of ``path``: given labels, else dataset_info.json, else a Hub dataset
    card's (README.md's YAML ``dataset_info``), else the schema's; every name checked as ``--labels`` is."""
    if corpus.labels:
        return list(corpus.labels)
    folders = (path.parent, path.parent.parent)  # beside the file, or above a Hub data/ folder
    for folder in folders:
        for name in _INFO_FILES:
            info = folder / name
            if info.is_file() and info.stat().st_size < MAX_INFO_BYTES:
                names = names_in_features(_info_features(_json_file(info, corpus)), corpus.tags_field)
                if names:
                    return checked_names(names, info.name, corpus)
    for folder in folders:
        card = next((folder / n for n in _CARDS if (folder / n).is_file()), None)
        if card is not None:
            names = names_in_features(_info_features(card_info(card, corpus)), corpus.tags_field)
            if names:
                return checked_names(names, f"{card.name}'s dataset_info", corpus)
    raw = (schema_metadata or {}).get(b"huggingface")
    if raw:
        try:
            record = json.loads(raw)
        except RecursionError:
            raise CorpusError(f"{corpus.name}: {path.name}'s schema metadata is JSON nested too deeply") from None
        except ValueError:
            return None
        info = record.get("info", {}) if isinstance(record, dict) else {}
        names = names_in_features(_info_features(info), corpus.tags_field)
        return checked_names(names, f"{path.name}'s schema", corpus)
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


def tagged_row(tokens: Any, tags: Any, where: str, corpus: Corpus, names: list[str] | None,
               notes: ReadNotes) -> tuple[list[str], list[str]] | None:
    """(tokens, tag names) of one Hub-style row, or None for a row with nothing to read (counted).

    A null or non-list ``tokens`` or tags drops the row; a null token or tag drops its pair; tokens and
    tags of different lengths are refused.
    """
    for value, field in ((tokens, corpus.tokens_field), (tags, corpus.tags_field)):
        if not isinstance(value, list):
            what = "null or missing" if value is None else f"a {type(value).__name__}, not a list"
            notes.note("skipped", f"{where}: {field!r} is {what}", f"row with null {field!r}"
                       if value is None else f"row whose {field!r} is not a list")
            return None
    if len(tokens) != len(tags):
        raise CorpusError(f"{corpus.name}: {where} has {len(tokens)} tokens and {len(tags)} tags")
    if not tokens:
        return None
    words, kept = clean_pairs(tokens, tags, where, notes)
    if not words:
        return None
    return words, tag_names(kept, names, where, corpus)
