"""The cost of checking the artefact store's integrity over whole files, printed as tables.

The store hashes every file of an artefact in full (SHA-256, streamed in 1 MiB chunks) when a
process first reads it, and remembers the result while the file's inode, size and times stay the
same. Before, files over 32 MiB were checked on their first MiB only. This prints:

1. SHA-256 throughput on files of several sizes (page cache warm: the usual case right after a build).
2. For the artefacts of one source of N tokens (default 10M, units drawn from ../shared/data as in
   bench_core): the bytes per artefact kind, and the time a fresh process spends verifying them all
   on first read, whole files versus the old first-MiB rule, and the time of a second read in the
   same process.

Usage: nice .venv/bin/python bench/bench_store.py [--tokens 10000000] [--measures tvc,jsd,ppl,wvv]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_core import SHARED, draw_source, table  # noqa: E402

from simcore.utils.store import file_sha256  # noqa: E402

BUILD = r"""
import sys, time
from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.measures import get_measure
from simcore.utils.store import ArtefactStore
path, root, measures = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
bench = Workbench(ArtefactStore(root))
source = bench.source(Corpus.from_path(path), 10**12, 1)[0]
for name in measures:
    get_measure(name).prepare(source)
"""

VERIFY = r"""
import json, sys, time
from pathlib import Path
from simcore.utils.store import ArtefactStore, MANIFEST, file_sha256
root, mode = Path(sys.argv[1]), sys.argv[2]
store = ArtefactStore(root)
found = [(d.parent.name, d.name) for d in sorted(root.glob("*/*")) if (d / MANIFEST).is_file()]
start = time.perf_counter()
if mode == "old":  # the former rule: files over 32 MiB hashed on their first MiB only
    for kind, key in found:
        for name, info in json.loads((root / kind / key / MANIFEST).read_text())["files"].items():
            file_sha256(root / kind / key / name, None if info["size"] <= 32 << 20 else 1 << 20)
    ok = len(found)
else:
    ok = sum(store.get(kind, key) is not None for kind, key in found)
first = time.perf_counter() - start
start = time.perf_counter()
if mode != "old":
    ok2 = sum(store.get(kind, key) is not None for kind, key in found)
second = time.perf_counter() - start
print(json.dumps({"artefacts": len(found), "ok": ok, "first": first, "second": second}))
"""


def throughput(folder: Path) -> list[list[str]]:
    rows = []
    for mib in (1, 32, 256):
        path = folder / f"f{mib}.bin"
        with open(path, "wb") as f:
            for _ in range(mib):
                f.write(os.urandom(1 << 20))
        file_sha256(path)  # warm the page cache
        start = time.perf_counter()
        rounds = max(1, 512 // mib)
        for _ in range(rounds):
            file_sha256(path)
        seconds = (time.perf_counter() - start) / rounds
        rows.append([f"{mib} MiB", f"{seconds * 1000:.1f} ms", f"{mib * 1.048576 / seconds:,.0f}"])
        path.unlink()
    return rows


def artefacts(n_tokens: int, measures: str, folder: Path) -> None:
    text, root = folder / "source.txt", folder / "store"
    draw_source(n_tokens, text)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", BUILD, str(text), str(root), measures], check=True, env=env)
    build = time.perf_counter() - start
    sizes: dict[str, list[int]] = {}
    for manifest in root.glob("*/*/manifest.json"):
        files = json.loads(manifest.read_text())["files"].values()
        entry = sizes.setdefault(manifest.parent.parent.name, [0, 0, 0])
        entry[0] += 1
        entry[1] += sum(f["size"] for f in files)
        entry[2] = max(entry[2], max((f["size"] for f in files), default=0))
    total = sum(v[1] for v in sizes.values())
    rows = [[kind, str(n), f"{b / 1e6:,.1f}", f"{big / 1e6:,.1f}"] for kind, (n, b, big) in sorted(sizes.items())]
    rows.append(["all", str(sum(v[0] for v in sizes.values())), f"{total / 1e6:,.1f}", ""])
    print(f"\nArtefacts of one {n_tokens:,}-token source ({measures}; built in {build:.0f} s)")
    print(table(rows, ["kind", "artefacts", "MB", "largest file MB"]))
    results = {}
    for mode in ("old", "whole"):
        out = subprocess.run([sys.executable, "-c", VERIFY, str(root), mode], check=True, env=env,
                             capture_output=True, text=True).stdout
        results[mode] = json.loads(out)
    whole, old = results["whole"], results["old"]
    print(f"\nVerifying them in a fresh process ({whole['artefacts']} artefacts, {total / 1e6:,.1f} MB; page cache warm)")
    print(table([["first MiB of files > 32 MiB (before)", f"{old['first']:.2f} s", "–"],
                 ["whole files, streamed (now)", f"{whole['first']:.2f} s", f"{total / 1e6 / whole['first']:,.0f} MB/s"],
                 ["whole files, second read in the same process", f"{whole['second'] * 1000:.1f} ms", "–"]],
                ["check", "time", "rate"]))
    assert whole["ok"] == whole["artefacts"], "every artefact verifies"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=10_000_000)
    parser.add_argument("--measures", default="tvc,jsd,ppl,wvv")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        print("SHA-256 throughput (streamed, 1 MiB chunks, page cache warm)")
        print(table(throughput(Path(tmp)), ["file", "time", "MB/s"]))
        if not (SHARED / "sources").is_dir():
            print("\n../shared/data is absent: skipping the artefacts of a real source")
            return
        artefacts(args.tokens, args.measures, Path(tmp))


if __name__ == "__main__":
    main()
