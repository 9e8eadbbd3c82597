"""A source's skip-gram vectors (trained and stored for WVV) as a spaCy vectors table.

The table is a blank English pipeline saved with its vectors, the form spaCy's
``[initialize] vectors`` setting loads (what ``spacy init vectors`` writes). Source tokens are
lower-cased by simcore's tokenizer while NER data keeps its case, so each word's row is also
keyed by its Title and UPPER forms (spaCy 3.8 does not save a table's ``attr = LOWER`` setting,
so keying by lower case alone would be lost on loading).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..measures.prepared import PreparedSource
from ..measures.wvv import source_vectors_path
from ..utils.store import digest


@dataclass(frozen=True)
class SourceVectors:
    """A stored spaCy vectors pipeline and the fingerprint it is known by."""

    name: str
    path: Path
    key: str
    words: int
    dims: int


def spacy_vectors(source: PreparedSource) -> SourceVectors:
    """The source's word2vec vectors as a spaCy pipeline directory (built once per vectors artefact)."""
    w2v = source_vectors_path(source)
    lowercase = bool(source.sample.meta.get("options", {}).get("lowercase", True))
    key = digest("probe-vectors", w2v.name, lowercase)  # the word2vec artefact's key is its fingerprint

    def build(out: Path) -> dict[str, Any]:
        import spacy
        from spacy.vectors import Vectors

        words = json.loads((w2v / "words.json").read_text())
        table = np.ascontiguousarray(np.load(w2v / "vectors.npy"), dtype=np.float32)
        nlp = spacy.blank("en")
        vectors = Vectors(strings=nlp.vocab.strings, data=table, keys=words, name=f"simcore_{key[:12]}")
        if lowercase:
            for row, word in enumerate(words):
                for variant in {word.title(), word.upper()} - {word}:
                    variant_key = nlp.vocab.strings.add(variant)
                    if variant_key not in vectors:
                        vectors.add(variant_key, row=row)
        nlp.vocab.vectors = vectors
        nlp.to_disk(out / "pipeline")
        return {"words": len(words), "dims": int(table.shape[1]) if table.ndim == 2 else 0}

    store = source.store
    path = store.build("probe-vectors", key, build)
    meta = store.meta(path)
    return SourceVectors(source.name, path / "pipeline", key, meta["words"], meta["dims"])
