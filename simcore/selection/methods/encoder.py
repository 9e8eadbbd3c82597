"""Cosine over sentence embeddings from a transformer encoder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import MeasureUnavailable, SimcoreError
from ..options import SelectionOptions
from ..pool import Batch
from ..target import Target


class EncoderScorer:
    """Embeddings from a sentence-transformers model saved in a local directory."""

    def __init__(self, options: SelectionOptions, target: Target) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise MeasureUnavailable(
                "the transformer encoder needs the sentence-transformers package and a model saved on "
                "this machine: pip install sentence-transformers, save a model with "
                "SentenceTransformer(NAME).save(DIR) where downloads are allowed, then give --encoder DIR "
                "(without --encoder, cosine uses skip-gram vectors)") from None
        path = Path(str(options.encoder)).expanduser()
        if not path.is_dir():
            raise SimcoreError(f"the encoder {options.encoder} is not a directory holding a saved "
                               "sentence-transformers model (nothing is downloaded)")
        try:
            self.model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:  # the library raises many kinds for a bad directory
            raise SimcoreError(f"cannot load the encoder in {path}: {str(exc).splitlines()[0][:200]}") from None
        self.name = path.name
        centre = self.model.encode(target.raw_texts(5000), batch_size=64, normalize_embeddings=True).mean(axis=0)
        self.centre = centre / (np.linalg.norm(centre) or 1.0)

    def score(self, batch: Batch) -> np.ndarray:
        embeddings = self.model.encode(batch.texts, batch_size=64, normalize_embeddings=True)
        return np.asarray(embeddings @ self.centre, dtype=np.float64)

    def details(self) -> dict[str, Any]:
        return {"encoder": self.name}

