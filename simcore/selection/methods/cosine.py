"""cosine: skip-gram vectors (gensim, 100 dimensions, window 5, 5 epochs) trained on a sample of
the pool plus the target; a sentence's embedding is the mean of its words' vectors; the score is
its cosine with the mean of the target sentences' embeddings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ...corpora.corpus import Corpus
from ...utils.errors import SimcoreError
from ...utils.store import ArtefactStore, digest
from ...utils.versions import package_versions
from ..options import Progress, SelectionOptions
from ..pool import Batch
from ..target import Target
from .samples import target_sentences, tokenized_sample


class CosineScorer:
    def __init__(self, options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                 store: ArtefactStore, progress: Progress) -> None:
        path = _word2vec(options, pool, pool_fp, target, store, progress)
        words = json.loads((path / "words.json").read_text())
        self.index = {w: i for i, w in enumerate(words)}
        self.vectors = np.load(path / "vectors.npy").astype(np.float32)
        target_embeddings = self.embed(target_sentences(target))
        ok = np.isfinite(target_embeddings).all(axis=1)
        if not ok.any():
            raise SimcoreError(f"{target.name}: no target word has a vector; use a larger target")
        self.centre = target_embeddings[ok].mean(axis=0)
        self.centre /= np.linalg.norm(self.centre) or 1.0
        self._details = {"words": len(words), "target_sentences_embedded": int(ok.sum())}

    def embed(self, sentences: list[list[str]]) -> np.ndarray:
        """Mean word vector of each sentence (NaN rows for sentences with no known word)."""
        from scipy.sparse import csr_matrix

        rows, cols = [], []
        for r, tokens in enumerate(sentences):
            for t in tokens:
                i = self.index.get(t)
                if i is not None:
                    rows.append(r)
                    cols.append(i)
        counts = np.bincount(np.asarray(rows, dtype=np.int64), minlength=len(sentences)).astype(np.float32)
        with np.errstate(divide="ignore"):
            weights = (1.0 / counts)[rows] if rows else np.zeros(0, dtype=np.float32)
        matrix = csr_matrix((weights, (rows, cols)), shape=(len(sentences), len(self.index)), dtype=np.float32)
        embeddings = np.asarray(matrix @ self.vectors)
        embeddings[counts == 0] = np.nan
        return embeddings

    def score(self, batch: Batch) -> np.ndarray:
        embeddings = self.embed(batch.tokens)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (embeddings @ self.centre) / np.linalg.norm(embeddings, axis=1)

    def details(self) -> dict[str, Any]:
        return self._details


def _word2vec(options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target, store: ArtefactStore,
              progress: Progress) -> Path:
    key = digest("selection-word2vec", pool_fp, target.fingerprint, options.key_parts(),
                 *package_versions("gensim"))  # gensim trains the vectors

    def build(out: Path) -> dict[str, Any]:
        from gensim.models import Word2Vec

        sample = tokenized_sample(pool, pool_fp, store, options, progress)
        text = out / "train.txt"
        with open(text, "w", encoding="utf-8") as f:
            for tokens in sample:
                f.write(" ".join(tokens) + "\n")
            for tokens in target_sentences(target):
                f.write(" ".join(tokens) + "\n")
        progress(f"training skip-gram vectors on {len(sample):,} pool and "
                 f"{target.sample.n_units:,} target sentences", 0.0)
        model = Word2Vec(vector_size=options.dims, window=options.window, min_count=options.min_count,
                         epochs=options.epochs, sg=1, negative=5, seed=options.seed, workers=options.workers)
        model.build_vocab(corpus_file=str(text))
        if len(model.wv) == 0:
            raise SimcoreError(f"no word occurs {options.min_count} times in the pool sample and the target, "
                               "so no word vectors can be trained; use larger corpora")
        model.train(corpus_file=str(text), total_examples=model.corpus_count,
                    total_words=model.corpus_total_words, epochs=model.epochs)
        text.unlink()
        (out / "words.json").write_text(json.dumps(list(model.wv.index_to_key)))
        np.save(out / "vectors.npy", model.wv.vectors)
        return {"words": len(model.wv)}

    return store.build("selection-word2vec", key, build)

