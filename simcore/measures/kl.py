"""KL divergence between hashed 1-2-gram distributions: DSIR's featurizer (Xie et al. 2023).

DSIR (p-lambda/dsir, ``hashed_ngram_dsir.py``) lower-cases a text, splits it with NLTK's
WordPunct pattern ``\\w+|[^\\w\\s]+``, and counts every unigram and every bigram (words joined by one
space) in bucket ``int(sha256(ngram.encode()).hexdigest(), 16) % 10000``. With p_t and p_s the
normalised bucket counts of the target and the source,

    KL(t‖s) = Σ_b p_t(b) · (ln(p_t(b) + 1e-10) − ln(p_s(b) + 1e-10))    (lower = more similar)

and the paper's "KL reduction" is KL(t‖reference) − KL(t‖s), here with the union of the sources as
the reference (:func:`kl_reduction`).

simcore's units are already tokenized, so a unit is featurized as its tokens joined by spaces. On
text split the way the corpus already is (CoNLL targets), that is exactly DSIR's input; on raw
text it differs only where simcore's tokenizer splits inside a WordPunct token (``don't`` becomes
``do n't``, hence ``do n ' t`` instead of ``don ' t``; ``.)`` becomes ``. )``). Bigrams never cross
a unit, as DSIR's never cross a line. Each distinct n-gram is hashed once (memoised), so the
published SHA-256 costs little.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from ..utils.store import digest
from .prepared import PreparedSource, PreparedTarget, Score
from .registry import LOWER, Measure, register
from .uncertainty import replicate_blocks, sentence_weights

WORDPUNCT = re.compile(r"\w+|[^\w\s]+")  # nltk.tokenize.WordPunctTokenizer's pattern
EPSILON = 1e-10
FEATURIZER_VERSION = 1


def bucket_of(ngram: str, buckets: int) -> int:
    """DSIR's bucket of one n-gram (words joined by one space)."""
    return int(hashlib.sha256(ngram.encode("utf-8")).hexdigest(), 16) % buckets


class Featurizer:
    """Bucket ids of a unit's unigrams and bigrams, with each distinct n-gram hashed once."""

    def __init__(self, buckets: int) -> None:
        self.buckets = buckets
        self._memo: dict[str, int] = {}

    def bucket(self, ngram: str) -> int:
        b = self._memo.get(ngram)
        if b is None:
            b = self._memo[ngram] = bucket_of(ngram, self.buckets)
        return b

    def words(self, tokens: list[str]) -> list[str]:
        return WORDPUNCT.findall(" ".join(tokens).lower())

    def ngrams(self, tokens: list[str]) -> list[str]:
        """The unit's unigrams, then its bigrams (DSIR's order)."""
        words = self.words(tokens)
        return words + [f"{a} {b}" for a, b in zip(words, words[1:])]

    def unit(self, tokens: list[str]) -> list[int]:
        bucket = self.bucket
        return [bucket(g) for g in self.ngrams(tokens)]

    def counts(self, units: Iterable[list[str]]) -> np.ndarray:
        """Bucket counts over all units."""
        total = np.zeros(self.buckets, dtype=np.int64)
        batch: list[int] = []
        for tokens in units:
            batch.extend(self.unit(tokens))
            if len(batch) > 1_000_000:
                total += np.bincount(batch, minlength=self.buckets)
                batch = []
        if batch:
            total += np.bincount(batch, minlength=self.buckets)
        return total

    def incidence(self, units: list[list[str]]) -> sparse.csr_matrix:
        """Unit × bucket counts."""
        rows, cols = [], []
        for i, tokens in enumerate(units):
            ids = self.unit(tokens)
            cols.extend(ids)
            rows.extend([i] * len(ids))
        data = np.ones(len(cols), dtype=np.float64)
        m = sparse.csr_matrix((data, (rows, cols)), shape=(len(units), self.buckets))
        m.sum_duplicates()
        return m


def divergence(p_target: np.ndarray, p_source: np.ndarray) -> float | np.ndarray:
    """KL(t‖s) as DSIR smooths it; ``p_target`` may hold one distribution per row."""
    terms = p_target * (np.log(p_target + EPSILON) - np.log(p_source + EPSILON))
    return terms.sum(axis=-1)


def _normalised(counts: np.ndarray) -> np.ndarray:
    total = counts.sum()
    return counts / total if total else counts.astype(np.float64)


def source_counts(source: PreparedSource) -> np.ndarray:
    """The source sample's bucket counts (stored per sample fingerprint and bucket count)."""
    buckets = source.options.kl_buckets
    key = digest("kl-buckets", FEATURIZER_VERSION, source.sample.fingerprint, buckets)

    def build(out: Path) -> dict[str, Any]:
        if source.progress:
            source.progress(f"hashing the 1-2-grams of {source.name}", 0.0)
        counts = Featurizer(buckets).counts(source.sample.sentences())
        np.save(out / "counts.npy", counts)
        return {"buckets": buckets, "ngrams": int(counts.sum())}

    def load() -> np.ndarray:
        path = source.store.build("kl-buckets", key, build)
        return np.load(path / "counts.npy", allow_pickle=False)

    return source.cached(f"kl_counts_{buckets}", load)


def target_incidence(target: PreparedTarget) -> sparse.csr_matrix:
    """The target's sentence × bucket counts (kept with the target)."""
    buckets = target.options.kl_buckets
    return target.cached(f"kl_incidence_{buckets}", lambda: Featurizer(buckets).incidence(target.sentences))


def target_counts(target: PreparedTarget) -> np.ndarray:
    return np.asarray(target_incidence(target).sum(axis=0)).ravel().round().astype(np.int64)


def kl_replicates(p_source: np.ndarray, target: PreparedTarget) -> np.ndarray:
    """KL of each bootstrap replicate of the target (the same resampled sentences as every measure)."""
    weights = sentence_weights(target)
    out = []
    log_s = np.log(p_source + EPSILON)
    for counts in replicate_blocks(weights, target_incidence(target)):  # buckets × replicates
        totals = counts.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = counts / totals
        out.append((p * (np.log(p + EPSILON) - log_s[:, None])).sum(axis=0))
    return np.concatenate(out) if out else np.zeros(0)


def bucket_ngrams(target: PreparedTarget, per_bucket: int = 3) -> dict[int, list[str]]:
    """The target's most frequent n-grams in each bucket, to name what a bucket stands for."""
    buckets = target.options.kl_buckets

    def build() -> dict[int, list[str]]:
        from collections import Counter

        featurizer = Featurizer(buckets)
        freq = Counter(g for s in target.sentences for g in featurizer.ngrams(s))
        named: dict[int, list[str]] = {}
        for gram, _n in freq.most_common():
            names = named.setdefault(featurizer.bucket(gram), [])
            if len(names) < per_bucket:
                names.append(gram)
        return named

    return target.cached(f"kl_bucket_names_{buckets}", build)


def contributing_buckets(source: PreparedSource, target: PreparedTarget, top: int = 25) -> list[dict]:
    """The buckets that add most to KL(t‖s), with the target n-grams that fill them."""
    p_t, p_s = _normalised(target_counts(target)), _normalised(source_counts(source))
    terms = p_t * (np.log(p_t + EPSILON) - np.log(p_s + EPSILON))
    names = bucket_ngrams(target)
    order = np.argsort(-terms, kind="stable")[:top]
    return [{"bucket": int(b), "ngrams": " | ".join(names.get(int(b), [])), "target_share": float(p_t[b]),
             "source_share": float(p_s[b]), "contribution": float(terms[b])} for b in order]


def kl_reduction(sources: list[PreparedSource], target: PreparedTarget) -> dict[str, float]:
    """DSIR's KL reduction of each source: KL(t‖union of the sources) − KL(t‖source)."""
    counts = {s.name: source_counts(s) for s in sources}
    p_t = _normalised(target_counts(target))
    reference = float(divergence(p_t, _normalised(sum(counts.values()))))
    return {name: reference - float(divergence(p_t, _normalised(c))) for name, c in counts.items()}


class HashedNgramKL(Measure):
    name = "kl"
    label = "KL"
    direction = LOWER
    option_names = ("kl_buckets",)
    description = "KL(target‖source) of hashed 1-2-gram distributions (DSIR's featurizer; 0 = same)"
    gloss = "divergence of word distributions"
    reliable_tokens = 100_000
    size_ladder = True  # a smaller source leaves more target buckets empty: pairs also meet at larger sizes
    noise_when_small = False
    unit = "nats"  # natural logarithms, as DSIR's
    cost = 2.0
    drill_title = "Hashed n-gram buckets adding most to the KL"

    def prepare(self, source: PreparedSource) -> None:
        source_counts(source)

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        s_counts, t_counts = source_counts(source), target_counts(target)
        p_s, p_t = _normalised(s_counts), _normalised(t_counts)
        value = float(divergence(p_t, p_s))
        details: dict[str, Any] = {
            "buckets": int(len(p_s)), "target_ngrams": int(t_counts.sum()), "source_ngrams": int(s_counts.sum()),
            "target_mass_in_empty_source_buckets": float(p_t[s_counts == 0].sum()),
            "top_buckets": [{k: r[k] for k in ("ngrams", "contribution")}
                            for r in contributing_buckets(source, target, top=5)],
        }
        replicates = kl_replicates(p_s, target)
        return Score(value, details, replicates.tolist())

    def drill(self, source: PreparedSource, target: PreparedTarget, top: int) -> Any:
        import pandas as pd

        return pd.DataFrame(contributing_buckets(source, target, top))


register(HashedNgramKL())
