"""entities: the number of entities of the target's types a spaCy NER tagger finds in the sentence.

The tagger is, in this order: a pipeline directory the user gives (``--pipeline DIR``); one
trained on the target's own labels (:mod:`simcore.selection.entity_tagger`, the paper's
NER-Selected), counting every type it knows; or, when the target has no labels (or
``tagger="generic"``), the generic bundled English pipeline, counting by default ("auto") the
OntoNotes types it finds more often (per token) in the target than in the pool. Entity counts
per label are stored once per pool and pipeline, so another target or K costs no tagging.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ...corpora.corpus import Corpus
from ...utils.errors import MeasureUnavailable, SimcoreError
from ...utils.lifecycle import pool_initializer
from ...utils.store import ArtefactStore, digest
from ..entity_tagger import target_entity_types, train_tagger
from ..options import Progress, SelectionOptions
from ..pool import Batch, PoolPosition, pool_batches, pool_sample, read_lines
from ..target import Target

_PROFILE_SENTENCES = 2000
_PIPE_BATCH = 1000         # texts per nlp.pipe batch, at most ...
_PIPE_CHARS = 100_000      # ... and at most this many characters (spaCy's memory grows with the characters)
_CHUNK = 2000              # pool units per tagging task (and per write); pool_batches also closes it by characters


_NOT_NER = ("tagger", "parser", "lemmatizer", "attribute_ruler", "senter", "morphologizer",
            "trainable_lemmatizer", "textcat", "textcat_multilabel", "spancat")


def load_ner(pipeline: str | None) -> tuple[Any, str]:
    """(spaCy pipeline with only what NER needs, an identifier of it for the cache)."""
    import spacy

    if pipeline is None:
        from ...models.tagging import PIPELINE, PIPELINE_PACKAGES

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
    """(len(texts), len(labels) + 1) entity counts; the last column counts any other label.

    A text longer than the tagger takes (spaCy's ``max_length``, and at most MAX_TAG_CHARS so its
    memory stays bounded) is tagged in pieces cut at spaces, and its counts summed (capped at the
    uint16 the counts are stored in); :func:`long_lines` counts such texts for the report. The pieces
    go to spaCy in groups of at most ``_PIPE_BATCH`` pieces and ``_PIPE_CHARS`` characters.
    """
    column = {label: i for i, label in enumerate(labels)}
    limit = _piece_limit(nlp)
    counts = np.zeros((len(texts), len(labels) + 1), dtype=np.int64)
    for owner, group in _groups(texts, limit):
        for r, doc in zip(owner, nlp.pipe(group, batch_size=len(group))):
            for ent in doc.ents:
                counts[r, column.get(ent.label_, len(labels))] += 1
    return np.minimum(counts, np.iinfo(np.uint16).max).astype(np.uint16)


def _groups(texts: list[str], limit: int) -> Iterator[tuple[list[int], list[str]]]:
    """(owning text's row, piece) lists: every text in pieces of at most ``limit`` characters, grouped
    by :data:`_PIPE_BATCH` pieces or :data:`_PIPE_CHARS` characters, whichever comes first."""
    owner: list[int] = []
    group: list[str] = []
    chars = 0
    for r, text in enumerate(texts):
        for piece in (_pieces(text, limit) if len(text) > limit else (text,)):
            if group and (len(group) >= _PIPE_BATCH or chars + len(piece) > _PIPE_CHARS):
                yield owner, group
                owner, group, chars = [], [], 0
            owner.append(r)
            group.append(piece)
            chars += len(piece)
    if group:
        yield owner, group


MAX_TAG_CHARS = 10_000  # characters tagged at once (spaCy's memory grows with a text's length)


def _piece_limit(nlp: Any) -> int:
    return max(1, min(MAX_TAG_CHARS, int(getattr(nlp, "max_length", MAX_TAG_CHARS) or MAX_TAG_CHARS) - 1))


def _pieces(text: str, limit: int) -> Iterator[str]:
    """``text`` in pieces of at most ``limit`` characters, cut at the last space before the limit when there is one."""
    start = 0
    while start < len(text):
        end = min(len(text), start + limit)
        if end < len(text):
            space = text.rfind(" ", start + 1, end)
            end = space if space > start else end
        yield text[start:end]
        start = end


def long_lines(texts: list[str], nlp: Any) -> int:
    """How many of ``texts`` are longer than the tagger takes at once (tagged in pieces)."""
    limit = _piece_limit(nlp)
    return sum(len(t) > limit for t in texts)


def choose_pipeline(options: SelectionOptions, target: Target, store: ArtefactStore,
                    progress: Progress) -> tuple[str | None, dict[str, Any]]:
    """(pipeline directory or None for the generic one, a record of which tagger and why)."""
    if options.pipeline:
        return options.pipeline, {"kind": "user", "tagger": f"the spaCy pipeline in {Path(options.pipeline).name}"}
    if options.tagger == "target":
        types = target_entity_types(target.corpus)
        if types:
            path, record = train_tagger(target.corpus, target.labels_fingerprint(), store,
                                        options.tagger_steps, options.seed, progress)
            return str(path), {"kind": "target", "training": record,
                               "tagger": f"a tagger trained on {target.name}'s labels ({', '.join(sorted(types))}; "
                                         f"dev F1 {record['dev_f1']:.2f})"}
        reason = "the target has no entity labels"
    else:
        reason = "asked for"
    from ...models.tagging import PIPELINE

    return None, {"kind": "generic", "tagger": f"the generic {PIPELINE} pipeline ({reason})"}


def _tag_pool(pipeline: str | None, nlp: Any, labels: list[str], pool: Corpus, options: SelectionOptions,
              where: PoolPosition, path: Path, progress: Progress) -> tuple[int, int]:
    """Entity counts of every pool unit into ``path`` (uint16 rows, in pool order).

    Returns the number of units and how many of them were too long to tag at once (tagged in pieces).

    With ``options.ner_processes`` > 1 the pool's chunks are tagged by that many processes, each with
    its own copy of the pipeline, and only the counts come back (spaCy's own ``n_process`` sends every
    Doc back to this process, which on two cores made it slower than one process).
    """
    started, n = time.perf_counter(), 0
    split = 0

    def chunks() -> Iterator[list[str]]:
        nonlocal split
        for batch in pool_batches(pool, options.tokenizer, _CHUNK, where, with_tokens=False):
            split += long_lines(batch.texts, nlp)
            yield batch.texts

    def report() -> None:
        rate = n / max(time.perf_counter() - started, 1e-9)
        progress(f"entities: tagged {n:,} sentences ({rate:,.0f}/s)", where.value)

    stream = chunks()
    head = [chunk for chunk in (next(stream, None), next(stream, None)) if chunk is not None]
    with open(path, "wb") as f:
        if options.ner_processes <= 1 or len(head) < 2:  # a pool of one chunk is not worth starting processes
            for texts in itertools.chain(head, stream):
                f.write(_count_entities(nlp, texts, labels).tobytes())
                n += len(texts)
                report()
            return n, split
        context = multiprocessing.get_context("spawn")
        start, first = pool_initializer(_start_tagger)
        with context.Pool(options.ner_processes, initializer=start, initargs=(*first, pipeline, labels)) as workers:
            for counts in workers.imap(_tag_chunk, itertools.chain(head, stream)):
                f.write(counts.tobytes())
                n += len(counts)
                report()
    return n, split


_worker: dict[str, Any] = {}


def _start_tagger(pipeline: str | None, labels: list[str]) -> None:
    """In a tagging process: load the pipeline once."""
    _worker["nlp"], _ = load_ner(pipeline)
    _worker["labels"] = labels


def _tag_chunk(texts: list[str]) -> np.ndarray:
    return _count_entities(_worker["nlp"], texts, _worker["labels"])


class EntityScorer:
    def __init__(self, options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                 store: ArtefactStore, progress: Progress) -> None:
        pipeline, self.source = choose_pipeline(options, target, store, progress)
        self.nlp, pipeline_id = load_ner(pipeline)
        self.labels = _labels(self.nlp)
        key = digest("selection-entity-counts", pool_fp, pipeline_id, self.labels, MAX_TAG_CHARS, _PIPE_CHARS)

        def build(out: Path) -> dict[str, Any]:
            started, where = time.perf_counter(), PoolPosition()
            n, split = _tag_pool(pipeline, self.nlp, self.labels, pool, options, where, out / "counts.u16", progress)
            seconds = time.perf_counter() - started
            (out / "labels.json").write_text(json.dumps(self.labels))
            return {"n": n, "seconds": seconds, "rate": n / max(seconds, 1e-9), "split_lines": split}

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
        if spec.lower() == "all" or (spec.lower() == "auto" and self.source["kind"] != "generic"):
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
        return {"labels": self.chosen, "profile": self.profile, "tagger": self.source["tagger"],
                "tagger_kind": self.source["kind"], "tagger_training": self.source.get("training"),
                "pool_pass_seconds": self.tagging.get("seconds", 0.0), "tagging_rate": self.tagging.get("rate"),
                "split_lines": self.tagging.get("split_lines", 0)}

