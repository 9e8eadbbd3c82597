"""Big sources read in one streaming pass (default), or prepared the old way (--tokenize-all), printed as tables.

Default (one pass, :func:`simcore.corpora.sampling.sample_source`): a source of ``--tokens`` tokens
drawn from all five sources in ../shared/data (units shuffled, resampled with replacement beyond
what exists) is written as ``--shards`` shards in each of three formats, ``.txt.gz``, ``.txt.zst``
and Parquet. For each format, in a fresh process: the read floor (decompress and count whitespace
words, nothing else), then the sampling pass (every file read once, units hashed, the kept ones
held), then the draw (the kept units tokenized and written for every size of the ladder 10k, 30k,
..., up to ``--max-sample``); per stage wall time, CPU time, tokens per second, then peak memory
and the store's disk use. Then the same pass on a local Dask cluster of ``--workers`` workers for
the ``.zst`` shards: wall time against one process.

--tokenize-all: the earlier path (tokenize the whole source, then sample), in one process and on a
local cluster, with every measure; wall time, peak memory and per stage tokens per second.

Usage: nice .venv/bin/python bench/bench_scale.py [--tokens 100M] [--shards 20] [--workers 2]
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


def main_tokenize_all(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=lambda t: int(float(t.rstrip("Mm")) * 1e6) if t[-1] in "Mm" else int(t),
                        default=100_000_000, help="source size in tokens, e.g. 10M (default 100M)")
    parser.add_argument("--shards", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sample-tokens", type=int, default=None, help="default: a tenth of --tokens, at most 10M")
    parser.add_argument("--measures", default=MEASURES)
    parser.add_argument("--tokenize-all", action="store_true")
    args = parser.parse_args(argv)
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


# The one-pass sample

LADDER = (10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000)
FORMATS = {"gz": ".txt.gz", "zst": ".txt.zst", "parquet": ".parquet"}

ONE_PASS = r"""
import json, os, resource, sys, time
from pathlib import Path
from simcore.corpus import Corpus
from simcore.corpora.sampling import draw_samples, read_candidates
from simcore.store import ArtefactStore
fmt, source_dir, store_root, sizes, samples, seed = sys.argv[1:7]
sizes, samples, seed = [int(x) for x in sizes.split(",")], int(samples), int(seed)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def count_words(chunks):
    words, inside = 0, False
    for chunk in chunks:
        if not chunk:
            continue
        words += len(chunk.split()) - (1 if inside and not chunk[:1].isspace() else 0)
        inside = not chunk[-1:].isspace()
    return words
def floor(files):
    if fmt == "parquet":
        import pyarrow.compute as pc, pyarrow.parquet as pq
        words = 0
        for f in files:
            for batch in pq.ParquetFile(f).iter_batches(columns=["text"], batch_size=65536):
                words += pc.sum(pc.list_value_length(pc.utf8_split_whitespace(batch.column(0)))).as_py() or 0
        return words
    words = 0
    for f in files:
        if fmt == "gz":
            import gzip
            handle = gzip.open(f, "rb")
        else:
            import zstandard
            handle = zstandard.ZstdDecompressor().stream_reader(open(f, "rb"), read_across_frames=True)
        with handle:
            words += count_words(iter(lambda: handle.read(1 << 22), b""))
    return words
corpus = Corpus.from_path(source_dir, name="source")
stages = {}
def timed(stage, work):
    t, c = time.perf_counter(), cpu()
    result = work()
    stages[stage] = [time.perf_counter() - t, cpu() - c]
    return result
words = timed("read floor", lambda: floor(list(corpus.files)))
found = timed("sampling pass", lambda: read_candidates(corpus, max(sizes), samples, seed))
peak_pass = peak_mb()
store = ArtefactStore(store_root)
result = timed("draw (tokenize kept units)", lambda: draw_samples(corpus, found, sizes, store))
disk = sum(f.stat().st_size for f in Path(store_root).rglob("*") if f.is_file())
sample_tokens = sum(s.n_tokens for per in result.samples.values() for s in per)
print(json.dumps({"stages": stages, "words": words, "pass_words": found.words, "units": found.units,
                  "peak_pass": peak_pass, "peak": peak_mb(), "disk": disk, "sample_tokens": sample_tokens,
                  "input": sum(f.stat().st_size for f in corpus.files), "fingerprint": result.fingerprint,
                  "kept": sum(len(h) for h in found.heaps),
                  "first": {str(k): v[0].tokens_file.read_bytes()[:200].decode() for k, v in result.samples.items()}}))
"""

ONE_PASS_CLUSTER = r"""
import json, resource, sys, time
from simcore.corpus import Corpus
from simcore.distributed.cluster import open_client
from simcore.distributed.shards import Settings, sample_source_on_cluster
from simcore.measures import MeasureOptions
from simcore.store import ArtefactStore
source_dir, store_root, sizes, samples, seed, workers = sys.argv[1:7]
sizes, samples, workers = [int(x) for x in sizes.split(",")], int(samples), int(workers)
corpus = Corpus.from_path(source_dir, name="source")
settings = Settings(str(ArtefactStore(store_root).root.resolve()), options=MeasureOptions(seed=int(seed)))
with open_client(local_workers=workers) as client:
    start = time.perf_counter()
    result = sample_source_on_cluster(client, settings, corpus, sizes, samples)
    wall = time.perf_counter() - start
    peaks = list(client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024).values())
print(json.dumps({"wall": wall, "peaks": peaks, "fingerprint": result.fingerprint,
                  "first": {str(k): v[0].tokens_file.read_bytes()[:200].decode() for k, v in result.samples.items()}}))
"""


def draw_formats(n_tokens: int, shards: int, folder: Path, seed: int = 1) -> None:
    """The same shuffled units as shards in every format of :data:`FORMATS` (one folder each)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    units, rng = shuffled_units(seed)
    for name in FORMATS:
        (folder / name).mkdir(parents=True)
    per_shard = n_tokens / shards
    i = 0
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    for s in range(shards):
        written, lines = 0, []
        while written < per_shard:
            unit = units[i] if i < len(units) else rng.choice(units)
            lines.append(unit)
            written += len(unit.split())
            i += 1
        data = ("\n".join(lines) + "\n").encode("utf-8")
        (folder / "gz" / f"part-{s:04d}.txt.gz").write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
        (folder / "zst" / f"part-{s:04d}.txt.zst").write_bytes(compressor.compress(data))
        pq.write_table(pa.table({"text": lines}), folder / "parquet" / f"part-{s:04d}.parquet",
                       row_group_size=50_000, compression="zstd")


def main_one_pass(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=lambda t: int(float(t.rstrip("MmGg")) * (1e9 if t[-1] in "Gg" else 1e6))
                        if t[-1] in "MmGg" else int(t), default=100_000_000, help="source size, e.g. 10M, 1G")
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=1, help="samples of each size (default 1)")
    parser.add_argument("--max-sample", type=int, default=10_000_000)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--no-cluster", action="store_true")
    args = parser.parse_args(argv)
    if not (SHARED / "sources").is_dir():
        raise SystemExit("../shared/data is not present")
    sizes = [n for n in LADDER if n <= min(args.max_sample, args.tokens)]
    data = OUT / f"onepass_{args.tokens}_{args.shards}"
    if not data.exists():
        print(f"drawing {args.tokens:,} tokens into {args.shards} shards per format in {data}", file=sys.stderr)
        draw_formats(args.tokens, args.shards, data)
    ladder = ",".join(map(str, sizes))
    results = {}
    for fmt in args.formats.split(","):
        work = Path(tempfile.mkdtemp(prefix="simcore-bench-onepass-"))
        try:
            print(f"running: {fmt}", file=sys.stderr)
            results[fmt] = run(ONE_PASS, fmt, str(data / fmt), str(work / "store"), ladder, str(args.samples), "13")
            print(json.dumps({fmt: {k: v for k, v in results[fmt].items() if k != "first"}}), file=sys.stderr)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"machine: {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f} at the end); source "
          f"{args.tokens:,} whitespace words in {args.shards} shards; ladder {ladder} tokens, "
          f"{args.samples} sample(s) of each\n")
    rows = []
    for fmt, r in results.items():
        for stage, (wall, cpu) in r["stages"].items():
            n = r["words"] if stage != "draw (tokenize kept units)" else r["sample_tokens"]
            rows.append([fmt, stage, f"{r['input'] / 1e6:,.0f}" if stage == "read floor" else "", f"{n:,}",
                         f"{wall:.1f}", f"{cpu:.1f}", f"{n / wall / 1e6:.2f}", f"{n / max(cpu, 1e-9) / 1e6:.2f}"])
    print(table(rows, ["format", "stage", "input MB", "tokens", "wall s", "CPU s", "M tok/s", "M tok/CPU s"]))
    rows = []
    for fmt, r in results.items():
        floor, one = r["stages"]["read floor"][1], r["stages"]["sampling pass"][1]
        rows.append([fmt, f"{one / floor:.1f}x", f"{r['peak_pass']:,.0f}", f"{r['peak']:,.0f}",
                     f"{r['disk'] / 1e6:,.1f}", f"{r['sample_tokens']:,}", f"{r['kept']:,}",
                     "yes" if r["words"] == r["pass_words"] else f"no ({r['pass_words']:,})"])
    print()
    print(table(rows, ["format", "pass / floor (CPU)", "peak MB (pass)", "peak MB (all)", "store disk MB",
                       "sample tokens written", "units kept", "floor words == pass words"]))
    same = len({json.dumps(r["first"]) for r in results.values()}) == 1
    print(f"\nthe same samples from every format: {'yes' if same else 'NO'}")
    if not args.no_cluster and "zst" in results:
        work = Path(tempfile.mkdtemp(prefix="simcore-bench-onepass-"))
        try:
            print(f"running: zst on {args.workers} Dask workers", file=sys.stderr)
            c = run(ONE_PASS_CLUSTER, str(data / "zst"), str(work / "store"), ladder, str(args.samples), "13",
                    str(args.workers))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        single = results["zst"]["stages"]
        one_wall = single["sampling pass"][0] + single["draw (tokenize kept units)"][0]
        print(f"zst, pass + draw: 1 process {one_wall:.1f} s; local cluster of {args.workers} workers "
              f"{c['wall']:.1f} s (speed-up {one_wall / c['wall']:.2f}x); peak MB per worker "
              f"{' / '.join(f'{p:,.0f}' for p in c['peaks'])}; same samples as 1 process: "
              f"{'yes' if c['first'] == results['zst']['first'] and c['fingerprint'] == results['zst']['fingerprint'] else 'NO'}")


def main() -> None:
    if "--tokenize-all" in sys.argv[1:]:
        main_tokenize_all(sys.argv[1:])
    else:
        main_one_pass(sys.argv[1:])


if __name__ == "__main__":
    main()
