"""Perplexity of the target under a KenLM n-gram model of the source.

The model is modified Kneser-Ney, estimated with ``lmplz`` (order 5 by default,
``--discount_fallback`` for small sources) and queried with the ``kenlm`` module. Corpus-level
perplexity is 10^(−Σ log10 p / N) over every target word and each sentence's ``</s>``, with
out-of-vocabulary words scored as ``<unk>`` — what KenLM's ``query`` reports as "Perplexity
including OOVs". The OOV rate is reported with it.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..models.kenlm_tools import estimate
from ..utils import pace
from ..utils.store import digest
from .prepared import PreparedSource, PreparedTarget, Score
from .registry import LM, LOWER, Measure, register
from .uncertainty import sentence_weights


def model_path(source: PreparedSource) -> Path:
    """The stored binary model of the source sample, estimated on first use."""
    order, memory = source.options.ppl_order, source.options.ppl_memory
    key = digest("kenlm", source.sample.fingerprint, order)

    def build(out: Path) -> dict[str, Any]:
        if source.progress:
            source.progress(f"estimating an order-{order} KenLM model of {source.name}", 0.0)
        began = time.perf_counter()
        estimate(source.sample.tokens_file, out / "model.bin", order, memory, source.name)
        pace.record(source.store, "kenlm", source.sample.n_tokens, time.perf_counter() - began,
                    measure_contention=True)
        return {"order": order}

    return source.store.build("kenlm", key, build) / "model.bin"


def load_model(source: PreparedSource) -> Any:
    import kenlm

    return source.cached("kenlm", lambda: kenlm.Model(str(model_path(source))))


def sentence_scores(model: Any, sentence: list[str]) -> tuple[float, int, int]:
    """(Σ log10 p, scored tokens including </s>, OOV words) of one sentence."""
    total, oov, n = 0.0, 0, 0
    for logprob, _length, is_oov in model.full_scores(" ".join(sentence), bos=True, eos=True):
        total += logprob
        oov += is_oov
        n += 1
    return total, n, oov


class Perplexity(Measure):
    name = "ppl"
    label = "PPL"
    direction = LOWER
    option_names = ("ppl_order", "ppl_per_sentence")
    description = "perplexity of the target under a KenLM model of the source"
    gloss = "how surprised a language model of the source is by the target's text"
    reliable_tokens = 100_000
    size_ladder = True  # pairs of sources also meet at larger common sizes (simcore.matrix.ladder)
    noise_when_small = False
    unit = "perplexity per word"
    value_range = (0.0, math.inf)
    default_rank = 3
    family, family_rank = LM, 1
    cost = 3.0
    own_task = True  # a KenLM model per source sample
    size_direction = +1
    size_why = ("a smaller model has a smaller vocabulary, so more target words become <unk>, which it "
                "predicts cheaply")
    drill_title = "Target sentences the source's language model finds least likely"

    def prepare(self, source: PreparedSource) -> None:
        model_path(source)

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        model = load_model(source)
        scored = np.array([sentence_scores(model, sentence) for sentence in target.sentences], dtype=float)
        logs, counts, oovs = scored.T if len(scored) else (np.zeros(0),) * 3
        log_total, tokens, oov = float(logs.sum()), int(counts.sum()), int(oovs.sum())
        per_sentence = 10 ** (-logs / counts)
        corpus_ppl = 10 ** (-log_total / tokens)
        words = tokens - len(target.sentences)
        details = {"oov_rate": oov / words if words else float("nan"), "oov": oov, "tokens": tokens,
                   "corpus_ppl": corpus_ppl, "mean_sentence_ppl": float(per_sentence.mean())}
        if oov == words:
            details["note"] = "every target word is out of the source's vocabulary (OOV rate 100%)"
        weights = sentence_weights(target)
        if target.options.ppl_per_sentence:
            value = details["mean_sentence_ppl"]
            replicates = (weights @ per_sentence) / weights.sum(axis=1)
        else:
            value = corpus_ppl
            replicates = 10 ** (-(weights @ logs) / (weights @ counts))
        return Score(value if math.isfinite(value) else float("inf"), details, replicates.tolist())

    def drill(self, source: PreparedSource, target: PreparedTarget, top: int) -> Any:
        import pandas as pd

        return pd.DataFrame(least_likely_sentences(source, target, top))[["perplexity", "oov", "sentence"]]


def least_likely_sentences(source: PreparedSource, target: PreparedTarget, top: int = 20) -> list[dict]:
    """Target sentences the source's model finds least likely (highest perplexity)."""
    model = load_model(source)
    rows = []
    for i, sentence in enumerate(target.sentences):
        s_log, s_n, s_oov = sentence_scores(model, sentence)
        rows.append({"sentence": " ".join(sentence), "perplexity": 10 ** (-s_log / s_n), "oov": s_oov, "index": i})
    rows.sort(key=lambda r: -r["perplexity"])
    return rows[:top]


register(Perplexity())
