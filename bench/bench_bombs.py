"""Peak memory and time of each hostile input simcore must refuse (or read) within a stated budget.

Each case runs in a subprocess of its own, so its peak resident memory (``resource.ru_maxrss`` of
that child) is the case's alone. The budgets are the readers' limits: a compressed file may expand
to ``max(1 GiB, 200 x its size)`` and is decompressed (counted, not kept) for its first 8 MB before
anything is read; a Parquet file's encoded size is read from its footer, and what dictionary-encoded
Parquet and Arrow rows decode to is counted from their indices before any row is read
(:mod:`simcore.corpora.expansion`); a matrix cell holds at most 100,000 replicates.

The ``select`` cases score a pool whose lines are far longer than sentences (a one-line ``.dat`` pool,
a pool with one multi-megabyte line) against the bundled news target: a selection unit holds at most
100,000 characters (longer lines are cut at spaces), a batch at most about 4M characters, the pool
sample at most 30M characters, and the entities tagger gets pieces of at most 10,000 characters.

Usage: .venv/bin/python bench/bench_bombs.py [--gib 4] [--pool-mb 100] [--line-mb 5] [--only TEXT]
(--gib: the zstd/gzip bombs' expanded size; --pool-mb: the one-line pools; --line-mb: the entities pool's
long line; --only: the cases whose name holds TEXT)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_MAKE = {
    "zstd bomb (short lines)": """
        import zstandard
        chunk = b"a b\\n" * (1 << 20)
        with open(D / "bomb.txt.zst", "wb") as f, zstandard.ZstdCompressor(level=3).stream_writer(f) as w:
            for _ in range(int(GIB * 256)):
                w.write(chunk)
        PATH = D / "bomb.txt.zst"
    """,
    "gzip bomb (short lines)": """
        import gzip
        chunk = b"a b\\n" * (1 << 20)
        with gzip.open(D / "bomb.txt.gz", "wb", 6) as w:
            for _ in range(int(GIB * 256)):
                w.write(chunk)
        PATH = D / "bomb.txt.gz"
    """,
    "parquet, 1.2 GB of text in one row group": """
        import pyarrow as pa, pyarrow.parquet as pq
        pq.write_table(pa.table({"text": ["a " * 25_000_000 + str(i) for i in range(24)]}), D / "bomb.parquet",
                       compression="zstd", row_group_size=24, use_dictionary=False)
        PATH = D / "bomb.parquet"
    """,
    "parquet, dictionary-encoded, --gib GiB of one value": """
        import pyarrow as pa, pyarrow.parquet as pq
        rows = int(GIB * 1074)
        pq.write_table(pa.table({"text": ["a " * 500_000] * rows}), D / "bomb.parquet", compression="zstd",
                       use_dictionary=True, row_group_size=rows)
        PATH = D / "bomb.parquet"
    """,
    "parquet, dictionary-encoded, 0.9 GiB (under the limit)": """
        import pyarrow as pa, pyarrow.parquet as pq
        pq.write_table(pa.table({"text": ["a " * 500_000] * 900}), D / "bomb.parquet", compression="zstd",
                       use_dictionary=True)
        PATH = D / "bomb.parquet"
    """,
    "arrow stream, dictionary-encoded, --gib GiB": """
        import pyarrow as pa
        rows = int(GIB * 1074)
        t = pa.table({"text": pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["a " * 500_000]))})
        with pa.OSFile(str(D / "bomb.arrow"), "wb") as sink, pa.ipc.new_stream(sink, t.schema) as w:
            w.write_table(t)
        PATH = D / "bomb.arrow"
    """,
    "save_to_disk folder, dictionary-encoded, --gib GiB": """
        import json, pyarrow as pa
        rows = int(GIB * 1074)
        t = pa.table({"text": pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["a " * 500_000]))})
        (D / "saved").mkdir()
        with pa.OSFile(str(D / "saved" / "data-00000-of-00001.arrow"), "wb") as sink, pa.ipc.new_stream(sink, t.schema) as w:
            w.write_table(t)
        (D / "saved" / "state.json").write_text(json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}))
        PATH = D / "saved"
    """,
    "select ppl, dictionary-encoded parquet pool, --gib GiB": """
        import pyarrow as pa, pyarrow.parquet as pq
        rows = int(GIB * 1074)
        pq.write_table(pa.table({"text": ["a " * 500_000] * rows}), D / "pool.parquet", compression="zstd",
                       use_dictionary=True, row_group_size=rows)
        PATH = D / "pool.parquet"
    """,
    "matrix cell of 3,000,000 replicates": """
        reps = " ".join(["0.5"] * 3_000_000)
        (D / "m.csv").write_text("source,target,measure,value,replicates\\nnews,conll,tvc,0.5," + reps + "\\n")
        PATH = D / "m.csv"
    """,
    "matrix ladder nested 100,000 deep": """
        cell = '"' + '{""1"": ' * 100_000 + "1" + "}" * 100_000 + '"'
        (D / "m.csv").write_text("source,target,measure,value,ladder\\nnews,conll,tvc,0.5," + cell + "\\n")
        PATH = D / "m.csv"
    """,
    "select ppl, one-line .dat pool": """
        import random
        words = [w for line in open(SAMPLE / "sources" / "news.txt", encoding="utf-8") for w in line.split()]
        rng = random.Random(0)
        with open(D / "pool.dat", "w", encoding="utf-8") as f:
            for _ in range(int(POOL_MB * 1_000_000) // 60_000):
                f.write(" ".join(rng.choice(words) for _ in range(10_000)))
            f.write("\\n")
        PATH = D / "pool.dat"
    """,
    "select cosine, one-line .dat pool": """
        import shutil
        words = open(SAMPLE / "sources" / "news.txt", encoding="utf-8").read().split()
        text = " ".join(words)
        with open(D / "pool.dat", "w", encoding="utf-8") as f:
            for _ in range(int(POOL_MB * 1_000_000) // (len(text) + 1) + 1):
                f.write(text + " ")
            f.write("\\n")
        PATH = D / "pool.dat"
    """,
    "select entities, one long line among sentences": """
        lines = open(SAMPLE / "sources" / "news.txt", encoding="utf-8").read().splitlines()
        long = " ".join(lines)
        long = (long + " ") * (int(LINE_MB * 1_000_000) // (len(long) + 1) + 1)
        (D / "pool.txt").write_text("\\n".join(lines[:200] + [long] + lines[200:400]) + "\\n", encoding="utf-8")
        PATH = D / "pool.txt"
    """,
}

_READ = """
import resource, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from simcore.utils.errors import SimcoreError
PATH = Path({path!r})
started = time.perf_counter()
outcome = "read"
try:
    if {method!r}:
        from simcore.corpora.corpus import Corpus
        from simcore.selection import SelectionOptions, select
        from simcore.utils.store import ArtefactStore
        target = Corpus.from_path(Path({root!r}) / "sample_data" / "targets" / "news_ner.conll")
        options = SelectionOptions(method={method!r}, ner_processes=1, tagger="generic")
        result = select(Corpus.from_path(PATH), target, options, ArtefactStore(PATH.parent / "store"), fraction=0.1,
                        out=PATH.parent / "kept.txt")
        outcome = "kept " + f"{{result.cutoff.n_kept:,}} of {{result.scores.n:,}} units"
    elif PATH.suffix == ".csv":
        from simcore.analysis import read_matrix
        read_matrix(PATH)
    else:
        from simcore.corpora.corpus import Corpus
        sum(1 for _ in Corpus.from_path(PATH).units())
except SimcoreError as exc:
    outcome = "refused: " + str(exc)[:90]
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, outcome, sep="\\t")
"""


def _size(path: Path) -> int:
    """Bytes on disk of a file, or of every file in a folder."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0, help="expanded size of the zstd and gzip bombs (GiB)")
    parser.add_argument("--pool-mb", type=float, default=100.0, help="size of the one-line select pools (MB)")
    parser.add_argument("--line-mb", type=float, default=5.0, help="the long line of the entities pool (MB)")
    parser.add_argument("--only", default="", help="run only the cases whose name holds this text")
    parser.add_argument("--root", type=Path, default=ROOT, help="the simcore checkout to measure (for a before/after)")
    args = parser.parse_args()
    print(f"{'case':56} {'on disk':>11} {'seconds':>8} {'peak MB':>8}  outcome")
    for name, make in _MAKE.items():
        if args.only not in name:
            continue
        method = name.split()[1].rstrip(",") if name.startswith("select ") else ""
        with tempfile.TemporaryDirectory() as tmp:
            # Built in a process of its own too: a child inherits its parent's peak (ru_maxrss survives exec).
            build = (f"from pathlib import Path\nD = Path({tmp!r})\nGIB = {args.gib}\nPOOL_MB = {args.pool_mb}\n"
                     f"LINE_MB = {args.line_mb}\nSAMPLE = Path({str(ROOT / 'sample_data')!r})\n") + textwrap.dedent(make)
            built = subprocess.run([sys.executable, "-c", build + "\nprint(PATH)"], capture_output=True, text=True,
                                   check=True)
            path = Path(built.stdout.strip())
            started = time.perf_counter()
            script = _READ.format(root=str(args.root.resolve()), path=str(path), method=method)
            try:
                done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
            except subprocess.TimeoutExpired:
                print(f"{name:56} {_size(path):>11,} {'>600':>8} {'?':>8}  still running at 600 s")
                continue
            wall = time.perf_counter() - started
            if done.returncode != 0:
                print(f"{name:56} {_size(path):>11,} {wall:8.1f} {'?':>8}  crashed: "
                      f"{json.dumps(done.stderr.strip().splitlines()[-1:])}")
                continue
            seconds, peak, outcome = done.stdout.strip().splitlines()[-1].split("\t", 2)
            print(f"{name:56} {_size(path):>11,} {float(seconds):8.2f} {float(peak):8.0f}  {outcome}")


if __name__ == "__main__":
    main()
