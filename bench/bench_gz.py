"""TVC against one big gzip source at a small sample, against `zcat FILE | wc -w` in the same run.

The bar of issue 37: `python -m simcore matrix --measures tvc --sample-tokens 200000` on a 30M-word
`.txt.gz` source, with a fresh store, within 10x the wall time of `zcat | wc -w` (the floor: decompress
and count words; both ratios are printed, CPU and wall). The source: --file, or one built in --work
(never in the repository) by repeating the five sources of ../shared/data until --words whitespace
words. The target: conll2003's test split.
With --baseline DIR the matrix also runs with DIR's simcore first on PYTHONPATH (e.g. /work/main).

CPU is user + sys of the command and all its processes (getrusage of the children); wall times grow
with the machine's load, printed beside them.

Usage: .venv/bin/python bench/bench_gz.py [--file BIG.txt.gz] [--words 30M] [--repeat 1]
       [--baseline /work/main] [--work DIR]
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def words_arg(text: str) -> int:
    """30M, 500k or a plain number of words."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def build_source(path: Path, words: int) -> None:
    """The shared sources' lines, repeated in turn until ``words`` whitespace words."""
    texts = [gzip.decompress(p.read_bytes()) for p in sorted((DATA / "sources").glob("*.txt.gz"))]
    written = 0
    with gzip.open(path, "wb", compresslevel=6) as out:
        while written < words:
            for text in texts:
                out.write(text if text.endswith(b"\n") else text + b"\n")
                written += len(text.split())
                if written >= words:
                    break


def timed(command: list[str] | str, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(CPU s of the command and its children, wall s, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, shell=isinstance(command, str), env=env, capture_output=True, text=True,
                          check=False, cwd=tempfile.gettempdir())  # not the repository: -m puts the cwd first
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"bench_gz: {command if isinstance(command, str) else command[:4]} failed: "
                 f"{done.stderr.strip().splitlines()[-1:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="a .txt.gz source (default: built in --work)")
    parser.add_argument("--words", type=words_arg, default=30_000_000)
    parser.add_argument("--sample-tokens", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another checkout's simcore, timed the same way")
    parser.add_argument("--work", type=Path, help="a folder for the built source and the stores")
    args = parser.parse_args()
    if not (DATA / "targets" / "conll2003" / "test.conll").exists():
        sys.exit(f"bench_gz: needs {DATA} (the shared data)")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_gz-"))
    (work / "src").mkdir(parents=True, exist_ok=True)
    (work / "tgt").mkdir(exist_ok=True)
    source = work / "src" / "big.txt.gz"
    if args.file:
        source.unlink(missing_ok=True)
        source.symlink_to(args.file.resolve())
    elif not source.exists():
        build_source(source, args.words)
    shutil.copy(DATA / "targets" / "conll2003" / "test.conll", work / "tgt" / "conll2003_test.conll")

    rows = []
    for _ in range(args.repeat):
        cpu, wall, out = timed(f"zcat {source} | wc -w")
        tokens = int(out.split()[0])
        rows.append(("zcat \\| wc -w", cpu, wall, os.getloadavg()[0]))
        floor, floor_wall = cpu, wall
        for label, path in [("simcore (this checkout)", ROOT)] + (
                [(f"simcore ({args.baseline})", args.baseline)] if args.baseline else []):
            store = work / f"store-{len(rows)}"
            shutil.rmtree(store, ignore_errors=True)
            env = {**os.environ, "PYTHONPATH": str(path)}
            cpu, wall, _ = timed([sys.executable, "-m", "simcore", "matrix", "--sources", str(work / "src"),
                                  "--targets", str(work / "tgt"), "--out", str(work / "out.csv"), "--measures",
                                  "tvc", "--sample-tokens", str(args.sample_tokens), "--cache", str(store),
                                  "--quiet"], env)
            rows.append((label, cpu, wall, os.getloadavg()[0], cpu / floor, wall / floor_wall))
            shutil.rmtree(store, ignore_errors=True)
    print(f"source: {source.resolve()} ({source.stat().st_size / 1e6:.1f} MB gzip, {tokens:,} whitespace words); "
          f"TVC at a {args.sample_tokens:,}-token sample, fresh store")
    print("| command | CPU s | wall s | load (1 min) | CPU / zcat CPU | wall / zcat wall |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        ratios = f"{row[4]:.1f}x | {row[5]:.1f}x" if len(row) > 4 else " | "
        print(f"| {row[0]} | {row[1]:.1f} | {row[2]:.1f} | {row[3]:.1f} | {ratios} |")


if __name__ == "__main__":
    main()
