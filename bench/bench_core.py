"""Speed and memory of the similarity core, printed as tables.

1. For a source of 1M and of 10M tokens (units drawn from all five sources in ../shared/data,
   resampled with replacement when more are needed than exist): time, tokens per second and
   peak memory of each preparation stage, each run in a fresh process.
2. The cold time of the full 5 x 5 matrix over ../shared/data (all six measures, empty store).
3. The warm time to score a new 100k-token target against the 5 prepared sources.

Usage: .venv/bin/python bench/bench_core.py [--sizes 1000000,10000000] [--skip-matrix]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "bench" / "out"
PYTHON = sys.executable

STAGE = r"""
import json, resource, sys, time
from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.utils.store import ArtefactStore
from simcore.measures import get_measure
stage, path, store_root = sys.argv[1:4]
bench = Workbench(ArtefactStore(store_root))
corpus = Corpus.from_path(path)
start = time.perf_counter()
if stage == "tokenize":
    tokens = bench.tokenize(corpus).n_tokens
else:
    source = bench.source(corpus, 10**12, 1)[0]
    start = time.perf_counter()
    get_measure(stage).prepare(source)
    tokens = source.sample.n_tokens
seconds = time.perf_counter() - start
self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "tokens": tokens, "peak_mb": max(self_kb, child_kb) / 1024}))
"""

STAGES = [("tokenize", "tokenize (all)"), ("tvc", "counts: TVC/TVcC/TTR/JSD"), ("ppl", "KenLM lmplz+build_binary: PPL"),
          ("wvv", "skip-gram: WVV")]


def shuffled_units(seed: int = 1) -> tuple[list[str], random.Random]:
    """Every unit of the five shared sources, shuffled, and the generator that shuffled them."""
    units = []
    for f in sorted((SHARED / "sources").glob("*.txt.gz")):
        with gzip.open(f, "rt", encoding="utf-8") as handle:
            units.extend(line.strip() for line in handle if line.strip())
    rng = random.Random(seed)
    rng.shuffle(units)
    return units, rng


def draw_source(n_tokens: int, path: Path, seed: int = 1) -> None:
    """Units from all five sources, shuffled; resampled with replacement beyond what exists."""
    units, rng = shuffled_units(seed)
    written, i = 0, 0
    with open(path, "w", encoding="utf-8") as out:
        while written < n_tokens:
            unit = units[i] if i < len(units) else rng.choice(units)
            out.write(unit + "\n")
            written += len(unit.split())
            i += 1


def draw_target(n_tokens: int, path: Path, seed: int) -> None:
    """A new target: sentences of the ScienceIE and WetLab training sets, shuffled."""
    sentences, current = [], []
    for name in ("scienceie", "wetlab_wlp"):
        for line in (SHARED / "targets" / name / "train.conll").read_text(encoding="utf-8").splitlines():
            if line.strip():
                current.append(line)
            elif current:
                sentences.append(current)
                current = []
    random.Random(seed).shuffle(sentences)
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        for s in sentences:
            if written >= n_tokens:
                break
            out.write("\n".join(s) + "\n\n")
            written += len(s)


def run_stage(stage: str, path: Path, store: Path) -> dict:
    result = subprocess.run([PYTHON, "-c", STAGE, stage, str(path), str(store)], capture_output=True, text=True,
                            cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(result.stderr)
    return json.loads(result.stdout.strip().splitlines()[-1])


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) for x, w in zip(r, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def bench_preparation(sizes: list[int]) -> None:
    rows = []
    for size in sizes:
        work = Path(tempfile.mkdtemp(prefix="simcore-bench-"))
        try:
            source = OUT / f"source_{size // 1_000_000}M.txt"
            if not source.exists():
                draw_source(size, source)
            total, peak = 0.0, 0.0
            for stage, label in STAGES:
                r = run_stage(stage, source, work / "store")
                total += r["seconds"]
                peak = max(peak, r["peak_mb"])
                rows.append([f"{size / 1e6:g}M", label, f"{r['seconds']:.1f}", f"{r['tokens'] / r['seconds']:,.0f}",
                             f"{r['peak_mb']:,.0f}"])
            rows.append([f"{size / 1e6:g}M", "all measures", f"{total:.1f}", f"{size / total:,.0f}", f"{peak:,.0f}"])
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(table(rows, ["source", "stage", "seconds", "tokens/s", "peak MB"]))


def bench_matrix() -> None:
    work = Path(tempfile.mkdtemp(prefix="simcore-bench-"))
    env = {**os.environ, "SIMCORE_CACHE": str(work / "store")}
    try:
        targets = work / "targets"
        targets.mkdir()
        for name in sorted(p.name for p in (SHARED / "targets").iterdir()):
            os.symlink(SHARED / "targets" / name, targets / name)
        base = [PYTHON, "-m", "simcore", "matrix", "--sources", str(SHARED / "sources"), "--quiet"]
        start = time.perf_counter()
        subprocess.run([*base, "--targets", str(targets), "--out", str(work / "m.csv")], check=True, env=env, cwd=ROOT)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([*base, "--targets", str(targets), "--out", str(work / "m2.csv")], check=True, env=env, cwd=ROOT)
        rerun = time.perf_counter() - start
        new = work / "new"
        new.mkdir()
        draw_target(100_000, new / "new_target.conll", seed=int(time.time()))
        start = time.perf_counter()
        subprocess.run([*base, "--targets", str(new), "--out", str(work / "m3.csv")], check=True, env=env, cwd=ROOT)
        warm = time.perf_counter() - start
        print(table([["full 5 x 5 matrix, all 6 measures, empty store (cold)", f"{cold:.1f}"],
                     ["same matrix again (every cell stored)", f"{rerun:.1f}"],
                     ["new 100k-token target vs 5 prepared sources (warm)", f"{warm:.1f}"]],
                    ["run (python -m simcore matrix, wall clock incl. start-up)", "seconds"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--skip-matrix", action="store_true")
    args = parser.parse_args()
    if not (SHARED / "sources").is_dir():
        raise SystemExit("../shared/data is not present")
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}\n")
    bench_preparation([int(s) for s in args.sizes.split(",")])
    if not args.skip_matrix:
        print()
        bench_matrix()


if __name__ == "__main__":
    main()
