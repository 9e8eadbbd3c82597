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

--full: the whole matrix on a large source: ``--tokens`` (default 1G) of the shared units, then pairs
of them joined (distinct units, not repeats) in JSONL.zst shards (one per 10M tokens, records ``{"text": ...}``), through the streaming pass to 10M-token samples
and every measure (tvc, jsd, kl, ttr, ppl, wvv, tvcc) against the five shared targets (dev), in one
fresh process: per stage wall time and CPU time (KenLM's programs included), peak memory, the store's
disk; the work cut as ``--jobs N`` cuts it, its largest piece and the speed-up that allows. With
``--s3-tokens 50M``, the same through moto's S3 server on 127.0.0.1 (``s3://bench/source/``) beside
the local files of that size.

Usage: nice .venv/bin/python bench/bench_scale.py [--tokens 100M] [--shards 20] [--workers 2]
       nice .venv/bin/python bench/bench_scale.py --full [--tokens 1G] [--s3-tokens 50M]
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
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_core import SHARED, shuffled_units  # noqa: E402

OUT = ROOT / "bench" / "out"
PYTHON = sys.executable
MEASURES = "tvc,jsd,ppl,wvv"

COMMON = r"""
import json, os, resource, sys, time
from pathlib import Path
from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.utils.store import ArtefactStore
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
from simcore.corpora.corpus import Corpus
from simcore.corpora.sampling import draw_samples, read_candidates
from simcore.utils.store import ArtefactStore
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
from simcore.corpora.corpus import Corpus
from simcore.distributed.cluster import open_client
from simcore.distributed.shards import Settings, sample_source_on_cluster
from simcore.measures import MeasureOptions
from simcore.utils.store import ArtefactStore
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


# The whole matrix: a large source through the pass to 10M-token samples and every measure

FULL_MEASURES = "tvc,jsd,kl,ttr,ppl,wvv,tvcc"

FULL = r"""
import json, os, resource, sys, time
from pathlib import Path
from simcore.corpora.corpus import Corpus
from simcore.matrix.corpus_cache import STREAM_SIZES
from simcore.corpora.sampling import Candidates, draw_samples, pieces, remember_pass, shard_candidates
from simcore.matrix.workbench import Workbench
from simcore.measures import get_measure
from simcore.utils.store import ArtefactStore
source_at, targets_at, store_root, n_sample, measures, options = sys.argv[1:7]
n_sample, measures, targets_at = int(n_sample), measures.split(","), targets_at.split(",")
options = json.loads(options) or None
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
def peak_mb(who):
    if who == resource.RUSAGE_SELF:  # this process's own peak: ru_maxrss keeps the forking parent's size
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
    return resource.getrusage(who).ru_maxrss / 1024
stages, work_pieces = {}, []
def timed(stage, work, piece=None):
    t, c = time.perf_counter(), cpu()
    result = work()
    wall, used = time.perf_counter() - t, cpu() - c
    old = stages.get(stage, [0.0, 0.0])
    stages[stage] = [old[0] + wall, old[1] + used]
    work_pieces.append([piece or stage, used])
    return result
start, cpu_start, load_before = time.perf_counter(), cpu(), os.getloadavg()[0]
source = Corpus.from_path(source_at, name="source", storage_options=options)
targets = [Corpus.from_path(t, name=Path(t).parent.name) for t in targets_at]
bench = Workbench(ArtefactStore(store_root))
seed, tokenizer = bench.options.seed, bench.tokenizer
found = Candidates(max(STREAM_SIZES), 1, seed)
work = pieces(source)
for f, a, b in work:  # what read_candidates does, each piece timed: the pass's pieces
    found.merge(timed("streaming pass", lambda: shard_candidates(source, f, max(STREAM_SIZES), 1, seed, span=(a, b)),
                      f"pass: {f.name}" + (f" bytes {a:,}-{b:,}" if b >= 0 else "")))
peak_pass = peak_mb(resource.RUSAGE_SELF)
drawn = timed("draw (tokenize the kept units)", lambda: draw_samples(source, found, STREAM_SIZES, bench.store, tokenizer))
remember_pass(source, drawn, 1, seed, bench.store, tokenizer)  # as sample_source does: the Workbench finds it
prepared = timed("samples from the store", lambda: bench.source(source, n_sample, 1))
for name in measures:
    timed(f"prepare {name}", lambda: get_measure(name).prepare(prepared[0]))
ready = [timed("targets (read, tokenize)", lambda: bench.target(t), f"target: {t.name}") for t in targets]
for name in measures:
    for t in ready:
        timed(f"score {name}", lambda: bench.cell(prepared, t, name), f"score {name}: {t.tokenized.name}")
table = timed("table (from the store)", lambda: bench.matrix([source], targets, measures, sample_tokens=n_sample))
disk = sum(f.stat().st_size for f in Path(store_root).rglob("*") if f.is_file())
print(json.dumps({"wall": time.perf_counter() - start, "cpu": cpu() - cpu_start, "stages": stages,
                  "pieces": work_pieces, "words": found.words, "units": found.units,
                  "sample": prepared[0].sample.n_tokens, "peak_pass": peak_pass,
                  "peak": [peak_mb(resource.RUSAGE_SELF), peak_mb(resource.RUSAGE_CHILDREN)], "disk": disk,
                  "load": [load_before, os.getloadavg()[0]],
                  "errors": sorted({str(e) for e in table["error"] if isinstance(e, str) and e}),
                  "values": {f"{m} {t}": v for m, t, v in zip(table["measure"], table["target"], table["value"])}}))
"""


def draw_jsonl_zst(n_tokens: int, shards: int, folder: Path, seed: int = 1) -> None:
    """Units from all five shared sources, shuffled, then pairs of random units joined as one, as ``shards``
    JSONL.zst shards of records ``{"text": unit}``, written as they are drawn.

    Not units drawn again, as draw_shards does: a unit repeated a hundred times (1B tokens from the
    shared 10M) has one key, so the pass would keep a hundred copies of a few thousand units, and the
    sample would be a hundredth as diverse as one of distinct units (a duplicated corpus's sample is)."""
    import orjson
    import zstandard

    units, rng = shuffled_units(seed)
    words = [len(u.split()) for u in units]
    records = [orjson.dumps({"text": u}) for u in units]  # each unit's record encoded once
    folder.mkdir(parents=True)
    per_shard = n_tokens / shards
    i = 0
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    for s in range(shards):
        written = 0
        with open(folder / f"part-{s:05d}.jsonl.zst", "wb") as raw, compressor.stream_writer(raw) as out:
            lines = []
            while written < per_shard:
                if i < len(units):
                    lines.append(records[i])
                    written += words[i]
                else:  # two random units as one: distinct, where a unit drawn again would be a duplicate
                    a, b = rng.randrange(len(units)), rng.randrange(len(units))
                    lines.append(orjson.dumps({"text": f"{units[a]} {units[b]}"}))
                    written += words[a] + words[b]
                i += 1
                if len(lines) == 10_000:
                    out.write(b"\n".join(lines) + b"\n")
                    lines = []
            if lines:
                out.write(b"\n".join(lines) + b"\n")


def s3_server() -> tuple[Any, dict[str, str]]:
    """moto's S3 server on 127.0.0.1 (as tests/test_corpora_remote.py starts it) and options for s3fs."""
    import logging

    from moto.server import ThreadedMotoServer

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        os.environ.pop(name, None)
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
    os.environ["AWS_SHARED_CREDENTIALS_FILE"] = "/nonexistent"
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, {"key": "bench", "secret": "bench-secret", "endpoint_url": f"http://{host}:{port}"}


def full_run(source_at: str, targets: list[Path], n_sample: int, measures: str,
             options: dict[str, str] | None = None) -> dict:
    work = Path(tempfile.mkdtemp(prefix="simcore-bench-full-"))
    try:
        result = run(FULL, source_at, ",".join(map(str, targets)), str(work / "store"), str(n_sample), measures,
                     json.dumps(options or {}))
        kept = OUT / f"full_result_{source_at.strip('/').replace('/', '_').replace(':', '')[-60:]}.json"
        kept.write_text(json.dumps(result))  # the raw figures, kept
        print(f"figures kept in {kept}", file=sys.stderr)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def print_full(label: str, r: dict, input_bytes: int, jobs_note: bool = True) -> None:
    words = r["words"]
    print(f"{label}: {words:,} whitespace words in {r['units']:,} units, {input_bytes / 1e9:.2f} GB compressed; "
          f"sample {r['sample']:,} tokens; load average {r['load'][0]:.1f} → {r['load'][1]:.1f}\n")
    rows = []
    for stage, (wall, cpu) in r["stages"].items():
        rate = f"{words / cpu / 1e6:.2f}" if stage == "streaming pass" and cpu else ""
        rows.append([stage, f"{wall:.1f}", f"{cpu:.1f}", rate])
    rows.append(["all", f"{r['wall']:.1f}", f"{r['cpu']:.1f}", f"{words / r['cpu'] / 1e6:.2f}"])
    print(table(rows, ["stage", "wall s", "CPU s (incl. KenLM's programs)", "M words/CPU s"]))
    print(f"\npeak memory: {r['peak_pass']:,.0f} MB after the pass, {r['peak'][0]:,.0f} MB in all "
          f"({r['peak'][1]:,.0f} MB in KenLM's programs); store on disk {r['disk'] / 1e6:,.0f} MB")
    if jobs_note:
        print_pieces(r["pieces"])
    if r["errors"]:
        print("errors: " + "; ".join(r["errors"]))
    print("values: " + ", ".join(f"{k} {v:.6g}" for k, v in sorted(r["values"].items())) + "\n")


def print_pieces(measured: list[list]) -> None:
    """The run's work cut as simcore.matrix.schedule cuts it with --jobs N (fewer targets than 2N: a measure's part
    scores every target, WVV's one target), its largest piece, and the speed-up that allows: at most the
    total over the longest chain of pieces that wait for each other (the slowest piece of the pass, the
    draw, a measure's preparation, its slowest part), and at most N."""
    parts: dict[str, float] = {}
    for name, cpu in measured:
        if name in ("table (from the store)", "samples from the store"):
            continue
        if name.startswith("score ") and not name.startswith("score wvv"):
            name = name.split(":")[0]  # one part: a measure with every target
        parts[name] = parts.get(name, 0.0) + cpu
    total = sum(parts.values())
    name, largest = max(parts.items(), key=lambda item: item[1])
    reading = max(cpu for n, cpu in parts.items() if n.startswith(("pass:", "target:")))
    draw = sum(cpu for n, cpu in parts.items() if n.startswith("draw"))
    chains = {}
    for n, cpu in parts.items():
        if n.startswith("prepare "):
            measure = n.removeprefix("prepare ")
            scoring = max((c for p, c in parts.items() if p.split(":")[0] == f"score {measure}"), default=0.0)
            chains[measure] = reading + draw + cpu + scoring
    measure, chain = max(chains.items(), key=lambda item: item[1])
    print(f"pieces as --jobs N runs them: {len(parts)}, {total:.1f} CPU s in all; the largest {name!r}: "
          f"{largest:.1f} CPU s ({100 * largest / total:.1f}%; 16x needs every piece under 6.25%)")
    print(f"longest chain of pieces that wait for each other ({measure}: slowest piece of the pass or a target "
          f"{reading:.1f} s, draw {draw:.1f} s, preparing and its slowest part {chain - reading - draw:.1f} s): "
          f"{chain:.1f} CPU s")
    for sources in (1, 5):
        work = sources * total
        print(f"  {sources} source(s) like this one: --jobs 16 gains at most {work / max(chain, work / 16):.1f}x, "
              f"--jobs 64 at most {work / max(chain, work / 64):.1f}x")


def main_full(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--tokens", type=lambda t: int(float(t.rstrip("MmGg")) * (1e9 if t[-1] in "Gg" else 1e6))
                        if t[-1] in "MmGg" else int(t), default=1_000_000_000, help="source size, e.g. 10M, 1G")
    parser.add_argument("--shards", type=int, default=0, help="default: one per 10M tokens, at least 16")
    parser.add_argument("--sample-tokens", type=int, default=10_000_000)
    parser.add_argument("--measures", default=FULL_MEASURES)
    parser.add_argument("--s3-tokens", type=lambda t: int(float(t.rstrip("Mm")) * 1e6) if t[-1] in "Mm" else int(t),
                        default=0, help="also this size through moto's S3 server, beside the local run (e.g. 50M)")
    args = parser.parse_args(argv)
    if not (SHARED / "sources").is_dir():
        raise SystemExit("../shared/data is not present")
    targets = [SHARED / "targets" / name / "dev.conll" for name in sorted(os.listdir(SHARED / "targets"))]

    def source_of(n_tokens: int) -> Path:
        shards = args.shards or max(16, n_tokens // 10_000_000)
        folder = OUT / f"full_distinct_{n_tokens}_{shards}"
        if not folder.exists():
            print(f"drawing {n_tokens:,} tokens into {shards} JSONL.zst shards in {folder}", file=sys.stderr)
            t = time.perf_counter()
            draw_jsonl_zst(n_tokens, shards, folder / "partial")
            (folder / "partial").rename(folder / "source")
            print(f"drawn in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        return folder / "source"

    local = source_of(args.tokens)
    size = lambda folder: sum(f.stat().st_size for f in folder.iterdir())  # noqa: E731
    print(f"machine: {os.cpu_count()} cores; targets {', '.join(t.parent.name for t in targets)} (dev); "
          f"measures {args.measures}; one process (--jobs 1)\n")
    print(f"running: local, {args.tokens:,} tokens", file=sys.stderr)
    r = full_run(str(local), targets, args.sample_tokens, args.measures)
    print_full(f"local files ({local})", r, size(local))
    if args.s3_tokens:
        import fsspec

        small = local if args.s3_tokens == args.tokens else source_of(args.s3_tokens)
        server, options = s3_server()
        try:
            fs = fsspec.filesystem("s3", skip_instance_cache=True, **options)
            fs.mkdir("bench")
            fs.put(str(small) + "/", "bench/source/", recursive=True)
            server_cpu = time.process_time()
            print(f"running: S3, {args.s3_tokens:,} tokens", file=sys.stderr)
            remote = full_run("s3://bench/source/", targets, args.sample_tokens, args.measures, options)
            server_cpu = time.process_time() - server_cpu
        finally:
            server.stop()
        near = r if small == local else full_run(str(small), targets, args.sample_tokens, args.measures)
        if small != local:
            print_full(f"local files ({small})", near, size(small))
        print_full("the same through moto's S3 server (s3://bench/source/)", remote, size(small), jobs_note=False)
        print(f"S3 server's own CPU (moto, in the bench's process): {server_cpu:.1f} s; pass wall "
              f"{remote['stages']['streaming pass'][0]:.1f} s from S3 against {near['stages']['streaming pass'][0]:.1f} s "
              f"from local files; the same values: "
              f"{'yes' if json.dumps(remote['values']) == json.dumps(near['values']) else 'NO'}")


def main() -> None:
    if "--full" in sys.argv[1:]:
        main_full(sys.argv[1:])
    elif "--tokenize-all" in sys.argv[1:]:
        main_tokenize_all(sys.argv[1:])
    else:
        main_one_pass(sys.argv[1:])


if __name__ == "__main__":
    main()
