"""Uncertainty of every value: a bootstrap over the target's sentences, paired across sources.

Replicate ``r`` resamples the target's sentences with replacement (multinomial counts per
sentence, drawn from a generator seeded by the target's fingerprint and the seed option). Every
source and every measure sees the same resampled targets, so within one replicate two sources are
compared on exactly the same data: the share of replicates in which a source stays first is a
paired, honest measure of how sure a ranking is.

The measures keep what makes this cheap: per-sentence log-probabilities (PPL), the
sentence × type incidence (TVC, TVcC) and the sentence × n-gram counts (JSD). WVV cannot be
retrained per replicate; its replicates resample the words its mean runs over.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

if TYPE_CHECKING:
    from .prepared import PreparedTarget

_CHUNK_CELLS = 8_000_000  # floats in one (items × replicates) block, about 64 MB


def _generator(fingerprint: str, seed: int, salt: int = 0) -> np.random.Generator:
    return np.random.default_rng([seed, salt, int(fingerprint[:15], 16)])


def sentence_weights(target: PreparedTarget) -> np.ndarray:
    """(replicates × sentences) counts: how often each target sentence is drawn in each replicate."""
    def build() -> np.ndarray:
        n, b = len(target.sentences), target.options.bootstrap
        if n == 0 or b == 0:
            return np.zeros((b, n), dtype=np.float32)
        rng = _generator(target.fingerprint, target.options.seed)
        return rng.multinomial(n, np.full(n, 1.0 / n), size=b).astype(np.float32)

    # drawn once per target and shared by every source and measure (multinomial draws cost ~0.3 s at 4k sentences)
    weights = target.cached("sentence_weights", build)
    weights.flags.writeable = False
    return weights


def item_weights(fingerprint: str, seed: int, n_items: int, replicates: int) -> np.ndarray:
    """(replicates × items) counts for resampling ``n_items`` things (WVV's words) with replacement."""
    if n_items == 0 or replicates == 0:
        return np.zeros((replicates, n_items), dtype=np.float32)
    rng = _generator(fingerprint, seed, salt=1)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=replicates).astype(np.float32)


def replicate_blocks(weights: np.ndarray, incidence: sparse.spmatrix) -> Iterator[np.ndarray]:
    """(items × some replicates) weighted column sums of ``incidence``, a block of replicates at a time."""
    items = max(1, incidence.shape[1])
    step = max(1, _CHUNK_CELLS // items)
    transposed = incidence.T.tocsr()
    for start in range(0, weights.shape[0], step):
        yield np.asarray(transposed @ weights[start:start + step].T)


def type_incidence(target: PreparedTarget) -> sparse.csr_matrix:
    """Sentence × type matrix (1 where the type occurs), columns in ``target.types()`` order."""
    def build() -> sparse.csr_matrix:
        index = {t: i for i, t in enumerate(target.types())}
        rows, cols = [], []
        for s, sentence in enumerate(target.sentences):
            for t in set(sentence):
                rows.append(s)
                cols.append(index[t])
        data = np.ones(len(rows), dtype=np.float32)
        return sparse.csr_matrix((data, (rows, cols)), shape=(len(target.sentences), len(index)))

    return target.cached("type_incidence", build)


def coverage_replicates(target: PreparedTarget, words: Sequence[str], covered: np.ndarray) -> np.ndarray:
    """TVC of each replicate: the covered share of those ``words`` present in the resampled target."""
    index = target.cached("type_index", lambda: {t: i for i, t in enumerate(target.types())})
    columns = np.array([index.get(w, -1) for w in words], dtype=np.int64)
    known = columns >= 0
    covered = np.asarray(covered, dtype=bool)[known]
    out = []
    for counts in replicate_blocks(sentence_weights(target), type_incidence(target)[:, columns[known]]):
        present = counts > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append((present & covered[:, None]).sum(axis=0) / present.sum(axis=0))
    return np.concatenate(out) if out else np.zeros(0)


def interval(replicates: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The central ``level`` percentile interval of the finite replicates (NaN when there are none)."""
    values = np.asarray(replicates, dtype=float)
    values = values[np.isfinite(values)]
    if values.size < 2:
        return (math.nan, math.nan)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))


def centred(replicates: Sequence[float] | None, value: float) -> list[float] | None:
    """Replicates shifted so that their mean is the value (the bootstrap's bias correction).

    Resampling sentences with replacement leaves out about a third of them, so a resampled target
    has fewer rare words: TVC rises and JSD falls in every replicate. The shift removes that bias
    and keeps the spread, so intervals sit around the value and replicate rankings agree with it.
    """
    if replicates is None or not math.isfinite(value):
        return None if replicates is None else list(replicates)
    values = np.asarray(replicates, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return values.tolist()
    return (values - (finite.mean() - value)).tolist()


def pool_samples(per_sample: Sequence[Sequence[float] | None]) -> list[float] | None:
    """One replicate list for k source samples: replicate r comes from sample r mod k.

    Each sample's replicates carry the target-side noise; taking them in turn from the k samples
    adds the spread between source sub-corpora, and keeps replicate r paired across sources.
    """
    present = [list(p) for p in per_sample if p is not None and len(p)]
    if not present:
        return None
    n = min(len(p) for p in present)
    return [present[r % len(present)][r] for r in range(n)]
