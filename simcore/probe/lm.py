"""The language-model probe: what continued masked-LM training on each source does for a target's NER.

For each source, the encoder (the bundled all-MiniLM-L6-v2, or a transformers model saved on the
machine) continues masked-LM training on the same number of tokens drawn from that source by the
Workbench's sampler (the sample the matrix scores at that size); then a token classifier is
fine-tuned from those weights on the target's train split and scored on its test split, per seed,
beside the baseline fine-tuned from the unadapted encoder. The results table has the vector
probe's columns (:data:`simcore.probe.run.COLUMNS`; ``caps`` starts ``kind=lm``), so correlate,
regret and audit read it.

Every adapted model, every block table and every fine-tuning run is stored under fingerprints of
the model, the sample, the target's splits, the seed and the caps, so a probe resumes where it stopped.
:func:`plan_lm_probe` prepares all that and measures this machine's speed; ``LMProbe.run`` trains.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..corpora.corpus import Corpus
from ..matrix.workbench import Workbench
from ..models.sentence_encoder import (
    EncoderSource,
    libraries,
    resolve_encoder,
    transformer_directory,
)
from ..utils import pace
from ..utils.errors import SimcoreError, StoreError
from ..utils.store import ArtefactStore, digest
from .data import Sentences, TargetSplits, cap_sentences, read_split
from .lm_plan import Adaptation, LMPlan, Tagging
from .lm_train import LMCaps, adapt, blocks, device, encode, finetune_and_score, label_names, load_tokenizer
from .run import BASELINE, COLUMNS, SAMPLE_SEED, result_row

Progress = Callable[[str, float], None]
MEASURE_STEPS = 3  # steps timed per training when planning (the first is not counted)


def _quiet(message: str, fraction: float) -> None:
    pass


def _versions() -> list[str]:
    torch, transformers = libraries()
    return [torch.__version__, transformers.__version__]


@dataclass
class _Source:
    corpus: Corpus
    blocks: Path | None = None
    pieces: int = 0
    weights_key: str = ""
    error: str | None = None


@dataclass
class _Target:
    splits: TargetSplits
    train: Sentences = field(default_factory=list)
    test: Sentences = field(default_factory=list)
    key: str = ""
    error: str | None = None


@dataclass
class LMProbe:
    """A planned LM probe: the model, each source's sample and each target's data, ready to train."""

    store: ArtefactStore
    model: EncoderSource
    folder: Path
    caps: LMCaps
    seeds: list[int]
    sources: list[_Source]
    targets: list[_Target]
    plan: LMPlan

    @property
    def caps_text(self) -> str:
        return f"kind=lm;model={self.model.name};{self.caps.describe()}"

    def _adapted(self, source: _Source, progress: Progress) -> Path:
        def build(out: Path) -> dict[str, Any]:
            assert source.blocks is not None
            table = np.load(source.blocks)
            result = adapt(self.folder, table, out, self.caps, progress)
            return {"steps": result.steps, "pieces": result.tokens, "seconds": result.seconds,
                    "first_loss": result.losses[0] if result.losses else None,
                    "last_loss": result.losses[-1] if result.losses else None}

        return self.store.build("probe-lm-adapted", source.weights_key, build)

    def run_key(self, weights_key: str, target: _Target, seed: int) -> str:
        return digest("probe-lm-run", weights_key, target.key, seed, self.caps.finetuning(), _versions())

    def run(self, progress: Progress = _quiet, on_row: Callable[[dict[str, Any]], None] | None = None,
            on_run: Callable[[dict[str, Any]], None] | None = None) -> pd.DataFrame:
        """Adapt, fine-tune and score what is not stored; one results row per (target, source)."""
        total = sum(t.runs - t.stored for t in self.plan.tagging) + sum(not a.stored for a in self.plan.adaptations)
        total = max(1, total)
        done = 0
        weights: dict[str, Path | str] = {}  # a source's adapted weights, or why it has none
        rows: list[dict[str, Any]] = []
        for target in self.targets:
            if target.error is not None:
                for source in self.sources:
                    rows.append(result_row(target.splits.name, source.corpus.name, [], [], self.caps_text, None, None, None,
                                     [], f"target {target.error}", 0))
                    if on_row:
                        on_row(rows[-1])
                continue
            scores: dict[str, list[float]] = {}
            seconds: dict[str, list[float]] = {}
            for source in [None, *self.sources]:
                name = BASELINE if source is None else source.corpus.name
                if source is None:
                    folder: Path | str = self.folder
                    weights_key = self.model.identity
                else:
                    if source.error is None and name not in weights:
                        stored = self.store.get("probe-lm-adapted", source.weights_key) is not None
                        try:
                            weights[name] = self._adapted(source, lambda m, f, _n=name, _d=done: progress(
                                f"{_n}: {m}", min(1.0, (_d + f) / total)))
                        except StoreError:
                            raise
                        except SimcoreError as exc:
                            weights[name] = str(exc)
                        done += not stored
                    folder = source.error or weights[name]
                    weights_key = source.weights_key
                if isinstance(folder, str):  # why this source has no weights
                    rows.append(result_row(target.splits.name, name, [], scores.get(BASELINE, []), self.caps_text, None,
                                     len(target.train), len(target.test), [], folder, 0))
                    if on_row:
                        on_row(rows[-1])
                    continue
                for seed in self.seeds:
                    key = self.run_key(weights_key, target, seed)
                    record = self.store.get_json("probe-lm-run", key)
                    if record is None:
                        label = f"{target.splits.name} · {name} · seed {seed}"
                        result = finetune_and_score(folder, target.train, target.test, seed, self.caps,
                                                    lambda m, f, _l=label, _d=done: progress(f"{_l}: {m}",
                                                                                             min(1.0, (_d + f) / total)))
                        record = asdict(result)
                        self.store.put_json("probe-lm-run", key, record)
                        done += 1
                    scores.setdefault(name, []).append(record["f1"])
                    seconds.setdefault(name, []).append(record["seconds"])
                    if on_run:
                        on_run({"target": target.splits.name, "source": name, "seed": seed, "epochs": self.caps.epochs,
                                **record})
                    progress(f"{target.splits.name} · {name} · seed {seed}: F1 {record['f1']:.2f}",
                             min(1.0, done / total))
                if source is not None:
                    rows.append(result_row(target.splits.name, name, scores[name], scores.get(BASELINE, []), self.caps_text,
                                     None, len(target.train), len(target.test), seconds[name], None, 0))
                    if on_row:
                        on_row(rows[-1])
        progress("done", 1.0)
        table = pd.DataFrame(rows, columns=COLUMNS)
        failed = {s.corpus.name: s.error for s in self.sources if s.error is not None}
        failed.update({n: w for n, w in weights.items() if isinstance(w, str)})
        table.attrs["failed_sources"] = failed
        table.attrs["failed_targets"] = {t.splits.name: t.error for t in self.targets if t.error is not None}
        table.attrs["kind"] = "lm"
        return table


def _blocks_artefact(store: ArtefactStore, model: EncoderSource, tokenizer: Any, sample: Any,
                     caps: LMCaps) -> tuple[Path, str, int]:
    """The sample's word pieces cut into masked-LM rows (``blocks.npy``), built once per model and sample."""
    key = digest("probe-lm-blocks", model.identity, sample.fingerprint, caps.block)

    def build(out: Path) -> dict[str, Any]:
        table = blocks(tokenizer, sample.sentences(), caps.block)
        if table.size == 0:
            raise SimcoreError(f"{sample.name}: the sample holds no text for the masked-LM training")
        np.save(out / "blocks.npy", table)
        return {"rows": int(table.shape[0]), "pieces": int(table.size)}

    path = store.build("probe-lm-blocks", key, build)
    return path / "blocks.npy", key, int(store.meta(path)["pieces"])


def _fit_positions(folder: Path, caps: LMCaps) -> tuple[LMCaps, list[str]]:
    """Caps whose sequence lengths fit the model's position embeddings, and a note when they were cut."""
    _, transformers = libraries()
    try:
        config = transformers.AutoConfig.from_pretrained(str(folder), local_files_only=True)
    except Exception as exc:
        raise SimcoreError(f"cannot read the model's config in {folder}: {str(exc).splitlines()[0][:200]}") from None
    limit = getattr(config, "max_position_embeddings", None)
    if not isinstance(limit, int) or limit >= max(caps.block, caps.max_length):
        return caps, []
    fitted = replace(caps, block=min(caps.block, limit), max_length=min(caps.max_length, limit))
    return fitted, [f"the model has {limit} positions: sequences cut to {limit} word pieces"]


def plan_lm_probe(sources: Sequence[Corpus], targets: Sequence[TargetSplits], *, workbench: Workbench | None = None,
                  caps: LMCaps = LMCaps(), seeds: Sequence[int] = (0,), model: str | None = None,
                  progress: Progress = _quiet) -> LMProbe:
    """Draw each source's sample, read each target, find what is stored, and time a few steps here.

    A source or target that cannot be read is noted (its rows get an ``error``); when every target
    fails, that is the probe's error.
    """
    if not sources or not targets:
        raise SimcoreError("give at least one source and one target")
    bench = workbench or Workbench()
    store = bench.store
    encoder = resolve_encoder(model, store)
    folder = transformer_directory(encoder.path)
    tokenizer = load_tokenizer(folder)
    caps, notes = _fit_positions(folder, caps)
    seeds = list(seeds)
    prepared: list[_Source] = []
    for corpus in sources:
        source = _Source(corpus)
        try:
            progress(f"sampling {caps.lm_tokens:,} tokens of {corpus.name}", 0.0)
            sample = bench.source(corpus, caps.lm_tokens, 1, progress)[0].sample
            source.blocks, blocks_key, source.pieces = _blocks_artefact(store, encoder, tokenizer, sample, caps)
            source.weights_key = digest("probe-lm-adapted", encoder.identity, blocks_key, caps.adaptation(),
                                        _versions())
        except StoreError:
            raise
        except SimcoreError as exc:
            source.error = str(exc)
        prepared.append(source)
    adaptations = [Adaptation(s.corpus.name, s.pieces, store.get("probe-lm-adapted", s.weights_key) is not None)
                   for s in prepared if s.error is None]
    readied: list[_Target] = []
    tagging: list[Tagging] = []
    weight_keys = [encoder.identity, *[s.weights_key for s in prepared if s.error is None]]
    probe = LMProbe(store, encoder, folder, caps, seeds, prepared, readied, LMPlan(
        device(), encoder.name, caps.lm_tokens, adaptations, tagging, caps.epochs, notes=notes))
    for splits in targets:
        target = _Target(splits)
        try:
            progress(f"reading {splits.name}", 0.0)
            target.train = cap_sentences(read_split(splits, "train"), caps.train_sentences, SAMPLE_SEED)
            target.test = cap_sentences(read_split(splits, "test"), caps.test_sentences, SAMPLE_SEED)
            target.key = digest(splits.fingerprint("train"), splits.fingerprint("test"), SAMPLE_SEED)
            labels = label_names(target.train)
            train_pieces = encode(tokenizer, target.train, labels, caps.max_length).pieces
            test_pieces = encode(tokenizer, target.test, labels, caps.max_length).pieces
            stored = sum(store.get_json("probe-lm-run", probe.run_key(w, target, seed)) is not None
                         for w in weight_keys for seed in seeds)
            tagging.append(Tagging(splits.name, len(weight_keys) * len(seeds), stored, train_pieces, test_pieces))
        except StoreError:
            raise
        except SimcoreError as exc:
            why = str(exc)
            target.error = why if why.startswith(f"{splits.name}:") else f"{splits.name}: {why}"
        readied.append(target)
    if all(t.error for t in readied):
        raise SimcoreError("; ".join(t.error or "" for t in readied))
    if probe.plan.lm_pieces or probe.plan.tagging_pieces:
        _measure(probe, progress)
    return probe


def _pace_steps(probe: LMProbe) -> tuple[str, str]:
    """The pace records of this model's masked-LM and fine-tuning steps on this device at these caps."""
    key = digest("probe-lm-pace", probe.model.identity, device(), probe.caps.lm_batch, probe.caps.batch,
                 probe.caps.max_length, probe.caps.block)[:16]
    return f"probe-lm-mlm-{key}", f"probe-lm-finetune-{key}"


def _measure(probe: LMProbe, progress: Progress) -> None:
    """The pieces a second of this model's masked-LM training and fine-tuning on this machine: from the paces
    stored by an earlier plan (the plan is then made in seconds, and a plan and its refusal agree), else timed
    over a few steps here (nothing of the model is saved; the paces are)."""
    plan = probe.plan
    first = next((t for t in probe.targets if t.error is None), None)
    assert first is not None
    mlm_step, tune_step = _pace_steps(probe)
    plan.lm_rate = pace.recorded(probe.store, mlm_step) or float("nan")
    plan.tagging_rate = pace.recorded(probe.store, tune_step) or float("nan")
    if plan.lm_pieces and not math.isfinite(plan.lm_rate):
        progress("timing the masked-LM training here", 0.0)
        pending = next(s for s in probe.sources
                       if s.error is None and s.corpus.name in {a.source for a in plan.adaptations if not a.stored})
        assert pending.blocks is not None
        table = np.array(np.load(pending.blocks, mmap_mode="r")[:MEASURE_STEPS * probe.caps.lm_batch])
        result = adapt(probe.folder, table, Path("unused"), probe.caps, max_steps=MEASURE_STEPS, save=False)
        timed = result.step_seconds[1:] or result.step_seconds
        plan.lm_rate = len(timed) * probe.caps.lm_batch * table.shape[1] / max(sum(timed), 1e-9)
        pace.record(probe.store, mlm_step, plan.lm_rate, 1.0)
    if plan.tagging_pieces and not math.isfinite(plan.tagging_rate):
        progress("timing the fine-tuning here", 0.0)
        result = finetune_and_score(probe.folder, first.train, None, 0, probe.caps, max_steps=MEASURE_STEPS)
        plan.tagging_rate = result.pieces_per_second
        if not math.isfinite(plan.tagging_rate):  # a train split of one batch: time it whole
            plan.tagging_rate = plan.tagging[0].train_pieces * result.steps / max(1, math.ceil(
                len(first.train) / probe.caps.batch)) / max(result.seconds, 1e-9)
        pace.record(probe.store, tune_step, plan.tagging_rate, 1.0)


def probe_lm(sources: Sequence[Corpus], targets: Sequence[TargetSplits], *, workbench: Workbench | None = None,
             caps: LMCaps = LMCaps(), seeds: Sequence[int] = (0,), model: str | None = None,
             max_minutes: float | None = None, force: bool = False, progress: Progress = _quiet,
             on_row: Callable[[dict[str, Any]], None] | None = None,
             on_run: Callable[[dict[str, Any]], None] | None = None) -> pd.DataFrame:
    """Plan, check the plan against ``max_minutes`` (unless ``force``), and run the LM probe."""
    planned = plan_lm_probe(sources, targets, workbench=workbench, caps=caps, seeds=seeds, model=model,
                            progress=progress)
    if max_minutes is not None:
        planned.plan.check(max_minutes, force)
    return planned.run(progress, on_row, on_run)
