"""Encoder centroid cosine: the cosine between the mean sentence embeddings of source and target.

Aharoni & Goldberg (2020) and Poth et al. (2021, "SEmb"): each side's sentences are embedded with a
sentence encoder (mean-pooled last layer, L2-normalised: the bundled all-MiniLM-L6-v2 that the
selection package uses, on the GPU when there is one), averaged into a centroid, and the two
centroids compared by cosine (higher = more similar). At most ``emb_sentences`` sentences per side
are embedded, drawn at random (seeded) from the source sample and from the target; the source's
embeddings are stored per source sample, the target's per target. Both sides are embedded from
their normalised tokens joined by spaces (the encoder is uncased), so the two sides are treated alike.

The bootstrap resamples the target's sentences as every other measure does (the same replicates):
replicate r's target centroid weighs each embedded sentence by how often replicate r drew it.
Without torch, transformers and the model package the measure is unavailable (MeasureUnavailable).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.lang.detect import language_name
from ..utils.errors import MeasureUnavailable, SimcoreError
from ..utils.store import ArtefactStore, digest
from .prepared import PreparedSource, PreparedTarget, Score
from .registry import HIGHER, Measure, register
from .uncertainty import sentence_weights

EMBEDDING_VERSION = 1
# Sentences a second the encoder embeds on a CPU before this machine has a rate of its own: measured on
# 1,000 news_1bwb lines (about 27 tokens each) on a busy 2-core machine (28.9/s; 5 s to load the model).
DEFAULT_CPU_RATE = 29.0
MODEL_LOAD_SECONDS = 5.0  # loading the encoder, once per computation


def require_encoder() -> None:
    """MeasureUnavailable (one line, how to install) unless the encoder and its model are installed."""
    from ..models.sentence_encoder import BUNDLED_NAME, INSTALL_HINT, encoder_installed

    if not encoder_installed():
        raise MeasureUnavailable(f"EMB needs the sentence encoder ({BUNDLED_NAME}), which is not installed: "
                                 f"{INSTALL_HINT}")


@functools.lru_cache(maxsize=2)
def _loaded_encoder(root: str) -> Any:
    from ..models.sentence_encoder import Encoder, bundled_encoder

    return Encoder(bundled_encoder(ArtefactStore(root)))


def _identity(store: ArtefactStore) -> str:
    from ..models.sentence_encoder import MAX_LENGTH, bundled_encoder

    return digest(bundled_encoder(store).identity, MAX_LENGTH)


def chosen(n: int, limit: int, fingerprint: str, seed: int) -> np.ndarray:
    """Sorted indices of at most ``limit`` of ``n`` sentences, drawn without replacement (seeded)."""
    if n <= limit:
        return np.arange(n)
    rng = np.random.default_rng([seed, 7, int(fingerprint[:15], 16)])
    return np.sort(rng.choice(n, size=limit, replace=False))


def _embedded(store: ArtefactStore, kind: str, fingerprint: str, sentences: list[list[str]], limit: int,
              seed: int, progress: Any = None, name: str = "") -> tuple[np.ndarray, np.ndarray, dict]:
    """(indices of the embedded sentences, their embeddings, meta), stored under ``kind``."""
    require_encoder()
    key = digest(kind, EMBEDDING_VERSION, fingerprint, _identity(store), limit, seed)

    def build(out: Path) -> dict[str, Any]:
        idx = chosen(len(sentences), limit, fingerprint, seed)
        texts = [" ".join(sentences[i]) for i in idx]
        if progress:
            progress(f"EMB: embedding {len(texts):,} sentences of {name}", 0.0)
        encoder = _loaded_encoder(str(store.root))
        started = time.perf_counter()
        vectors = encoder.embed(texts) if texts else np.zeros((0, encoder.dims), dtype=np.float32)
        seconds = time.perf_counter() - started
        np.save(out / "index.npy", idx.astype(np.int64))
        np.save(out / "vectors.npy", vectors.astype(np.float32))
        return {"sentences": len(texts), "device": encoder.device, "seconds": round(seconds, 3)}

    path = store.build(kind, key, build)
    return (np.load(path / "index.npy", allow_pickle=False), np.load(path / "vectors.npy", allow_pickle=False),
            store.meta(path))


def recorded_rate(store: ArtefactStore, latest: int = 20) -> tuple[str, float] | None:
    """(device, sentences a second) over this store's latest embedding runs on the device used last, read
    from their stored details; None before any run of 50 sentences or more."""
    runs = []
    for kind in ("emb-source", "emb-target"):
        folder = store.root / kind
        if folder.is_dir():
            runs += [p for p in folder.iterdir() if p.is_dir()]
    runs.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    device, sentences, seconds = None, 0, 0.0
    for path in runs[:latest]:
        try:
            meta = store.meta(path)
        except (OSError, ValueError, KeyError):
            continue
        if int(meta.get("sentences", 0)) < 50 or float(meta.get("seconds", 0)) <= 0:
            continue
        device = device or str(meta.get("device", "cpu"))
        if meta.get("device", "cpu") == device:
            sentences, seconds = sentences + int(meta["sentences"]), seconds + float(meta["seconds"])
    return (device, sentences / seconds) if device and seconds > 0 else None


def _english(language: str) -> bool:
    """Whether the bundled encoder can read a corpus of this (working) language: it knows English only."""
    return language == "en"


@dataclass(frozen=True)
class EmbEstimate:
    """How long EMB will take to embed its sentences, before it runs."""

    seconds_per_corpus: float
    seconds: float
    device: str
    rate: float  # sentences a second
    measured: bool  # True: this machine's own pace; False: DEFAULT_CPU_RATE

    def text(self, span: Any = lambda s: f"{s:,.0f} s") -> str:
        where = "this machine's pace" if self.measured else "measured on a 2-core machine"
        return (f"EMB on the {self.device.upper() if self.device != 'cpu' else 'CPU'}: about {self.rate:,.0f} "
                f"sentences a second ({where}), so about {span(self.seconds_per_corpus)} for each source and target "
                f"not embedded yet, about {span(self.seconds)} in all")


def estimate(store: ArtefactStore | None, corpora: int, sentences: int) -> EmbEstimate:
    """The time to embed ``sentences`` per side for ``corpora`` sources and targets (an upper bound:
    smaller corpora have fewer, and stored embeddings are reused), from the pace this machine recorded
    (on the device it used last) or, before any run, DEFAULT_CPU_RATE."""
    found = recorded_rate(store) if store is not None else None
    device, rate = found or ("cpu", DEFAULT_CPU_RATE)
    measured = found is not None
    per = max(0, int(sentences)) / rate
    corpora = max(0, int(corpora))
    return EmbEstimate(per, per * corpora + (MODEL_LOAD_SECONDS if corpora else 0.0), device, rate, measured)


def source_vectors(source: PreparedSource) -> np.ndarray:
    """The embeddings of (at most ``emb_sentences``) sentences of the source sample."""
    limit, seed = source.options.emb_sentences, source.options.seed

    def load() -> np.ndarray:
        sentences = list(source.sample.sentences())
        return _embedded(source.store, "emb-source", source.sample.fingerprint, sentences, limit, seed,
                         source.progress, source.name)[1]

    return source.cached(f"emb_{limit}_{seed}", load)


def target_vectors(target: PreparedTarget) -> tuple[np.ndarray, np.ndarray]:
    """(indices into the target's sentences, their embeddings)."""
    limit, seed = target.options.emb_sentences, target.options.seed
    return target.cached(f"emb_{limit}_{seed}", lambda: _embedded(
        target.store, "emb-target", target.fingerprint, target.sentences, limit, seed, None, target.name)[:2])


def cosine(a: np.ndarray, b: np.ndarray) -> float | np.ndarray:
    """Cosine between ``a`` (one vector or one per row) and the vector ``b``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a @ b) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b))


def _source_centroid(source: PreparedSource) -> np.ndarray:
    vectors = source_vectors(source)
    if not len(vectors):
        raise SimcoreError(f"{source.name}: the source sample has no sentences to embed")
    return vectors.astype(np.float64).mean(axis=0)


def farthest_sentences(source: PreparedSource, target: PreparedTarget, top: int = 20) -> list[dict]:
    """The embedded target sentences least like the source's centroid (lowest cosine)."""
    centre = _source_centroid(source)
    idx, vectors = target_vectors(target)
    sims = cosine(vectors.astype(np.float64), centre)
    order = np.argsort(sims, kind="stable")[:top]
    return [{"cosine": float(sims[i]), "sentence": " ".join(target.sentences[int(idx[i])]), "index": int(idx[i])}
            for i in order]


class EncoderCentroidCosine(Measure):
    name = "emb"
    label = "EMB"
    direction = HIGHER
    option_names = ("emb_sentences",)
    description = "cosine between the mean all-MiniLM-L6-v2 sentence embeddings of source and target"
    gloss = "closeness of the mean sentence meanings"
    reliable_tokens = 100_000
    size_ladder = False  # at most emb_sentences sentences per side, whatever the source's size
    noise_when_small = False
    unit = "cosine, -1 to 1"
    cost = 30.0
    drill_title = "Target sentences farthest from the source's centroid"

    def prepare(self, source: PreparedSource) -> None:
        if _english(source.language):
            source_vectors(source)

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        for side, language in (("target", target.language), ("source", source.language)):
            if not _english(language):
                from ..models.sentence_encoder import BUNDLED_NAME

                raise MeasureUnavailable(f"EMB not computed: its encoder ({BUNDLED_NAME}) was trained on English "
                                         f"text and the {side} is in {language_name(language)}")
        centre = _source_centroid(source)
        idx, vectors = target_vectors(target)
        if not len(vectors):
            return Score(float("nan"), {"note": "the target has no sentences to embed"})
        vectors = vectors.astype(np.float64)
        value = float(cosine(vectors.mean(axis=0), centre))
        weights = sentence_weights(target)[:, idx].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            centroids = (weights @ vectors) / weights.sum(axis=1, keepdims=True)
        replicates = cosine(centroids, centre)
        details = {"source_sentences": int(len(source_vectors(source))), "target_sentences": int(len(idx)),
                   "farthest": [{k: r[k] for k in ("cosine", "sentence")}
                                for r in farthest_sentences(source, target, top=3)]}
        return Score(value, details, np.asarray(replicates, dtype=float).tolist())

    def drill(self, source: PreparedSource, target: PreparedTarget, top: int) -> Any:
        import pandas as pd

        return pd.DataFrame(farthest_sentences(source, target, top))[["cosine", "sentence"]]


register(EncoderCentroidCosine())
