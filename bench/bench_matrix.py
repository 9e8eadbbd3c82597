"""The whole matrix at the speed of the machine: serial against parallel parts, printed as a table.

Cases, each run as `python -m simcore matrix` in a fresh process on a fresh store (wall clock, CPU seconds
of the process and its children, peak memory of the largest process):
- cold 5 x 5: the five sources of ../shared/data each resampled to 1M tokens, the five targets' test splits,
  all six measures (WVV included: the table is at 1M tokens);
- warm new target: a new 100k-token target against the five prepared sources;
- large (--large): 14 sources (the five shared sources resampled to 130k, 400k and 1M tokens, less one) x 24
  targets (the five shared targets' train/dev/test splits cut into parts), the shape issue 21 measured.
Each case with --jobs 1 and --jobs N (default: the cores).

- the bundled sample, cold: the demo's first answer on the command line;
- with --profile: the cold 5 x 5 and the warm new target once more in one process under cProfile, printed
  as each stage's seconds and share of the wall time (stages nest: "scoring" holds WVV's training) and the
  top entries by cumulative time; and the warm new target one measure at a time (each run a new process).

The 16-process estimate is the CPU seconds of the 2-process run spread over 16 processes, plus the
wall time that did not shrink from 1 to 2 processes beyond what the second core explains, but never less
than the largest single piece of work (one target's tagging or one source's preparation; the --profile
stage figures give them).

- with --estimates: the estimate the Similarity form shows (simcore.matrix.estimates.matrix_seconds, this machine's
  recorded paces) against the measured time of the matrix on two small cases: the bundled sample (in a fresh
  store, first at the default paces, then again with the paces the runs recorded) and two ../shared/data
  sources (200k tokens each) against the conll2003 and wetlab test splits.

Usage: .venv/bin/python bench/bench_matrix.py [--jobs 2] [--large] [--skip-cold] [--profile] [--estimates]
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's simcore for the estimates, as the runs use
SHARED = ROOT.parent / "shared" / "data"
PYTHON = sys.executable


def resample(source: Path, tokens: int, out: Path, seed: int = 1) -> None:
    """A source's units, shuffled, with replacement beyond what exists, to about ``tokens`` tokens."""
    with gzip.open(source, "rt", encoding="utf-8") as f:
        units = [line.strip() for line in f if line.strip()]
    rng = random.Random(seed)
    rng.shuffle(units)
    written, i = 0, 0
    with open(out, "w", encoding="utf-8") as handle:
        while written < tokens:
            unit = units[i] if i < len(units) else rng.choice(units)
            handle.write(unit + "\n")
            written += len(unit.split())
            i += 1


def conll_parts(split: Path, parts: int, out_dir: Path, stem: str) -> None:
    """A CoNLL file cut into ``parts`` files of whole sentences."""
    sentences = split.read_text(encoding="utf-8").split("\n\n")
    step = max(1, len(sentences) // parts)
    for k in range(parts):
        chunk = sentences[k * step:(k + 1) * step]
        (out_dir / f"{stem}_{k}.conll").write_text("\n\n".join(chunk) + "\n", encoding="utf-8")


def run(args: list[str], store: Path) -> dict[str, float]:
    """One simcore command: wall seconds, CPU seconds (it and its processes), peak memory of its largest
    process (MB)."""
    start = time.perf_counter()
    process = subprocess.Popen([PYTHON, "-m", "simcore", *args, "--quiet", "--cache", str(store)], cwd=ROOT,
                               stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"simcore {' '.join(args)} exited with {process.returncode}")
    return {"wall s": round(wall, 1), "cpu s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak MB": round(usage.ru_maxrss / 1024)}


STAGES = [  # (stage, file suffix, function name): a stage's time is its function's cumulative time
    ("matrix, in all", "simcore/matrix/workbench.py", "matrix"),
    ("reading and tokenizing", "simcore/corpora/corpus.py", "tokenize_corpus"),
    ("drawing samples", "simcore/corpora/corpus.py", "sample_corpus"),
    ("KenLM estimation (lmplz, build_binary)", "simcore/models/kenlm_tools.py", "estimate"),
    ("source n-gram counts", "simcore/measures/counts.py", "prepare_counts"),
    ("skip-gram on the sources", "simcore/measures/wvv.py", "source_vectors_path"),
    ("scoring the cells (all measures)", "simcore/matrix/corpus_cache.py", "cell"),
    ("  PPL scoring", "simcore/measures/ppl.py", "score"),
    ("  JSD scoring", "simcore/measures/jsd.py", "score"),
    ("  TVC scoring", "simcore/measures/tvc.py", "score"),
    ("  TVcC scoring (waits for the target's tagging)", "simcore/measures/tvcc.py", "score"),
    ("    tagging the targets (spaCy)", "simcore/models/tagging.py", "content_words"),
    ("  WVV scoring (training on the target per cell)", "simcore/measures/wvv.py", "score"),
    ("  TTR", "simcore/measures/ttr.py", "score"),
    ("n-gram counts, sources' and targets'", "simcore/measures/prepared.py", "counts"),
]


def profile(sources: Path, targets: Path, store: Path) -> tuple[Any, str]:
    """One serial matrix in this process under cProfile: the stage table and the top entries."""
    import cProfile
    import io
    import pstats

    import pandas as pd

    from simcore.corpora.corpus import Corpus  # noqa: F401
    from simcore.matrix.corpus_cache import corpora_in
    from simcore.matrix.workbench import Workbench
    from simcore.utils.store import ArtefactStore

    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    Workbench(ArtefactStore(store)).matrix(corpora_in(sources), corpora_in(targets))
    profiler.disable()
    wall = time.perf_counter() - start
    stats = pstats.Stats(profiler)
    found = {}
    for (filename, _, function), (_, _, _, cumulative, _) in stats.stats.items():
        for stage, suffix, name in STAGES:
            if filename.endswith(suffix) and function == name:
                found[stage] = found.get(stage, 0.0) + cumulative
    table = pd.DataFrame([{"stage": stage, "s": round(found.get(stage, 0.0), 2),
                           "share": f"{found.get(stage, 0.0) / wall:.0%}"} for stage, _, _ in STAGES])
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(r"simcore/", 15)
    top = "\n".join(line for line in out.getvalue().splitlines() if "simcore/" in line or "ncalls" in line)
    return table, top


def estimate_then_run(sources: Path, targets: Path, store: Path, out: Path, jobs: int) -> dict[str, Any]:
    """The estimate made before the matrix (as the dashboard makes it), then the matrix's measured wall time."""
    from simcore.matrix.corpus_cache import corpora_in
    from simcore.matrix.estimates import matrix_seconds
    from simcore.matrix.plan import DEFAULT_MEASURES
    from simcore.matrix.workbench import Workbench
    from simcore.utils.store import ArtefactStore

    bench = Workbench(ArtefactStore(store))
    made = time.perf_counter()
    estimate = matrix_seconds(bench, corpora_in(sources), corpora_in(targets), list(DEFAULT_MEASURES), jobs=jobs)
    made = time.perf_counter() - made
    ran = run(["matrix", "--sources", str(sources), "--targets", str(targets), "--jobs", str(jobs), "--out",
               str(out)], store)
    measured = ran["wall s"]
    return {"paces": "this machine's" if estimate.measured else "defaults", "estimate_s": round(estimate.seconds, 1),
            "measured_s": measured, "ratio": round(estimate.seconds / measured, 2), "cpu_s": ran["cpu s"],
            "load": round(os.getloadavg()[0], 1), "estimate_took_s": round(made, 2),
            "steps": ", ".join(f"{k} {v:.0f}" for k, v in estimate.steps.items() if v >= 0.5)}


def estimates(work: Path, jobs: int) -> None:
    import pandas as pd

    sample = ROOT / "sample_data"
    small, targets = work / "small_sources", work / "small_targets"
    small.mkdir()
    targets.mkdir()
    for name in ("news_1bwb", "biomed_ohsumed_medline"):
        resample(SHARED / "sources" / f"{name}.txt.gz", 200_000, small / f"{name}.txt")
    for name in ("conll2003", "wetlab_wlp"):
        shutil.copy(SHARED / "targets" / name / "test.conll", targets / f"{name}.conll")
    rows = [{"case": "sample, fresh store", **estimate_then_run(sample / "sources", sample / "targets", work / "a",
                                                                  work / "a.csv", jobs)},
            {"case": "2 shared sources x 2 targets", **estimate_then_run(small, targets, work / "a", work / "b.csv", jobs)}]
    from simcore.utils.store import ArtefactStore

    fresh = work / "c"
    ArtefactStore(fresh)  # made a store first: it refuses a folder of other files
    shutil.copytree(work / "a" / "pace", fresh / "pace")  # the paces only: every artefact to build again
    rows.append({"case": "sample, fresh store, recorded paces",
                 **estimate_then_run(sample / "sources", sample / "targets", fresh, work / "c.csv", jobs)})
    with pd.option_context("display.width", 200, "display.max_colwidth", 80):
        print(pd.DataFrame(rows).to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--large", action="store_true", help="also the 14 x 24 shape")
    parser.add_argument("--skip-cold", action="store_true", help="only the large shape")
    parser.add_argument("--profile", action="store_true", help="stage shares and top entries (cProfile)")
    parser.add_argument("--estimates", action="store_true", help="only the estimate against the measured time")
    args = parser.parse_args()
    if not (SHARED / "sources").is_dir():
        sys.exit("../shared/data is not present")
    work = Path(tempfile.mkdtemp(prefix="simcore-bench-matrix-"))
    if args.estimates:
        try:
            estimates(work, args.jobs)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    rows = []
    try:
        if not args.skip_cold:
            sources, targets, new = work / "sources", work / "targets", work / "new"
            for d in (sources, targets, new):
                d.mkdir()
            for path in sorted((SHARED / "sources").glob("*.txt.gz")):
                resample(path, 1_000_000, sources / path.name.replace(".txt.gz", ".txt"))
            for name in sorted(p.name for p in (SHARED / "targets").iterdir()):
                shutil.copy(SHARED / "targets" / name / "test.conll", targets / f"{name}.conll")
            sys.path.insert(0, str(ROOT / "bench"))
            from bench_core import draw_target

            draw_target(100_000, new / "new_target.conll", seed=7)
            for jobs in sorted({1, args.jobs}):
                store = work / f"store{jobs}"
                base = ["matrix", "--sources", str(sources), "--jobs", str(jobs)]
                rows.append({"case": "cold 5 x 5, 1M tokens, 6 measures", "jobs": jobs,
                             **run([*base, "--targets", str(targets), "--out", str(work / "m.csv")], store)})
                if not (work / "warm_base").exists():
                    shutil.copytree(store, work / "warm_base")  # the five sources prepared, the new target not
                rows.append({"case": "new 100k target vs 5 prepared", "jobs": jobs,
                             **run([*base, "--targets", str(new), "--out", str(work / "n.csv")], store)})
                print(rows[-2], rows[-1], flush=True)
            rows.append({"case": "bundled sample, cold (demo's first answer)", "jobs": args.jobs,
                         **run(["matrix", "--sources", str(ROOT / "sample_data" / "sources"), "--targets",
                                str(ROOT / "sample_data" / "targets"), "--out", str(work / "s.csv")], work / "sample")})
            if args.profile:
                for measure in ("ttr", "tvc", "jsd", "ppl", "tvcc", "wvv"):
                    store = work / f"one_{measure}"
                    shutil.copytree(work / "warm_base", store)
                    rows.append({"case": f"new 100k target, {measure} alone", "jobs": 1,
                                 **run(["matrix", "--sources", str(sources), "--targets", str(new), "--jobs", "1",
                                        "--measures", measure, "--out", str(work / "o.csv")], store)})
                cold = profile(sources, targets, work / "profile_store")
                warm = profile(sources, new, work / "profile_store")
                for label, result in (("cold 5 x 5", cold), ("new 100k target vs 5 prepared", warm)):
                    print(f"\nstages, {label}, one process (cProfile; stages nest):")
                    print(result[0].to_string(index=False))
                    print(f"\ntop entries by cumulative time, {label}:")
                    print(result[1])
        if args.large:
            sources, targets = work / "large_sources", work / "large_targets"
            sources.mkdir()
            targets.mkdir()
            made = 0
            for size in (130_000, 400_000, 1_000_000):
                for path in sorted((SHARED / "sources").glob("*.txt.gz")):
                    if made < 14:
                        resample(path, size, sources / f"{path.name.split('.')[0]}_{size // 1000}k.txt", seed=size)
                        made += 1
            for name in sorted(p.name for p in (SHARED / "targets").iterdir()):
                for split in ("train", "dev", "test"):
                    if (SHARED / "targets" / name / f"{split}.conll").exists():
                        conll_parts(SHARED / "targets" / name / f"{split}.conll", 2, targets, f"{name}_{split}")
            names = sorted(p.name for p in targets.iterdir())
            for extra in names[24:]:
                (targets / extra).unlink()
            for jobs in sorted({1, args.jobs}):
                rows.append({"case": "14 sources x 24 targets, 6 measures", "jobs": jobs,
                             **run(["matrix", "--sources", str(sources), "--targets", str(targets), "--jobs",
                                    str(jobs), "--out", str(work / "l.csv")], work / f"large{jobs}")})
                print(rows[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    import pandas as pd

    print(f"\nmachine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    for case, runs in table.groupby("case", sort=False):
        if len(runs) == 2:
            one, two = runs.iloc[0], runs.iloc[1]
            serial = max(0.0, two["wall s"] - two["cpu s"] / 2)  # what two cores did not shorten
            print(f"{case}: 16 processes, estimated {serial + two['cpu s'] / 16:.0f} s "
                  f"(1 process {one['wall s']} s, 2: {two['wall s']} s; CPU {two['cpu s']} s)")


if __name__ == "__main__":
    main()
