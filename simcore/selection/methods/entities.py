"""entities: the number of entities a spaCy NER pipeline finds in the sentence.

The pipeline is the bundled English one, or a pipeline directory given by the user. Entity
counts per label are stored once per pool and pipeline; which labels count is chosen per target:
by default ("auto") the labels the pipeline finds more often (per token) in the target than in
the pool.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from ...corpus import Corpus
from ...errors import MeasureUnavailable, SimcoreError
from ...store import ArtefactStore, digest
from ..options import Progress, SelectionOptions
from ..pool import Batch, PoolPosition, pool_batches, pool_sample, read_lines
from ..target import Target

_PROFILE_SENTENCES = 2000


_NOT_NER = ("tagger", "parser", "lemmatizer", "attribute_ruler", "senter", "morphologizer",
            "trainable_lemmatizer", "textcat", "textcat_multilabel", "spancat")


def load_ner(pipeline: str | None) -> tuple[Any, str]:
    """(spaCy pipeline with only what NER needs, an identifier of it for the cache)."""
    import spacy

    if pipeline is None:
        from ...tagging import PIPELINE, PIPELINE_PACKAGES

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
            started, n, where = time.perf_counter(), 0, PoolPosition()
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

