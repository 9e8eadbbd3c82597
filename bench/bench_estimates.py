"""Estimate vs measured time for the NER probe (the dashboard's job), on ../shared/data.

The probe's estimate (simcore.matrix.estimates.probe_seconds, from simcore.utils.pace's stored paces of this
machine) is made before the probe runs, then the probe runs and the wall time is measured. Each case
runs on the same store in order, so the first case is cold (default paces, every vector to train)
and later ones use the paces recorded meanwhile and find vectors already stored. The issue's case:
"2 training runs of at most 5 s: at most 10 s" for a probe that took 178 s.

With ``--lm``: the language-model probe's plan (simcore.probe.lm.plan_lm_probe) against a measured
run on the bundled sample, at tiny caps (``--lm-tokens``, ``--lm-train``, ``--lm-test``,
``--lm-epochs``).

Usage: nice .venv/bin/python bench/bench_estimates.py [--cache DIR] [--tokens 300000] [--lm]
Prints one row per case: estimate (vectors + runs), measured wall time, ratio, CPU seconds
(user + sys) and the load average. Within a factor of 2 is the aim.
On a shared 2-core machine the figures are indicative.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.corpora.corpus import Corpus  # noqa: E402
from simcore.matrix.estimates import probe_seconds, probe_splits  # noqa: E402
from simcore.matrix.workbench import Workbench  # noqa: E402
from simcore.probe.config import ProbeCaps  # noqa: E402
from simcore.probe.data import TargetSplits  # noqa: E402
from simcore.probe.run import probe  # noqa: E402
from simcore.utils.store import ArtefactStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"


def _cpu() -> float:
    """CPU seconds (user + sys) of this process and its finished children: on a loaded machine the
    wall time also counts the waits for a core, which no estimate can know."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def lm_case(store_root: str, lm_tokens: int, train: int, test: int, epochs: int) -> None:
    """The language-model probe's plan against a measured run, on the bundled sample (tiny caps so
    that it runs in a minute or two on a CPU): two sources, a target cut into train and test from
    the sample's lab protocols. The plan is made twice: on a fresh store (it times a few training
    steps), then again with the paces that stored; the run is timed after the first plan, in the
    same process (the model and PyTorch already loaded, as the probe runs right after its plan)."""
    from simcore.probe.lm import plan_lm_probe
    from simcore.probe.lm_train import LMCaps
    from simcore.utils import pace

    sample = ROOT / "sample_data"
    folder = Path(tempfile.mkdtemp(prefix="simcore-bench-lm-target-"))
    text = (sample / "targets" / "lab_protocol_ner.conll").read_text(encoding="utf-8")
    sentences = text.strip().split("\n\n")
    half = len(sentences) // 2
    (folder / "train.conll").write_text("\n\n".join(sentences[:half]) + "\n", encoding="utf-8")
    (folder / "test.conll").write_text("\n\n".join(sentences[half:]) + "\n", encoding="utf-8")
    target = TargetSplits.from_directory(folder, "lab_protocol_ner")
    sources = [Corpus.from_path(sample / "sources" / f) for f in ("news.txt", "lab_protocols.txt")]
    caps = LMCaps(lm_tokens=lm_tokens, train_sentences=train, test_sentences=test, epochs=epochs)
    store = ArtefactStore(store_root)
    rows = []
    for when in ("fresh store: the plan times a few steps", "the paces it stored"):
        before, start = _cpu(), time.perf_counter()
        planned = plan_lm_probe(sources, [target], workbench=Workbench(store), caps=caps)
        made, made_cpu = time.perf_counter() - start, _cpu() - before
        rows.append((when, planned, made, made_cpu))
    planned = rows[0][1]
    load = os.getloadavg()[0]
    before, start = _cpu(), time.perf_counter()
    planned.run()
    took, cpu = time.perf_counter() - start, _cpu() - before
    print(f"LM probe on the bundled sample: 2 sources x {lm_tokens:,} tokens, {train} train and "
          f"{test} test sentences, {epochs} epoch(s), 1 seed (3 fine-tuning runs); "
          f"{os.cpu_count()} cores, "
          f"load {load:.1f} before the run, contention {pace.contention():.1f} after")
    print("| plan made from | plan took s (CPU s) | estimate s | parts | measured run s | CPU s "
          "| ratio |")
    print("|---|---|---|---|---|---|---|")
    for when, plan_, made, made_cpu in rows:
        parts = ", ".join(f"{k} {v:.1f}" for k, v in plan_.plan.parts().items())
        print(f"| {when} | {made:.1f} ({made_cpu:.1f}) | {plan_.plan.seconds:.1f} | {parts} "
              f"| {took:.1f} | {cpu:.1f} | {plan_.plan.seconds / took:.2f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED))
    parser.add_argument("--cache", default=None, help="store (default: a new empty one)")
    parser.add_argument("--tokens", type=int, default=300_000, help="tokens per source sample (the vectors')")
    parser.add_argument("--cases", default="1,2,3,4", help="which cases to run (1-based, in order)")
    parser.add_argument("--lm", action="store_true",
                        help="instead: the language-model probe's plan against a measured run on "
                             "the bundled sample")
    parser.add_argument("--lm-tokens", type=int, default=2000)
    parser.add_argument("--lm-train", type=int, default=40, help="train sentences (--lm)")
    parser.add_argument("--lm-test", type=int, default=40, help="test sentences (--lm)")
    parser.add_argument("--lm-epochs", type=int, default=1)
    args = parser.parse_args()
    if args.lm:
        lm_case(args.cache or tempfile.mkdtemp(prefix="simcore-bench-lm-"), args.lm_tokens,
                args.lm_train, args.lm_test, args.lm_epochs)
        return 0
    data = Path(args.data)
    if not (data / "sources").is_dir():
        print(f"{data} has no sources/; nothing to measure", file=sys.stderr)
        return 1
    root = args.cache or tempfile.mkdtemp(prefix="simcore-bench-estimates-")
    store = ArtefactStore(root)
    target = TargetSplits.from_directory(data / "targets" / "wetlab_wlp")
    sources = {name: Corpus.from_path(next((data / "sources").glob(f"{name}.*"))) for name in
               ("news_1bwb", "reviews_yelp", "biomed_ohsumed_medline")}
    cases = [  # (label, sources, caps, seeds)
        ("issue's case: 5 s runs, vectors cold", ["news_1bwb"], ProbeCaps(train_sentences=300, epochs=1, seconds=5), 1),
        ("two sources, one cold", ["news_1bwb", "reviews_yelp"], ProbeCaps(train_sentences=300, epochs=2,
                                                                          seconds=60), 1),
        ("warm vectors, 2 seeds", ["news_1bwb", "reviews_yelp"], ProbeCaps(train_sentences=500, epochs=2,
                                                                          seconds=60), 2),
        ("third source cold, time-capped runs", ["biomed_ohsumed_medline"], ProbeCaps(train_sentences=2000,
                                                                                     epochs=10, seconds=15), 1),
    ]
    print(f"machine: {os.cpu_count()} CPU cores (shared: figures are indicative); store {root}")
    print(f"{'case':<38} {'setup':>6} {'vectors':>8} {'runs':>6} {'estimate':>9} {'measured':>9} {'ratio':>6} "
          f"{'cpu':>7}  paces")
    chosen_cases = {int(n) for n in args.cases.split(",")}
    for i, (label, names, caps, seeds) in enumerate(cases, 1):
        if i not in chosen_cases:
            continue
        bench = Workbench(store)
        chosen = [sources[n] for n in names]
        for corpus in chosen:
            bench.tokenize(corpus)  # the dashboard reads a corpus when it is added, before any job
        est = probe_seconds(bench, chosen, seeds=seeds, epochs=caps.epochs, seconds_cap=caps.seconds,
                            train_sentences=caps.train_sentences, source_tokens=args.tokens,
                            splits=probe_splits(store, [target], caps))
        before = _cpu()
        start = time.perf_counter()
        probe(chosen, [target], workbench=Workbench(store), caps=caps, seeds=list(range(seeds)),
              source_tokens=args.tokens)
        took = time.perf_counter() - start
        cpu = _cpu() - before
        print(f"{label:<38} {est.setup:>5.0f}s {est.vectors:>7.0f}s {est.runs:>5.0f}s {est.seconds:>8.0f}s {took:>8.0f}s "
              f"{est.seconds / took:>6.2f} {cpu:>6.0f}s  "
              f"{'this machine' if est.measured else 'defaults'}  load {os.getloadavg()[0]:.1f}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
