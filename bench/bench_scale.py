"""One large sharded source prepared in one process and on a local Dask cluster, printed as tables.

The source is drawn from all five sources in ../shared/data (units shuffled, resampled with
replacement beyond what exists) and written as ``--shards`` gzip files; it is sampled down to
``--sample-tokens`` (default a tenth of it, at most 10M, as simcore does) and scored against the
CoNLL-2003 dev set. Each run starts from an empty store in a fresh process and reports:
wall time, peak memory (per worker, and of the programs each started), and per stage the tokens
it handled, the time it was busy and its rate; on the cluster, busy time is the sum of its tasks'
compute time over all workers, so tokens per busy second is the rate of one worker.

Usage: nice .venv/bin/python bench/bench_scale.py [--tokens 100M] [--shards 100] [--workers 2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_core import SHARED, shuffled_units  # noqa: E402

OUT = ROOT / "bench" / "out"
PYTHON = sys.executable
MEASURES = "tvc,jsd,ppl,wvv"

COMMON = r"""
import json, os, resource, sys, time
from pathlib import Path
from simcore.corpus import Corpus
from simcore.matrix import Workbench
from simcore.store import ArtefactStore
mode, source_dir, target_path, store_root, n_sample, measures = sys.argv[1:7]
n_sample, measures = int(n_sample), measures.split(",")
source = Corpus.from_path(source_dir, name="source")
target = Corpus.from_path(target_path, name="target")
bench = Workbench(ArtefactStore(store_root))
def peak_mb(who):
    return resource.getrusage(who).ru_maxrss / 1024
def cpu_s():
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))
load_before = os.getloadavg()[0]
"""

SINGLE = COMMON + r"""
from simcore.measures import get_measure
stages, start, cpu_start = {}, time.perf_counter(), cpu_s()
cpu = {}
def timed(stage, work):
    t, c = time.perf_counter(), cpu_s()
    result = work()
    stages[stage] = stages.get(stage, 0.0) + time.perf_counter() - t
    cpu[stage] = cpu.get(stage, 0.0) + cpu_s() - c
    return result
tokenized = timed("tokenize", lambda: bench.tokenize(source))
sample = timed("sample", lambda: bench.source(source, n_sample, 1))[0]
groups = {"counts": [m for m in measures if m not in ("ppl", "wvv")], "kenlm": ["ppl"], "skip-gram": ["wvv"]}
for stage, names in groups.items():
    for name in names:
        if name in measures:
            timed(stage, lambda: get_measure(name).prepare(sample))
timed("tokenize", lambda: bench.target(target))
table = timed("score", lambda: bench.matrix([source], [target], measures, sample_tokens=n_sample))
print(json.dumps({"wall": time.perf_counter() - start, "stages": stages, "cpu": cpu, "cpu_total": cpu_s() - cpu_start,
                  "load": [load_before, os.getloadavg()[0]], "tokens": tokenized.n_tokens,
                  "sample": sample.sample.n_tokens, "target": bench.tokenize(target).n_tokens,
                  "values": dict(zip(table["measure"], table["value"])),
                  "peak": [[peak_mb(resource.RUSAGE_SELF), peak_mb(resource.RUSAGE_CHILDREN)]]}))
"""

CLUSTER = COMMON + r"""
workers = int(sys.argv[7])
from distributed import get_task_stream
from simcore.distributed.cluster import open_client
from simcore.distributed.prepare import cluster_matrix
started = time.perf_counter()
with open_client(local_workers=workers) as client:
    startup = time.perf_counter() - started
    cpu_before = sum(client.run(cpu_s).values()) + cpu_s()
    start = time.perf_counter()
    with get_task_stream(client) as stream:
        table = cluster_matrix(client, bench, [source], [target], measures, sample_tokens=n_sample)
    wall = time.perf_counter() - start
    peaks = list(client.run(lambda: [peak_mb(resource.RUSAGE_SELF), peak_mb(resource.RUSAGE_CHILDREN)]).values())
    # measured before the cluster closes: afterwards this process's children's CPU would include the workers'
    cpu_run = sum(client.run(cpu_s).values()) + cpu_s() - cpu_before
stages = {}
for task in stream.data:
    stage = task["key"][len("simcore-"):-33] if str(task["key"]).startswith("simcore-") else "other"
    for part in task["startstops"]:
        if part["action"] == "compute":
            busy, first, last = stages.get(stage, (0.0, part["start"], part["stop"]))
            stages[stage] = (busy + part["stop"] - part["start"], min(first, part["start"]), max(last, part["stop"]))
print(json.dumps({"wall": wall, "startup": startup, "stages": stages, "cpu_total": cpu_run,
                  "load": [load_before, os.getloadavg()[0]], "tokens": bench.tokenize(source).n_tokens,
                  "target": bench.tokenize(target).n_tokens,
                  "values": dict(zip(table["measure"], table["value"])), "peak": peaks}))
"""

# cluster task names -> the stages of the single-process run
STAGE_OF = {"tokenize": "tokenize", "fingerprint": "tokenize", "join": "tokenize", "sample-plan": "sample",
            "sample-rows": "sample", "sample": "sample", "sample-join": "sample", "prepare-ppl": "kenlm",
            "prepare-wvv": "skip-gram", "target": "score", "score": "score"}
STAGES = ["tokenize", "sample", "counts", "kenlm", "skip-gram", "score"]


def draw_shards(n_tokens: int, shards: int, folder: Path, seed: int = 1) -> None:
    """Units from all five shared sources, shuffled, resampled beyond what exists, cut into gzip shards."""
    units, rng = shuffled_units(seed)
    folder.mkdir(parents=True)
    per_shard = n_tokens / shards
    i = 0
    for s in range(shards):
        written, lines = 0, []
        while written < per_shard:
            unit = units[i] if i < len(units) else rng.choice(units)
            lines.append(unit)
            written += len(unit.split())
            i += 1
        with gzip.open(folder / f"part-{s:04d}.txt.gz", "wt", encoding="utf-8", compresslevel=1) as out:
            out.write("\n".join(lines) + "\n")


def run(script: str, *args: str) -> dict:
    result = subprocess.run([PYTHON, "-c", script, *args], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) for x, w in zip(r, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def stage_tokens(stage: str, source: int, sample: int, target: int, cells: int) -> int:
    return {"tokenize": source + target, "sample": source, "score": target * cells}.get(stage, sample)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=lambda t: int(float(t.rstrip("Mm")) * 1e6) if t[-1] in "Mm" else int(t),
                        default=100_000_000, help="source size in tokens, e.g. 10M (default 100M)")
    parser.add_argument("--shards", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sample-tokens", type=int, default=None, help="default: a tenth of --tokens, at most 10M")
    parser.add_argument("--measures", default=MEASURES)
    args = parser.parse_args()
    if not (SHARED / "sources").is_dir():
        raise SystemExit("../shared/data is not present")
    sample = args.sample_tokens or min(10_000_000, args.tokens // 10)
    data = OUT / f"scale_{args.tokens}_{args.shards}"
    if not data.exists():
        print(f"drawing {args.tokens:,} tokens into {args.shards} gzip shards in {data}", file=sys.stderr)
        draw_shards(args.tokens, args.shards, data / "source")
    target = SHARED / "targets" / "conll2003" / "dev.conll"
    results = {}
    for label, script, extra in (("1 process", SINGLE, []),
                                 (f"local cluster, {args.workers} workers", CLUSTER, [str(args.workers)])):
        work = Path(tempfile.mkdtemp(prefix="simcore-bench-scale-"))
        try:
            print(f"running: {label}", file=sys.stderr)
            results[label] = run(script, "x", str(data / "source"), str(target), str(work / "store"), str(sample),
                                 args.measures, *extra)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    single, cluster = results.values()
    cells = len(args.measures.split(","))
    print(f"machine: {os.cpu_count()} cores; source {single['tokens']:,} tokens in {args.shards} gzip shards, "
          f"sampled to {single['sample']:,}; target {single['target']:,} tokens; measures {args.measures}\n")
    rows = []
    for label, r in results.items():
        peaks = r["peak"]
        rows.append([label, f"{r['wall']:.1f}", f"{r.get('startup', 0):.1f}", f"{r['cpu_total']:.1f}",
                     " / ".join(f"{max(p):,.0f}" for p in peaks), " → ".join(f"{v:.1f}" for v in r["load"])])
    # a process's peak, or that of a KenLM program it ran (Linux counts a child's peak from its parent's size at exec)
    print(table(rows, ["run", "wall s", "cluster start s", "CPU s (all processes)",
                       "peak MB per worker (incl. its KenLM programs)", "load average (start → end)"]))
    print()
    busy: dict[str, list[float]] = {}
    for name, (seconds, first, last) in cluster["stages"].items():
        stage = STAGE_OF.get(name, "counts" if name.startswith("prepare-") else name)
        entry = busy.setdefault(stage, [0.0, first, last])
        entry[0] += seconds
        entry[1], entry[2] = min(entry[1], first), max(entry[2], last)
    rows = []
    for stage in STAGES:
        n = stage_tokens(stage, single["tokens"], single["sample"], single["target"], cells)
        one, cpu = single["stages"].get(stage), single["cpu"].get(stage)
        many = busy.get(stage)
        rows.append([stage, f"{n:,}", f"{one:.1f}" if one else "-", f"{n / one:,.0f}" if one else "-",
                     f"{cpu:.1f}" if cpu else "-", f"{n / cpu:,.0f}" if cpu else "-",
                     f"{many[0]:.1f}" if many else "-", f"{n / many[0]:,.0f}" if many else "-",
                     f"{many[2] - many[1]:.1f}" if many else "-"])
    # tok/CPU s: the rate of one core of its own, what the machine's load does not change much
    print(table(rows, ["stage", "tokens", "1 proc s", "1 proc tok/s", "1 proc CPU s", "tok/CPU s",
                       "cluster busy s", "tok/busy s", "cluster span s"]))
    same = {m: (single["values"][m], cluster["values"][m]) for m in single["values"]}
    print("\nvalues (1 process, cluster): " + ", ".join(f"{m} {a:.6g} {b:.6g}" for m, (a, b) in same.items()))


if __name__ == "__main__":
    main()
