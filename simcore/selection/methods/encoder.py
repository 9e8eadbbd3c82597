"""encoder: cosine of a sentence's transformer embedding to the mean target embedding.

The selective-pretraining paper's first strategy (and, with ``adapt``, its second: the encoder
after masked-LM training on the target). The pool's embeddings depend only on the pool and the
encoder, so they are stored once (float32, one row per pool unit) and every target, K or
fraction reuses them; the target's mean embedding is stored per target.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ...corpora.corpus import Corpus
from ...models.sentence_encoder import MAX_LENGTH, Encoder, resolve_encoder
from ...utils.errors import SimcoreError
from ...utils.store import ArtefactStore, digest
from ..encoder_adapt import adaptation_record, adapted_encoder
from ..options import Progress, SelectionOptions
from ..pool import Batch, PoolPosition, pool_batches
from ..target import Target

TARGET_SENTENCES = 1000   # target sentences averaged into the target embedding (spread over the target)


class EncoderScorer:
    def __init__(self, options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                 store: ArtefactStore, progress: Progress) -> None:
        base = resolve_encoder(options.encoder, store)
        self.adaptation: dict[str, Any] = {}
        source = base
        if options.adapt:
            source = adapted_encoder(base, target, store, options.adapt_steps, options.seed, options.workers, progress)
            self.adaptation = adaptation_record(source, store)
        self._encoder: Encoder | None = None
        self.source = source
        self.threads = options.workers

        self.centre, self.target_meta = self._target_centre(target, store, progress)
        path = self._pool_embeddings(options, pool, pool_fp, store, progress)
        self.pool_meta = store.meta(path)
        n, dims = self.pool_meta["n"], self.pool_meta["dims"]
        self.embeddings = (np.memmap(path / "embeddings.f32", dtype=np.float32, mode="r", shape=(n, dims))
                           if n else np.zeros((0, dims), dtype=np.float32))

    @property
    def encoder(self) -> Encoder:
        """Loaded only when something has to be embedded (stored embeddings need no model)."""
        if self._encoder is None:
            self._encoder = Encoder(self.source, self.threads)
        return self._encoder

    def _target_centre(self, target: Target, store: ArtefactStore, progress: Progress) -> tuple[np.ndarray, dict]:
        key = digest("selection-encoder-centre", self.source.identity, target.full.fingerprint, TARGET_SENTENCES,
                     MAX_LENGTH)

        def build(out: Path) -> dict[str, Any]:
            texts = [t for t in target.raw_texts(TARGET_SENTENCES) if t.strip()]
            if not texts:
                raise SimcoreError(f"{target.name}: the target has no text to embed")
            progress(f"encoder: embedding {len(texts):,} target sentences", 0.0)
            centre = self.encoder.embed(texts).mean(axis=0)
            np.save(out / "centre.npy", centre / (np.linalg.norm(centre) or 1.0))
            return {"sentences": len(texts), "device": self.encoder.device}

        path = store.build("selection-encoder-centre", key, build)
        return np.load(path / "centre.npy").astype(np.float64), store.meta(path)

    def _pool_embeddings(self, options: SelectionOptions, pool: Corpus, pool_fp: str, store: ArtefactStore,
                         progress: Progress) -> Path:
        key = digest("selection-encoder-embeddings", pool_fp, self.source.identity, MAX_LENGTH)

        def build(out: Path) -> dict[str, Any]:
            encoder = self.encoder
            started, n, where = time.perf_counter(), 0, PoolPosition()
            with open(out / "embeddings.f32", "wb") as f:
                for batch in pool_batches(pool, options.tokenizer, options.batch, where):
                    f.write(encoder.embed(batch.texts).tobytes())
                    n += len(batch.texts)
                    rate = n / max(time.perf_counter() - started, 1e-9)
                    progress(f"encoder: embedded {n:,} sentences ({rate:,.0f}/s, {encoder.device})", where.value)
            seconds = time.perf_counter() - started
            return {"n": n, "dims": encoder.dims, "seconds": seconds, "rate": n / max(seconds, 1e-9),
                    "device": encoder.device, "encoder": self.source.name}

        return store.build("selection-encoder-embeddings", key, build)

    def score(self, batch: Batch) -> np.ndarray:
        rows = self.embeddings[batch.start:batch.start + len(batch.texts)]
        if rows.shape[0] != len(batch.texts):
            raise SimcoreError("the pool changed while it was being scored; run again")
        return np.asarray(rows, dtype=np.float64) @ self.centre

    def details(self) -> dict[str, Any]:
        details = {"encoder": self.source.name, "adapted": bool(self.adaptation),
                   "device": self.pool_meta.get("device"), "pool_pass_seconds": self.pool_meta.get("seconds", 0.0),
                   "embedding_rate": self.pool_meta.get("rate"), "target_sentences": self.target_meta["sentences"]}
        if self.adaptation:
            details["adaptation"] = {k: self.adaptation[k] for k in (
                "steps", "seconds", "held_out_loss_before", "held_out_loss_after", "train_sentences")}
        return details

