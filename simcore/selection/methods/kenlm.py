"""KenLM scorers.

- ppl: per-word perplexity (including ``</s>``, OOV words as ``<unk>``) under an order-3
  modified Kneser-Ney KenLM model of the target: what KenLM's ``query`` reports for the line.
- xent: Moore and Lewis (2010): H_target(s) − H_pool(s), per-word cross-entropies (log10) under
  KenLM models of the target and of the pool sample. Both models share one vocabulary, the
  target's words seen at least twice; every other word becomes ``[oov]`` in training and
  scoring alike, so neither model is rewarded for a smaller vocabulary.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from ...corpora.corpus import Corpus
from ...models.kenlm_tools import estimate
from ...utils.errors import SimcoreError
from ...utils.store import ArtefactStore, digest
from ..options import Progress, SelectionOptions
from ..pool import Batch, pool_sample, pool_tokenizer, read_lines
from ..target import Target

OOV = "[oov]"


def _kenlm_model(store: ArtefactStore, key_parts: tuple, lines: Any, order: int, memory: str, name: str,
                 progress: Progress) -> Any:
    import kenlm

    key = digest("selection-kenlm", *key_parts, order)

    def build(out: Path) -> dict[str, Any]:
        text = out / "train.txt"
        n = 0
        with open(text, "w", encoding="utf-8") as f:
            for tokens in lines():
                if tokens:
                    f.write(" ".join(tokens) + "\n")
                    n += 1
        progress(f"estimating an order-{order} KenLM model of {name} ({n:,} sentences)", 0.0)
        estimate(text, out / "model.bin", order, memory, name)
        text.unlink()
        return {"order": order, "sentences": n}

    path = store.build("selection-kenlm", key, build)
    return kenlm.Model(str(path / "model.bin"))


def log10_per_word(model: Any, sentences: list[list[str]]) -> np.ndarray:
    """−log10 p(sentence) / (words + 1): KenLM's per-word cross-entropy including </s>."""
    return np.fromiter(
        (-model.score(" ".join(t), bos=True, eos=True) / (len(t) + 1) if t else np.nan for t in sentences),
        dtype=np.float64, count=len(sentences))


class PerplexityScorer:
    def __init__(self, options: SelectionOptions, target: Target, store: ArtefactStore, progress: Progress) -> None:
        self.model = _kenlm_model(store, ("target", target.fingerprint), lambda: target.sample.sentences(),
                                  options.order, options.memory, target.name, progress)
        self.order = options.order

    def score(self, batch: Batch) -> np.ndarray:
        return np.power(10.0, log10_per_word(self.model, batch.tokens))

    def details(self) -> dict[str, Any]:
        return {"order": self.order}


class CrossEntropyScorer:
    """Moore-Lewis with cross-fitting: no pool sentence is scored by a pool model that saw it.

    Two disjoint pool samples A and B, each about as large as the target (as Moore and Lewis),
    give two pool models; a sentence of A is scored with B's model, every other one with A's.
    """

    def __init__(self, options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                 store: ArtefactStore, progress: Progress) -> None:
        counts = Counter(t for s in target.sample.sentences() for t in s)
        self.vocab = {w for w, c in counts.items() if c >= 2} or set(counts)
        vocab_key = digest(sorted(self.vocab))
        self.target_model = _kenlm_model(
            store, ("xent-target", target.fingerprint, vocab_key),
            lambda: (self.map(s) for s in target.sample.sentences()),
            options.order, options.memory, target.name, progress)
        path = pool_sample(pool, pool_fp, store, options.pool_sample, options.seed, progress)
        index = np.load(path.parent / "index.npy")
        order = np.random.default_rng(options.seed).permutation(len(index))
        size = max(1, min(target.sample.n_units, len(index) // 2))
        halves = (np.sort(order[:size]), np.sort(order[size:2 * size]))
        if len(halves[1]) == 0:
            raise SimcoreError(f"{pool.name}: too few sentences for a pool model (need at least 2)")
        lines = read_lines(path)
        tokens_of = pool_tokenizer(pool, options.tokenizer)
        self.models = []
        for part, rows in zip("AB", halves):
            def part_lines(rows: np.ndarray = rows) -> Any:
                return (self.map(tokens_of(lines[r])) for r in rows)

            self.models.append(_kenlm_model(
                store, ("xent-pool", pool_fp, options.pool_sample, size, options.seed, part, vocab_key),
                part_lines, options.order, options.memory, f"{pool.name} (sample {part})", progress))
        self.in_a = np.sort(index[halves[0]])
        self.size = size

    def map(self, tokens: list[str]) -> list[str]:
        return [t if t in self.vocab else OOV for t in tokens]

    def score(self, batch: Batch) -> np.ndarray:
        mapped = [self.map(t) for t in batch.tokens]
        target = log10_per_word(self.target_model, mapped)
        pool_a = log10_per_word(self.models[0], mapped)
        positions = np.arange(batch.start, batch.start + len(mapped))
        seen_by_a = np.isin(positions, self.in_a)
        if seen_by_a.any():
            pool_b = log10_per_word(self.models[1], [m for m, s in zip(mapped, seen_by_a) if s])
            pool_a[seen_by_a] = pool_b
        return target - pool_a

    def details(self) -> dict[str, Any]:
        return {"vocabulary": len(self.vocab), "pool_model_sentences": self.size}

