"""Jensen-Shannon divergence between source and target 1..n-gram distributions (log base 2).

With P the source's and Q the target's relative frequencies over one pooled distribution of all
1..n-grams, and M = (P + Q) / 2, JSD = ½ KL(P‖M) + ½ KL(Q‖M). An n-gram found on one side only
contributes half its probability, so only the target's n-grams need visiting:
JSD = ½ (1 − ΣP_shared) + ½ Σ_{Q only} q + Σ_shared [½ p log2(2p/(p+q)) + ½ q log2(2q/(p+q))].
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from .counts import ngram_keys_by_sentence, ngram_names, order_of
from .prepared import PreparedSource, PreparedTarget, Score
from .registry import LM, LOWER, Measure, register
from .uncertainty import replicate_blocks, sentence_weights


def _terms(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-n-gram contributions to the JSD; p or q may be 0."""
    m = (p + q) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(p > 0, 0.5 * p * np.log2(p / m), 0.0)
        right = np.where(q > 0, 0.5 * q * np.log2(q / m), 0.0)
    return left + right


def divergence(source_counts: np.ndarray, source_total: int, target_counts: np.ndarray,
               target_total: int) -> float:
    """JSD given the source counts of the target's n-grams (0 where absent)."""
    p = source_counts / source_total
    q = target_counts / target_total
    source_only = 0.5 * (1.0 - p.sum())
    return float(max(0.0, min(1.0, source_only + _terms(p, q).sum())))


def divergence_replicates(p_counts: np.ndarray, source_total: int, incidence: sparse.csc_matrix,
                          weights: np.ndarray) -> np.ndarray:
    """JSD on each replicate of the target; ``incidence`` counts each target n-gram in each sentence.

    Only n-grams the source has need logarithms: the rest contribute half their target share, which
    is half of what the shared ones leave of 1. So the work grows with the shared n-grams.
    """
    shared = np.flatnonzero(p_counts > 0)
    p = (p_counts[shared] / source_total)[:, None]
    totals = weights.astype(np.float64) @ np.asarray(incidence.sum(axis=1), dtype=np.float64).ravel()
    out, start = [], 0
    for counts in replicate_blocks(weights, incidence[:, shared]):
        q = counts.astype(np.float64) / totals[start:start + counts.shape[1]]
        start += counts.shape[1]
        m = (p + q) / 2
        left = 0.5 * p * np.log2(p / m)
        right = np.zeros_like(q)
        np.log2(q / m, out=right, where=q > 0)
        shared_terms = left.sum(axis=0) + (0.5 * q * right).sum(axis=0)
        value = 0.5 * (1.0 - p.sum()) + 0.5 * (1.0 - q.sum(axis=0)) + shared_terms
        out.append(np.clip(value, 0.0, 1.0))
    return np.concatenate(out) if out else np.zeros(0)


def sentence_ngrams(target: PreparedTarget, keys: np.ndarray, max_n: int) -> sparse.csc_matrix:
    """Sentence × n-gram counts for the target's n-grams ``keys`` (sorted) of order up to ``max_n``."""
    def build() -> sparse.csc_matrix:
        flat = [t for sentence in target.sentences for t in sentence]
        lengths = np.fromiter((len(s) for s in target.sentences), dtype=np.int64, count=len(target.sentences))
        all_keys, owner = ngram_keys_by_sentence(target.hasher(flat), lengths, max_n)
        column = np.searchsorted(keys, all_keys)
        data = np.ones(len(all_keys), dtype=np.float32)
        return sparse.csc_matrix((data, (owner, column)), shape=(len(lengths), len(keys)))

    return target.cached(f"sentence_ngrams_{max_n}", build)


def _aligned(source: PreparedSource, target: PreparedTarget, max_n: int):
    tc = target.counts()
    keep = order_of(tc.keys) <= max_n
    keys, q_counts = tc.keys[keep], tc.counts[keep]
    p_counts = source.counts().lookup(keys)
    return keys, p_counts, q_counts


class JensenShannonDivergence(Measure):
    name = "jsd"
    label = "JSD"
    direction = LOWER
    option_names = ("jsd_max_n",)
    description = "Jensen-Shannon divergence of 1..3-gram distributions (0 same, 1 disjoint)"
    gloss = "divergence of word and phrase distributions"
    reliable_tokens = 100_000
    size_ladder = True  # pairs of sources also meet at larger common sizes (simcore.matrix.ladder)
    noise_when_small = False
    unit = "bits, 0 to 1"
    value_range = (0.0, 1.0)
    default_rank = 5
    family, family_rank = LM, 2
    cost = 2.0
    size_direction, size_why = -1, "sparser n-gram counts diverge more"
    drill_title = "N-grams contributing most to the divergence"

    def prepare(self, source: PreparedSource) -> None:
        source.counts()

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        max_n = target.options.jsd_max_n
        keys, p_counts, q_counts = _aligned(source, target, max_n)
        s_totals, t_totals = source.counts().totals, target.counts().totals
        value = divergence(p_counts, sum(s_totals[n] for n in range(1, max_n + 1)), q_counts,
                           sum(t_totals[n] for n in range(1, max_n + 1)))
        orders = order_of(keys)
        details = {}
        for n in range(1, max_n + 1):
            mask = orders == n
            details[f"jsd_{n}"] = divergence(p_counts[mask], s_totals[n], q_counts[mask], t_totals[n])
        details["shared_ngrams"] = int((p_counts > 0).sum())
        replicates = divergence_replicates(p_counts, sum(s_totals[n] for n in range(1, max_n + 1)),
                                           sentence_ngrams(target, keys, max_n), sentence_weights(target))
        return Score(value, details, replicates.tolist())

    def drill(self, source: PreparedSource, target: PreparedTarget, top: int) -> Any:
        import pandas as pd

        return pd.DataFrame(divergent_ngrams(source, target, top))


def divergent_ngrams(source: PreparedSource, target: PreparedTarget, top: int = 30) -> list[dict]:
    """The n-grams that contribute most to the divergence, named where they can be.

    Target n-grams are always named; n-grams found only in the source are named when they are
    among the source's most frequent.
    """
    max_n = target.options.jsd_max_n
    keys, p_counts, q_counts = _aligned(source, target, max_n)
    s_total = sum(source.counts().totals[n] for n in range(1, max_n + 1))
    t_total = sum(target.counts().totals[n] for n in range(1, max_n + 1))
    p, q = p_counts / s_total, q_counts / t_total
    contrib = _terms(p, q)
    names = target.cached(f"ngram_names_{max_n}", lambda: ngram_names(target.sentences, max_n))
    rows = [
        {"ngram": names.get(int(k), "?"), "source_share": float(a), "target_share": float(b),
         "contribution": float(c), "more_in": "target" if b > a else "source"}
        for k, a, b, c in zip(keys.tolist(), p, q, contrib)
    ]
    counts = source.counts()
    target_keys = set(keys.tolist())
    for key, text in counts.names.items():
        if key not in target_keys and order_of(np.array([key], dtype=np.uint64))[0] <= max_n:
            share = float(counts.lookup(np.array([key], dtype=np.uint64))[0]) / s_total
            rows.append({"ngram": text, "source_share": share, "target_share": 0.0,
                         "contribution": 0.5 * share, "more_in": "source"})
    rows.sort(key=lambda r: -r["contribution"])
    return rows[:top]


register(JensenShannonDivergence())
