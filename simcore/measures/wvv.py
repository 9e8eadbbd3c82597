"""Word vector variance: how far skip-gram vectors move when training continues on the target.

Vectors W_S are trained on the source (gensim skip-gram: 100 dimensions, window 5, 5 negative
samples, min_count 5, 5 epochs, fixed seed). A copy of that model is trained further on the
target with its vocabulary updated, giving W_T. WVV is the mean over words and dimensions of
(W_S − W_T)², over the words of both the source's vocabulary and the target ("shared", default)
or over the whole source vocabulary ("source", the paper's wording).

Models are stored as plain arrays (no pickles) and rebuilt for each target. Training uses one
thread by default, which makes the vectors, and WVV, the same on every run for the same inputs and
seed (gensim's multi-threaded training is not reproducible; ``wvv_workers`` trades that for speed).
Its bootstrap replicates resample the words the mean runs over (retraining per replicate would
cost a training run each).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..utils import pace
from ..utils.errors import SimcoreError
from ..utils.store import digest
from ..utils.versions import package_versions
from .prepared import PreparedSource, PreparedTarget, Score
from .registry import LOWER, VECTORS, Measure, register
from .uncertainty import item_weights

OPTION_NAMES = ("wvv_dims", "wvv_window", "wvv_negative", "wvv_min_count", "wvv_epochs", "wvv_words", "wvv_workers",
                "seed")


def _new_model(options: Any) -> Any:
    from gensim.models import Word2Vec

    return Word2Vec(
        vector_size=options.wvv_dims, window=options.wvv_window, negative=options.wvv_negative,
        min_count=options.wvv_min_count, epochs=options.wvv_epochs, sg=1, seed=options.seed,
        workers=options.wvv_workers,
    )


def _vectors_key(source: PreparedSource) -> str:
    return digest("word2vec", source.sample.fingerprint, source.options.subset(OPTION_NAMES),
                  *package_versions("gensim"))  # gensim trains the vectors


def vectors_stored(source: PreparedSource) -> bool:
    """Whether the source's skip-gram vectors are in the store already (no training to wait for)."""
    return source.store.get("word2vec", _vectors_key(source)) is not None


def source_vectors_path(source: PreparedSource) -> Path:
    """The stored source model (words, counts, input and output vectors)."""
    o = source.options
    key = _vectors_key(source)

    def build(out: Path) -> dict[str, Any]:
        if source.progress:
            source.progress(f"training skip-gram vectors on {source.name}", 0.0)
        model = _new_model(o)
        model.build_vocab(corpus_file=str(source.sample.tokens_file))
        if len(model.wv) == 0:
            raise SimcoreError(
                f"{source.name}: no word occurs {o.wvv_min_count} times, so no word vectors can be "
                "trained; use a larger corpus or a lower min_count"
            )
        began = time.perf_counter()
        model.train(corpus_file=str(source.sample.tokens_file), total_examples=model.corpus_count,
                    total_words=model.corpus_total_words, epochs=model.epochs)
        pace.record(source.store, "skipgram", model.corpus_total_words * model.epochs,
                    time.perf_counter() - began, measure_contention=True)
        words = list(model.wv.index_to_key)
        counts = [int(model.wv.get_vecattr(w, "count")) for w in words]
        (out / "words.json").write_text(json.dumps(words))
        np.save(out / "counts.npy", np.asarray(counts, dtype=np.int64))
        np.save(out / "vectors.npy", model.wv.vectors)
        np.save(out / "syn1neg.npy", model.syn1neg)
        return {"words": len(words)}

    return source.store.build("word2vec", key, build)


def _load_source_model(source: PreparedSource) -> tuple[Any, list[str]]:
    path = source_vectors_path(source)
    words = json.loads((path / "words.json").read_text())
    counts = np.load(path / "counts.npy")
    model = _new_model(source.options)
    model.build_vocab_from_freq(dict(zip(words, counts.tolist())))
    order = np.fromiter((model.wv.key_to_index[w] for w in words), dtype=np.int64, count=len(words))
    model.wv.vectors[order] = np.load(path / "vectors.npy")
    model.syn1neg[order] = np.load(path / "syn1neg.npy")
    return model, words


def vector_sets(source: PreparedSource, target: PreparedTarget) -> Path:
    """Train on the target from the source's vectors; store (words, W_S, W_T) and return it."""
    o = target.options
    key = digest("wvv-vectors", source.sample.fingerprint, target.fingerprint, o.subset(OPTION_NAMES),
                 *package_versions("gensim"))

    def build(out: Path) -> dict[str, Any]:
        model, source_words = _load_source_model(source)
        if o.wvv_words == "shared":
            target_types = set(target.types())
            words = [w for w in source_words if w in target_types]
        else:
            words = source_words
        index = np.fromiter((model.wv.key_to_index[w] for w in words), dtype=np.int64, count=len(words))
        before = model.wv.vectors[index].copy()
        model.build_vocab(target.sentences, update=True)
        model.train(target.sentences, total_examples=len(target.sentences), epochs=model.epochs)
        after = model.wv.vectors[index]
        (out / "words.json").write_text(json.dumps(words))
        np.save(out / "source.npy", before)
        np.save(out / "target.npy", after)
        return {"words": len(words)}

    return source.store.build("wvv-vectors", key, build)


class WordVectorVariance(Measure):
    name = "wvv"
    label = "WVV"
    direction = LOWER
    option_names = OPTION_NAMES
    description = "mean squared change of skip-gram vectors trained further on the target"
    gloss = "how far word vectors move when trained on the target"
    reliable_tokens = 1_000_000
    noise_when_small = True
    unit = "no unit: mean squared change of vector coordinates"
    value_range = (0.0, math.inf)
    default_rank = 4
    family, family_rank = VECTORS, 3
    cost = 20.0
    heavy_scoring = True  # every cell trains the source's vectors further on the target
    own_task = True  # a skip-gram model per source sample
    size_direction, size_why = -1, "vectors from less text move more"
    drill_title = "Words whose vectors moved most on the target"

    def prepare(self, source: PreparedSource) -> None:
        source_vectors_path(source)

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        path = vector_sets(source, target)
        before, after = np.load(path / "source.npy"), np.load(path / "target.npy")
        if before.size == 0:
            return Score(float("nan"), {"words": 0, "note": "no word of the target is in the source's vocabulary"})
        per_word = np.mean((before - after) ** 2, axis=1)
        weights = item_weights(target.fingerprint, target.options.seed, len(per_word), target.options.bootstrap)
        replicates = (weights @ per_word) / len(per_word)
        return Score(float(per_word.mean()), {"words": int(before.shape[0])}, replicates.tolist())

    def drill(self, source: PreparedSource, target: PreparedTarget, top: int) -> Any:
        import pandas as pd

        return pd.DataFrame(moved_words(source, target, top), columns=["word", "mean squared change"])


def moved_words(source: PreparedSource, target: PreparedTarget, top: int = 30) -> list[tuple[str, float]]:
    """The words whose vectors changed most when trained on the target."""
    path = vector_sets(source, target)
    words = json.loads((path / "words.json").read_text())
    change = np.mean((np.load(path / "source.npy") - np.load(path / "target.npy")) ** 2, axis=1)
    order = np.argsort(change)[::-1][:top]
    return [(words[i], float(change[i])) for i in order]


register(WordVectorVariance())
