"""The four sentence scorers of :mod:`simcore.selection`, and the models they are built on.

Each scorer is made once per run (its models come from the artefact store, built on first use)
and then scores the pool batch by batch: ``score(batch) -> array`` with one value per unit.

- cosine: skip-gram vectors (gensim, 100 dimensions, window 5, 5 epochs) trained on a sample
  of the pool plus the target; a sentence's embedding is the mean of its words' vectors; the
  score is its cosine with the mean of the target sentences' embeddings. With ``encoder`` a
  local sentence-transformers model embeds the sentences instead (never downloaded).
- ppl: per-word perplexity (including ``</s>``, OOV words as ``<unk>``) under an order-3
  modified Kneser-Ney KenLM model of the target: what KenLM's ``query`` reports for the line.
- xent: Moore and Lewis (2010): H_target(s) − H_pool(s), per-word cross-entropies (log10) under
  KenLM models of the target and of the pool sample. Both models share one vocabulary, the
  target's words seen at least twice; every other word becomes ``[oov]`` in training and
  scoring alike, so neither model is rewarded for a smaller vocabulary.
- entities: the number of entities a spaCy NER pipeline finds in the sentence (the bundled
  English pipeline, or a pipeline directory given by the user). Entity counts per label are
  stored once per pool and pipeline; which labels count is chosen per target: by default
  ("auto") the labels the pipeline finds more often (per token) in the target than in the pool.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from .corpus import Corpus
from .errors import MeasureUnavailable, SimcoreError
from .kenlm_tools import estimate
from .selection import Batch, Progress, SelectionOptions, Target, _Fraction, pool_batches, pool_sample, read_lines
from .store import ArtefactStore, digest
from .tokenize import tokenize

OOV = "[oov]"
_PROFILE_SENTENCES = 2000


def make_scorer(options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                store: ArtefactStore, progress: Progress) -> Any:
    if options.method == "cosine":
        if options.encoder:
            return EncoderScorer(options, target)
        return CosineScorer(options, pool, pool_fp, target, store, progress)
    if options.method == "ppl":
        return PerplexityScorer(options, target, store, progress)
    if options.method == "xent":
        return CrossEntropyScorer(options, pool, pool_fp, target, store, progress)
    return EntityScorer(options, pool, pool_fp, target, store, progress)


def _tokenized_sample(pool: Corpus, pool_fp: str, store: ArtefactStore, options: SelectionOptions,
                      progress: Progress) -> list[list[str]]:
    path = pool_sample(pool, pool_fp, store, options.pool_sample, options.seed, progress)
    return [t for t in (tokenize(line, options.tokenizer) for line in read_lines(path)) if t]


def _target_sentences(target: Target) -> list[list[str]]:
    return list(target.sample.sentences())


# --------------------------------------------------------------------------- cosine

class CosineScorer:
    def __init__(self, options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                 store: ArtefactStore, progress: Progress) -> None:
        path = _word2vec(options, pool, pool_fp, target, store, progress)
        words = json.loads((path / "words.json").read_text())
        self.index = {w: i for i, w in enumerate(words)}
        self.vectors = np.load(path / "vectors.npy").astype(np.float32)
        target_embeddings = self.embed(_target_sentences(target))
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
    key = digest("selection-word2vec", pool_fp, target.fingerprint, options.key_parts())

    def build(out: Path) -> dict[str, Any]:
        from gensim.models import Word2Vec

        sample = _tokenized_sample(pool, pool_fp, store, options, progress)
        text = out / "train.txt"
        with open(text, "w", encoding="utf-8") as f:
            for tokens in sample:
                f.write(" ".join(tokens) + "\n")
            for tokens in _target_sentences(target):
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


# --------------------------------------------------------------------------- KenLM

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
        self.models = []
        for part, rows in zip("AB", halves):
            def part_lines(rows: np.ndarray = rows) -> Any:
                return (self.map(tokenize(lines[r], options.tokenizer)) for r in rows)

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


# --------------------------------------------------------------------------- entities

_NOT_NER = ("tagger", "parser", "lemmatizer", "attribute_ruler", "senter", "morphologizer",
            "trainable_lemmatizer", "textcat", "textcat_multilabel", "spancat")


def load_ner(pipeline: str | None) -> tuple[Any, str]:
    """(spaCy pipeline with only what NER needs, an identifier of it for the cache)."""
    import spacy

    if pipeline is None:
        from .tagging import PIPELINE, PIPELINE_PACKAGES

        for package in PIPELINE_PACKAGES:
            try:
                nlp = spacy.load(package, exclude=["tok2vec", *_NOT_NER])
                return nlp, f"{package}-{nlp.meta.get('version', '?')}"
            except OSError:
                continue
        raise MeasureUnavailable(f"the spaCy English pipeline ({PIPELINE}) is not installed; run scripts/install.sh")
    path = Path(pipeline).expanduser()
    if not path.is_dir() or not (path / "config.cfg").is_file():
        raise SimcoreError(f"{pipeline} is not a spaCy pipeline directory (it needs a config.cfg, as "
                           "written by nlp.to_disk or spacy train)")
    try:
        nlp = spacy.load(path)
    except Exception as exc:  # spaCy raises OSError, ValueError, KeyError, ... for a broken directory
        raise SimcoreError(f"cannot load the spaCy pipeline in {pipeline}: {str(exc).splitlines()[0][:200]}") from None
    finders = [name for name in nlp.pipe_names
               if nlp.get_pipe_meta(name).factory in ("ner", "beam_ner", "entity_ruler", "span_ruler")]
    if not finders:
        raise SimcoreError(f"the spaCy pipeline in {pipeline} has no NER component "
                           f"(its components: {', '.join(nlp.pipe_names) or 'none'})")
    nlp.select_pipes(disable=[n for n in nlp.pipe_names if n in _NOT_NER])
    stamp = [(str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns)
             for p in sorted(path.rglob("*")) if p.is_file()]
    return nlp, digest("user-pipeline", str(path.resolve()), stamp)


def _labels(nlp: Any) -> list[str]:
    labels: set[str] = set()
    for name in nlp.pipe_names:
        pipe = nlp.get_pipe(name)
        labels.update(getattr(pipe, "labels", ()) or ())
    return sorted(labels)


def _count_entities(nlp: Any, texts: list[str], labels: list[str]) -> np.ndarray:
    """(len(texts), len(labels) + 1) entity counts; the last column counts any other label."""
    column = {label: i for i, label in enumerate(labels)}
    counts = np.zeros((len(texts), len(labels) + 1), dtype=np.uint16)
    for r, doc in enumerate(nlp.pipe(texts, batch_size=256)):
        for ent in doc.ents:
            counts[r, column.get(ent.label_, len(labels))] += 1
    return counts


class EntityScorer:
    def __init__(self, options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                 store: ArtefactStore, progress: Progress) -> None:
        self.nlp, pipeline_id = load_ner(options.pipeline)
        self.labels = _labels(self.nlp)
        key = digest("selection-entity-counts", pool_fp, pipeline_id, self.labels)

        def build(out: Path) -> dict[str, Any]:
            started, n, where = time.perf_counter(), 0, _Fraction()
            with open(out / "counts.u16", "wb") as f:
                for batch in pool_batches(pool, options.tokenizer, options.batch, where):
                    f.write(_count_entities(self.nlp, batch.texts, self.labels).tobytes())
                    n += len(batch.texts)
                    rate = n / max(time.perf_counter() - started, 1e-9)
                    progress(f"entities: tagged {n:,} sentences ({rate:,.0f}/s)", where.value)
            seconds = time.perf_counter() - started
            (out / "labels.json").write_text(json.dumps(self.labels))
            return {"n": n, "seconds": seconds, "rate": n / max(seconds, 1e-9)}

        path = store.build("selection-entity-counts", key, build)
        self.tagging = store.meta(path)
        width = len(self.labels) + 1
        self.counts = (np.memmap(path / "counts.u16", dtype=np.uint16, mode="r", shape=(self.tagging["n"], width))
                       if self.tagging["n"] else np.zeros((0, width), dtype=np.uint16))
        self.chosen, self.profile = self._choose_labels(options, pool, pool_fp, target, store, progress)
        self.columns = np.asarray([self.labels.index(label) for label in self.chosen], dtype=np.int64)

    def _choose_labels(self, options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                       store: ArtefactStore, progress: Progress) -> tuple[list[str], dict[str, Any]]:
        spec = options.entity_labels.strip()
        if spec.lower() == "all":
            return list(self.labels), {}
        if spec.lower() != "auto":
            wanted = [label.strip() for label in spec.split(",") if label.strip()]
            unknown = [label for label in wanted if label not in self.labels]
            if unknown or not wanted:
                raise SimcoreError(f"the pipeline has no entity label {', '.join(unknown) or '(none given)'}; "
                                   f"its labels: {', '.join(self.labels)}")
            return wanted, {}
        progress("entities: which entity types the target has", 0.0)
        sample = read_lines(pool_sample(pool, pool_fp, store, options.pool_sample, options.seed, progress))
        if len(sample) > _PROFILE_SENTENCES:
            sample = [sample[i] for i in np.linspace(0, len(sample) - 1, _PROFILE_SENTENCES).astype(int)]
        rates = {}
        for side, texts in (("target", target.raw_texts(_PROFILE_SENTENCES)), ("pool", sample)):
            counts = _count_entities(self.nlp, texts, self.labels).sum(axis=0)[:-1]
            tokens = sum(len(doc) for doc in self.nlp.tokenizer.pipe(texts)) or 1
            rates[side] = counts / tokens
        chosen = [label for i, label in enumerate(self.labels) if rates["target"][i] > rates["pool"][i]]
        profile = {label: {"target_per_1000": round(1000 * float(rates["target"][i]), 3),
                           "pool_per_1000": round(1000 * float(rates["pool"][i]), 3)}
                   for i, label in enumerate(self.labels)}
        return chosen or list(self.labels), profile

    def score(self, batch: Batch) -> np.ndarray:
        rows = self.counts[batch.start:batch.start + len(batch.texts)]
        if rows.shape[0] != len(batch.texts):
            raise SimcoreError("the pool changed while it was being scored; run again")
        return rows[:, self.columns].sum(axis=1).astype(np.float64)

    def details(self) -> dict[str, Any]:
        return {"labels": self.chosen, "profile": self.profile,
                "pool_pass_seconds": self.tagging.get("seconds", 0.0), "tagging_rate": self.tagging.get("rate")}

