"""Peak memory and time of each hostile input simcore must refuse (or read) within a stated budget.

Each case runs in a subprocess of its own, so its peak resident memory (``resource.ru_maxrss`` of
that child) is the case's alone. The budgets are the readers' limits: a compressed file may expand
to ``max(1 GiB, 200 x its size)`` and is decompressed (counted, not kept) for its first 8 MB before
anything is read; a Parquet file's decoded size is read from its footer; a matrix cell holds at most
100,000 replicates.

Usage: .venv/bin/python bench/bench_bombs.py [--gib 4]   (--gib: the zstd/gzip bombs' expanded size)
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
}

_READ = """
import resource, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from simcore.errors import SimcoreError
PATH = Path({path!r})
started = time.perf_counter()
try:
    if PATH.suffix == ".csv":
        from simcore.analysis import read_matrix
        read_matrix(PATH)
    else:
        from simcore.corpus import Corpus
        sum(1 for _ in Corpus.from_path(PATH).units())
    outcome = "read"
except SimcoreError as exc:
    outcome = "refused: " + str(exc)[:90]
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, outcome, sep="\\t")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0, help="expanded size of the zstd and gzip bombs (GiB)")
    args = parser.parse_args()
    print(f"{'case':40} {'on disk':>10} {'seconds':>8} {'peak MB':>8}  outcome")
    for name, make in _MAKE.items():
        with tempfile.TemporaryDirectory() as tmp:
            # Built in a process of its own too: a child inherits its parent's peak (ru_maxrss survives exec).
            build = f"from pathlib import Path\nD = Path({tmp!r})\nGIB = {args.gib}\n" + textwrap.dedent(make)
            built = subprocess.run([sys.executable, "-c", build + "\nprint(PATH)"], capture_output=True, text=True,
                                   check=True)
            path = Path(built.stdout.strip())
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", _READ.format(root=str(ROOT), path=str(path))],
                                  capture_output=True, text=True, timeout=600)
            wall = time.perf_counter() - started
            if done.returncode != 0:
                print(f"{name:40} {path.stat().st_size:>10,} {wall:8.1f} {'?':>8}  crashed: "
                      f"{json.dumps(done.stderr.strip().splitlines()[-1:])}")
                continue
            seconds, peak, outcome = done.stdout.strip().split("\t", 2)
            print(f"{name:40} {path.stat().st_size:>10,} {float(seconds):8.2f} {float(peak):8.0f}  {outcome}")


if __name__ == "__main__":
    main()
