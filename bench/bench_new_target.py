"""A new target against prepared sources, end to end, against `simcore --help` in the same run.

What a practitioner waits for when a target is added: `python -m simcore matrix` in a fresh process, every
default measure (or one at a time with --each), against sources whose samples and models are already in
the store. The sources: the five of ../shared/data, each resampled to --source-tokens (default 1M) and
prepared once (not timed). The new target: a sample of --target-tokens (default 100k) whole sentences of
the conll2003 train split, cut anew for each repeat (a new fingerprint: nothing of it is stored).

With --ahead, the target's work is also done the way the dashboard does it when a target is
added (:func:`simcore.matrix.ahead.prepare_target` in a fresh process, every default measure's
choices), then the same matrix command runs on the store it filled: the table gives the add-time
work, Compute after it (what the user waits for once that work has finished), and their sum, the
time from adding the target to its answer when Compute is pressed at once (the dashboard's Compute
waits for the add-time job, which holds the server's computation lock). The artefacts Compute built
are counted from the store's build log: after the add-time work, only cells; with --cells (the
add-time work scores the cells too, as the dashboard's job does), nothing.

With --baseline DIR, each timed command also runs with DIR's simcore first on PYTHONPATH (for example the
main checkout, /work/main), so the table compares the two on the same machine in the same run. Each
command runs --repeat times (the median wall time and the median CPU seconds, user + sys of the
command and all its processes, are printed); the machine's load average is printed beside it.

Usage: .venv/bin/python bench/bench_new_target.py [--jobs 2] [--repeat 3] [--each | --alone M,M]
       [--ahead [--cells]] [--baseline /work/main]
       [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_matrix import SHARED, resample  # noqa: E402

PYTHON = sys.executable
DEFAULT = ("tvc", "tvcc", "ppl", "wvv", "jsd", "ttr")


def target_sample(out: Path, tokens: int, seed: int) -> int:
    """Whole sentences of conll2003's train split, from a seeded start, to about ``tokens`` tokens."""
    sentences = (SHARED / "targets" / "conll2003" / "train.conll").read_text(encoding="utf-8").split("\n\n")
    start = (seed * 7919) % max(1, len(sentences) // 2)
    written, chunk = 0, []
    for sentence in sentences[start:] + sentences[:start]:
        if written >= tokens:
            break
        chunk.append(sentence)
        written += sum(1 for line in sentence.splitlines() if line.strip() and not line.startswith("-DOCSTART-"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "new.conll").write_text("\n\n".join(chunk) + "\n", encoding="utf-8")
    return written


CPU: list[float] = []  # CPU seconds (user + sys, the command and its processes) of each command


AHEAD = """
import sys
from simcore.corpora.corpus import Corpus
from simcore.matrix.ahead import prepare_target
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.workbench import Workbench
from simcore.utils.store import ArtefactStore
sources, target, store, jobs, cells = sys.argv[1:]
bench = Workbench(ArtefactStore(store))
prepare_target(bench.cache, corpora_in(target)[0], corpora_in(sources), jobs=int(jobs),
               cells=cells == "1")
"""


def timed(args: list[str], path: Path, env: dict[str, str] | None = None) -> float:
    """Wall seconds of ``python -m simcore ARGS`` (``python -c CODE ARGS`` when ARGS starts with
    "-c") run from ``path`` (its CPU added to ``CPU``)."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(path)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [PYTHON, *args] if args[0] == "-c" else [PYTHON, "-m", "simcore", *args]
    result = subprocess.run(command, cwd=path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"simcore {' '.join(args[:3])} failed: {result.stderr.strip()[-300:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source-tokens", type=int, default=1_000_000)
    parser.add_argument("--target-tokens", type=int, default=100_000)
    parser.add_argument("--each", action="store_true", help="also each default measure alone")
    parser.add_argument("--alone", default="", help="also these measures alone (comma-separated)")
    parser.add_argument("--ahead", action="store_true",
                        help="also the work done when a target is added, and Compute after it")
    parser.add_argument("--cells", action="store_true",
                        help="with --ahead: the add-time work scores the cells too "
                             "(as the dashboard's does)")
    parser.add_argument("--baseline", type=Path, help="another checkout to time the same way")
    parser.add_argument("--work", type=Path,
                        help="keep the sources and stores here (prepared once, reused)")
    args = parser.parse_args()
    if not (SHARED / "sources").is_dir():
        raise SystemExit(f"{SHARED} is not present")
    checkouts = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    with tempfile.TemporaryDirectory(prefix="bench-new-target-") as tmp:
        work = args.work or Path(tmp)
        (work / "sources").mkdir(parents=True, exist_ok=True)
        for source in sorted((SHARED / "sources").glob("*.txt.gz")):
            if not (work / "sources" / (source.name[:-7] + ".txt")).exists():
                resample(source, args.source_tokens, work / "sources" / (source.name[:-7] + ".txt"))
        common = ["--sources", str(work / "sources"), "--jobs", str(args.jobs), "--quiet"]
        first = target_sample(work / "t0", 2_000, 0)
        for name, path in checkouts:  # the sources prepared (samples, models, counts, vectors) in each store
            timed(["matrix", *common, "--targets", str(work / "t0"), "--out", str(work / "p.csv"),
                   "--cache", str(work / f"store-{name}")], path)
        print(f"# 5 sources x {args.source_tokens:,} tokens prepared; new target {args.target_tokens:,} tokens "
              f"(prep target {first:,}); --jobs {args.jobs}; cores {os.cpu_count()}")
        alone = list(DEFAULT) if args.each else [m for m in args.alone.split(",") if m]
        cases = [("every default measure", ",".join(DEFAULT))] + [(m, m) for m in alone]
        print(f"{'checkout':9} {'case':24} {'median s':>9} {'x --help':>9} {'cpu s':>6} "
              f"{'runs':>24}  load")
        # a reused store must not hold the new targets
        seed = int(time.time()) % 100_000 if args.work else 1
        for name, path in checkouts:
            CPU.clear()
            helps = [timed(["--help"], path) for _ in range(args.repeat)]
            help_s = statistics.median(helps)
            print(f"{name:9} {'simcore --help':24} {help_s:9.2f} {1.0:9.1f} "
                  f"{statistics.median(CPU):6.2f} "
                  f"{' '.join(f'{h:.2f}' for h in helps):>24}  {os.getloadavg()[0]:.1f}")
            for label, measures in cases:
                runs = []
                CPU.clear()
                for _ in range(args.repeat):
                    seed += 1
                    target = work / f"t{seed}"
                    target_sample(target, args.target_tokens, seed)
                    runs.append(timed(["matrix", *common, "--targets", str(target), "--measures", measures,
                                       "--out", str(work / "m.csv"), "--cache", str(work / f"store-{name}")], path))
                median = statistics.median(runs)
                print(f"{name:9} {label:24} {median:9.2f} {median / help_s:9.1f} "
                      f"{statistics.median(CPU):6.2f} "
                      f"{' '.join(f'{r:.1f}' for r in runs):>24}  {os.getloadavg()[0]:.1f}", flush=True)
            if args.ahead and name == "this":
                seed = ahead_cases(args, work, common, path, help_s, seed)


def ahead_cases(args: argparse.Namespace, work: Path, common: list[str], path: Path, help_s: float,
                seed: int) -> int:
    """The add-time work, Compute after it and their sum, each on a new target; the seed last
    used."""
    walls: dict[str, list[float]] = {"work at add time": [], "Compute after it": [],
                                     "add -> answer": []}
    cpus: dict[str, list[float]] = {k: [] for k in walls}
    built: list[str] = []
    for _ in range(args.repeat):
        seed += 1
        target = work / f"t{seed}"
        target_sample(target, args.target_tokens, seed)
        store = work / "store-this"
        CPU.clear()
        ahead = ["-c", AHEAD, str(work / "sources"), str(target), str(store), str(args.jobs),
                 "1" if args.cells else "0"]
        walls["work at add time"].append(timed(ahead, path))
        log = work / "builds.log"
        log.unlink(missing_ok=True)
        walls["Compute after it"].append(timed(
            ["matrix", *common, "--targets", str(target), "--measures", ",".join(DEFAULT), "--out",
             str(work / "m.csv"), "--cache", str(store)],
            path, {"SIMCORE_BUILD_LOG": str(log)}))
        kinds = [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []
        built.append(", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))) or "nothing")
        walls["add -> answer"].append(sum(w[-1] for k, w in walls.items() if k != "add -> answer"))
        cpus["work at add time"].append(CPU[0])
        cpus["Compute after it"].append(CPU[1])
        cpus["add -> answer"].append(CPU[0] + CPU[1])
    for label, runs in walls.items():
        median = statistics.median(runs)
        print(f"{'this':9} {label:24} {median:9.2f} {median / help_s:9.1f} "
              f"{statistics.median(cpus[label]):6.2f} "
              f"{' '.join(f'{r:.1f}' for r in runs):>24}  {os.getloadavg()[0]:.1f}", flush=True)
    print(f"# built by Compute after the add-time work: {' | '.join(built)}")
    return seed


if __name__ == "__main__":
    main()
