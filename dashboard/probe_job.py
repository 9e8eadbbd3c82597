"""The NER probe as a session job: it goes on while the user opens other pages.

``start_probe`` checks the choices in the page's thread (sources still loaded, a target with its
splits, uploads saved in the store) and starts a :mod:`dashboard.jobs` worker that runs
:func:`simcore.probe.probe`. Every finished training run is in simcore's store and on the job
(``partial``), so Cancel loses at most the run in progress: the next probe reads the others back.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pandas as pd

from simcore.corpora.corpus import display_name, save_upload
from simcore.matrix.estimates import probe_splits
from simcore.probe.config import ProbeCaps
from simcore.probe.data import TargetSplits
from simcore.probe.lm_train import LMCaps
from simcore.probe.run import seed_list
from simcore.utils import pace
from simcore.utils.errors import SimcoreError
from simcore.utils.store import ArtefactStore

from . import job_records, jobs, work
from .paths import SAMPLE_DATA, resolve_server_path
from .resources import get_bench, get_store
from .state import AppState

KIND = "probe"
RESULTS, LABEL = "probe_results", "probe_label"  # keys in state.extra
RUN_COLUMNS = ["target", "source", "seed", "f1", "epochs", "seconds", "stopped_by"]
VECTORS_KIND, LM_KIND = "word vectors (spaCy)", "language model (masked-LM training)"
PLAN = "probe_lm_plan"  # key in state.extra: the last LM plan's text
# Where the target's splits come from (the page's radio shows these words).
LOADED, SERVER, UPLOAD = "a loaded target (a directory of splits)", "a directory on the server", "files I upload"


@dataclass(frozen=True)
class ProbeRequest:
    """The checked choices of one probe (kept on the job as its params)."""

    sources: tuple[str, ...]
    target: TargetSplits
    caps: ProbeCaps
    seeds: int = 1
    source_tokens: int | None = None

    @property
    def label(self) -> str:
        return f"NER probe: {self.target.name}, {len(self.sources)} sources, {self.seeds} seed(s)"

    @property
    def runs(self) -> int:
        """Training runs this probe asks for: the baseline and each source, per seed."""
        return (1 + len(self.sources)) * self.seeds


@dataclass(frozen=True)
class LMProbeRequest:
    """The checked choices of one LM probe (or of its plan only)."""

    sources: tuple[str, ...]
    target: TargetSplits
    caps: LMCaps
    seeds: int = 1
    model: str | None = None
    max_minutes: float = 30.0
    force: bool = False
    plan_only: bool = False

    @property
    def label(self) -> str:
        return f"LM probe: {self.target.name}, {len(self.sources)} sources, {self.seeds} seed(s)"

    @property
    def runs(self) -> int:
        return (1 + len(self.sources)) * self.seeds


def start_lm_probe(state: AppState, request: LMProbeRequest) -> jobs.BackgroundJob:
    """Plan the LM probe in the background and, unless ``plan_only``, run it (refused over the time limit)."""
    check_sources(state, request.sources)
    bench = get_bench()
    task = partial(work.probe_lm, root=str(get_store().root),
                   sources=[state.sources[n].corpus for n in request.sources], target=request.target,
                   caps=request.caps, seeds=seed_list(request.seeds), model=request.model,
                   max_minutes=request.max_minutes, force=request.force, plan_only=request.plan_only,
                   columns=RUN_COLUMNS)
    title = "LM probe plan" if request.plan_only else f"LM probe ({request.runs} fine-tuning runs)"
    return jobs.start(state, KIND, title, task, _finished, params=request, lock=bench.lock,
                      on_change=_recorder(state, request))


def _recorder(state: AppState, request: ProbeRequest | LMProbeRequest):  # noqa: ANN202
    """The job's record in the workspace on disk (dashboard.job_records)."""
    from .workspace.records import probe_params

    root = get_store().root
    return job_records.recorder(root, state.workspace, KIND,
                                probe_params(request, store_root=root, sample_root=SAMPLE_DATA))


def weak_caps(caps: ProbeCaps) -> list[str]:
    """Caps so small that every F1 would say nothing (a run of 500 sentences, 1 epoch, 5 s gave F1 0)."""
    reasons = []
    if caps.epochs < 3:
        reasons.append(f"{caps.epochs} epoch{'s' if caps.epochs != 1 else ''} (the tagger barely starts learning)")
    if caps.seconds < 30:
        reasons.append(f"{caps.seconds:.0f} s per run (most runs stop before their first epoch ends)")
    if caps.train_sentences is not None and caps.train_sentences < 1000:
        reasons.append(f"{caps.train_sentences} train sentences (too few for the sources' vectors to make a "
                       "difference that shows)")
    return reasons


def time_bound(caps: ProbeCaps, sources: int, seeds: int) -> str:
    """What the caps allow at most: ``19 training runs of at most 5 min 00 s: at most 1 h 35 min``."""
    from .jobs import duration

    runs = (1 + sources) * seeds
    return (f"{runs} training run{'s' if runs != 1 else ''} of at most {duration(caps.seconds)}: at most "
            f"{duration(runs * caps.seconds)}, less for runs already stored or stopped by their epochs")


def estimate(state: AppState, caps: ProbeCaps, sources: list[str], seeds: int,
             source_tokens: int | None, target: TargetSplits | None = None) -> pace.ProbeEstimate:
    """The probe's time with its skip-gram training on each source (the sample the vectors train on: the
    form's size, else the matrix's), from this machine's stored paces; with ``target``, its splits'
    reading and tagging too; spaCy's import always (the job's process is a new one)."""
    from simcore.matrix.plan import comparison_size
    from simcore.measures.options import MeasureOptions

    from .corpus_view import corpus_stats

    sizes = []
    for name in sources:
        try:
            sizes.append(corpus_stats(state.sources[name].corpus).tokens)
        except (KeyError, SimcoreError):
            continue
    sample = source_tokens or (comparison_size(sizes, "wvv") if sizes else 0)
    return pace.probe_estimate(get_store(), [min(sample, n) for n in sizes], seeds=seeds, epochs=caps.epochs,
                               seconds_cap=caps.seconds, train_sentences=caps.train_sentences,
                               wvv_epochs=MeasureOptions().wvv_epochs,
                               splits=probe_splits(get_store(), [target], caps) if target else pace.ProbeSplits(),
                               startup=True,  # the job runs in a new process (dashboard.jobs)
                               contention=pace.contention())


def shown_target(state: AppState, where: str | None, loaded: str | None) -> TargetSplits | None:
    """The loaded target the form shows, for its estimate (None for a server path or uploads, read
    only when the probe starts, or when it cannot be read)."""
    if where != LOADED or not loaded:
        return None
    try:
        return resolve_target(state, LOADED, loaded=loaded)
    except SimcoreError:
        return None


def loaded_target_dirs(state: AppState) -> list[str]:
    """The loaded targets that are directories of splits (the ones a probe can use)."""
    return sorted(name for name, t in state.targets.items() if t.corpus.path.is_dir())


def resolve_target(state: AppState, where: str, *, loaded: str | None = None, server: str = "",
                   uploads: dict[str, tuple[str, bytes]] | None = None, upload_name: str = "",
                   store: ArtefactStore | None = None) -> TargetSplits:
    """The target's splits from the form: a loaded directory, a server directory, or uploaded files.

    ``uploads`` maps a split (train, dev, test) to the uploaded file's name and bytes; they are saved in
    the store under their hash (the name only gives the format).
    """
    if where == LOADED:
        if loaded not in loaded_target_dirs(state):
            raise SimcoreError("no loaded target is a directory of splits; choose a server directory or upload files")
        return TargetSplits.from_directory(state.targets[loaded].corpus.path, name=loaded)
    if where == SERVER:
        if not server.strip():
            raise SimcoreError("type the server directory that holds train.conll and test.conll")
        return TargetSplits.from_directory(resolve_server_path(server))
    if where != UPLOAD:
        raise SimcoreError(f"unknown target choice: {where}")
    uploads = uploads or {}
    if "train" not in uploads or "test" not in uploads:
        raise SimcoreError("upload at least a train file and a test file")
    if store is None:
        raise SimcoreError("no store to keep the uploaded files in")
    saved = {}
    for split in ("train", "dev", "test"):
        if split in uploads:
            filename, data = uploads[split]
            if not data.strip():
                raise SimcoreError(f"{display_name(filename)}: the uploaded {split} file is empty")
            saved[split] = save_upload(data, filename, store)
    return TargetSplits(display_name(upload_name or "my_target"), saved["train"], saved["test"], saved.get("dev"))


def check_sources(state: AppState, sources: tuple[str, ...] | list[str]) -> None:
    """At least one source, each still loaded (checked before the target, whose uploads are then saved)."""
    if not sources:
        raise SimcoreError("choose at least one source")
    missing = [n for n in sources if n not in state.sources]
    if missing:
        raise SimcoreError(f"not loaded any more: {', '.join(missing)}")


def start_probe(state: AppState, request: ProbeRequest) -> jobs.BackgroundJob:
    """Start the probe in the background (SimcoreError, before anything starts, when the choices do not make sense)."""
    check_sources(state, request.sources)
    bench = get_bench()  # in the page's thread: cache_resource needs the script context
    task = partial(work.probe, root=str(get_store().root), sources=[state.sources[n].corpus for n in request.sources],
                   target=request.target, caps=request.caps, seeds=seed_list(request.seeds),
                   source_tokens=request.source_tokens, columns=RUN_COLUMNS)
    expected = estimate(state, request.caps, list(request.sources), request.seeds, request.source_tokens,
                        request.target).seconds
    return jobs.start(state, KIND, f"NER probe ({request.runs} training runs)", task, _finished, params=request,
                      lock=bench.lock, expected=expected, on_change=_recorder(state, request))


def _finished(state: AppState, task: jobs.BackgroundJob) -> None:
    request: ProbeRequest | LMProbeRequest = task.params
    if isinstance(task.result, str):  # an LM plan only
        state.extra[PLAN] = task.result
        state.say("info", "LM probe planned: the plan is on the NER probe page.")
        return
    state.extra[RESULTS] = task.result
    state.extra[LABEL] = request.label
    state.say("success", f"{request.label}: {len(task.partial)} training runs done.")


def runs_table(task: jobs.BackgroundJob) -> pd.DataFrame:
    """The training runs a probe job finished so far, one row each."""
    return pd.DataFrame(list(task.partial), columns=RUN_COLUMNS)
