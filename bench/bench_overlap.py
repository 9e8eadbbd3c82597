"""The overlap scan's cost inside a source's streaming pass, and its memory, printed as a table.

A source of ``--tokens`` whitespace words is built by concatenating the five sources of
../shared/data (5.2M words) as often as needed (repeats, not new text: say so when quoting), in a
temporary folder outside the repository, with ``--inject`` of conll2003's test sentences put in place
of as many lines. For each size, in a fresh process each: the streaming pass that samples the
source (:func:`simcore.corpora.sampling.read_candidates`, one sample, the ladder's top size) without
the overlap scan, then the same pass with the scanner of every target of ../shared/data watching
each unit. Printed: wall and CPU seconds (user + sys of the process), the ratio, which cheap test
ran (``compiled``: simcore/contamination/kernel.c; ``numpy``: the fallback where it is not built),
the units the cheap test let through to the tokenizer, the test sentences found, peak memory
(ru_maxrss), the target index's size, and the bytes a piece's task of a parallel pass is sent for
the scan (:class:`simcore.contamination.ngrams.ScanTargets`, pickled) against the targets' whole
indexes.

Keys: 64 bits per n-gram (each word's 64-bit BLAKE2b times a constant of its place, summed; see
simcore.contamination.ngrams), no Bloom filter: the chance of a false match is that of a 64-bit collision, about
S*T/2^64 over the run (S source n-grams tested, T target n-grams), printed in the last column.

Usage: nice .venv/bin/python bench/bench_overlap.py [--tokens 10M,30M] [--inject 300]
[--folder DIR] [--repeat 2] [--numpy] [--alternating] (``--folder``: where the source is written,
outside the repository, a temporary folder by default; ``--repeat``: runs of each pass, the lowest
CPU kept; ``--numpy``: the compiled cheap test hidden; ``--alternating``: both passes in turn in one
process, so that each pair runs under nearly the same load of a shared machine)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")


def size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1_000, "M": 1_000_000, "G": 1_000_000_000}
    return int(float(text[:-1]) * scale[text[-1]]) if text[-1] in scale else int(text)


def conll_test(path: Path) -> list[str]:
    out, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if current:
                out.append(" ".join(current))
            current = []
        elif line.split()[0] != "-DOCSTART-":
            current.append(line.split()[0])
    return out + ([" ".join(current)] if current else [])


def build(words: int, inject: int, folder: Path) -> tuple[Path, int]:
    """A plain-text source of about ``words`` words: the shared sources concatenated, repeated, with
    ``inject`` long conll2003 test sentences (distinct ones) in place of lines spread over it."""
    lines: list[str] = []
    for f in sorted((DATA / "sources").glob("*.txt.gz")):
        with gzip.open(f, "rt", encoding="utf-8") as handle:
            lines.extend(line.rstrip("\n") for line in handle if line.strip())
    tests = [s for s in conll_test(DATA / "targets" / "conll2003" / "test.conll") if len(s.split()) >= 13]
    path = folder / f"source_{words}.txt"
    written = 0
    step = max(1, words // 20 // max(1, inject))  # lines between two injected ones (about 20 words a line)
    with open(path, "w", encoding="utf-8") as out:
        k = at = 0
        while written < words:
            for line in lines:
                at += 1
                if k < inject and at % step == 0:
                    line = tests[k % len(tests)]
                    k += 1
                out.write(line + "\n")
                written += len(line.split())
                if written >= words:
                    break
    return path, k


def one(path: str, overlap: bool, numpy_only: bool = False) -> dict[str, float]:
    """One pass in this process (run in a fresh one per measurement); ``numpy_only``: with the
    compiled cheap test hidden, as on a machine where it was not built."""
    sys.path.insert(0, str(ROOT))
    if numpy_only:
        import simcore.contamination.ngrams as ngrams

        ngrams.compiled = None
    from simcore.contamination.ngrams import (
        Scanner,
        ScanTargets,
        TargetIndex,
        scan_path,
        target_sentences,
    )
    from simcore.corpora.corpus import Corpus, unit_tokenizer
    from simcore.corpora.sampling import read_candidates
    from simcore.corpora.tokenize import TokenizerOptions
    from simcore.matrix.corpus_cache import STREAM_SIZES

    source = Corpus.from_path(path)
    source.language_guess()
    scanner = None
    index_mb = 0.0
    if overlap:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        indexes = [TargetIndex.build(t.name, target_sentences(Corpus.from_path(t), TokenizerOptions()))
                   for t in sorted((DATA / "targets").iterdir())]
        scanner = Scanner(indexes, unit_tokenizer(source.segmenter(), TokenizerOptions()))
        index_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        task_mb = len(pickle.dumps(ScanTargets.of(indexes))) / 1e6
        indexes_mb = len(pickle.dumps(tuple(indexes))) / 1e6
    wall, cpu = time.perf_counter(), time.process_time()
    found = read_candidates(source, max(STREAM_SIZES), 1, 13, watch=scanner.watch if scanner else None)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out = {"wall": wall, "cpu": cpu, "words": found.words, "units": found.units,
           "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "index_mb": index_mb}
    if scanner is not None:
        hits = scanner.result()
        conll = next(i for i in scanner.indexes if i.name == "conll2003")
        out.update(path=scan_path(), task_mb=task_mb, indexes_mb=indexes_mb, tested=scanner.tested,
                   test_held=conll.shares(hits)[2], keys=len(scanner.keys.wanted),
                   tested_grams=found.words * len(scanner.lengths))
    return out


def alternating(path: str, repeat: int, numpy_only: bool = False) -> dict[str, float]:
    """The pass without and with the scan in turn, ``repeat`` times each, in this one process (the
    targets' indexes built first, in memory for both): each pair runs under nearly the same load of
    the machine. The lowest CPU seconds of each are kept."""
    sys.path.insert(0, str(ROOT))
    if numpy_only:
        import simcore.contamination.ngrams as ngrams

        ngrams.compiled = None
    from simcore.contamination.ngrams import Scanner, TargetIndex, scan_path, target_sentences
    from simcore.corpora.corpus import Corpus, unit_tokenizer
    from simcore.corpora.sampling import read_candidates
    from simcore.corpora.tokenize import TokenizerOptions
    from simcore.matrix.corpus_cache import STREAM_SIZES

    source = Corpus.from_path(path)
    source.language_guess()
    indexes = [TargetIndex.build(t.name, target_sentences(Corpus.from_path(t), TokenizerOptions()))
               for t in sorted((DATA / "targets").iterdir())]
    scanner = Scanner(indexes, unit_tokenizer(source.segmenter(), TokenizerOptions()))
    best: dict[bool, tuple[float, float]] = {}
    for overlap in (False, True) * repeat:
        scanner.hits, scanner.tested = set(), 0
        wall, cpu = time.perf_counter(), time.process_time()
        watch = scanner.watch if overlap else None
        found = read_candidates(source, max(STREAM_SIZES), 1, 13, watch=watch)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if overlap not in best or cpu < best[overlap][1]:
            best[overlap] = (wall, cpu)
    conll = next(i for i in indexes if i.name == "conll2003")
    return {"words": found.words, "path": scan_path(),
            "wall": best[False][0], "cpu": best[False][1],
            "wall_with": best[True][0], "cpu_with": best[True][1],
            "test_held": conll.shares(scanner.result())[2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="10M,30M")
    parser.add_argument("--inject", type=int, default=300)
    parser.add_argument("--folder", help="where to write the source (default: a temporary folder)")
    parser.add_argument("--numpy", action="store_true",
                        help="hide the compiled cheap test (the numpy path)")
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs of each, the lowest CPU kept (default 2)")
    parser.add_argument("--alternating", action="store_true",
                        help="both passes in turn in one process (same load), not a process each")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1] == "1", args.numpy)))
        return
    if args.alternating:
        print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print("| words | cheap test | pass cpu s (wall) | with overlap cpu s (wall) | "
              "ratio cpu (wall) | test sentences found |")
        print("|---|---|---|---|---|---|")
        if args.folder:
            Path(args.folder).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=args.folder) as folder:
            for words in (size(t) for t in args.tokens.split(",")):
                path, _ = build(words, args.inject, Path(folder))
                r = alternating(str(path), args.repeat, args.numpy)
                print(f"| {r['words']:,} | {r['path']} | {r['cpu']:.1f} ({r['wall']:.1f}) | "
                      f"{r['cpu_with']:.1f} ({r['wall_with']:.1f}) | "
                      f"{r['cpu_with'] / r['cpu']:.2f} "
                      f"({r['wall_with'] / r['wall']:.2f}) | {r['test_held']} |", flush=True)
                load = " ".join(f"{x:.1f}" for x in os.getloadavg())
                print(f"load average after: {load}", flush=True)
                path.unlink()
        return
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| words | units | cheap test | pass s (cpu) | with overlap s (cpu) | ratio wall (cpu) | "
          "words/s (cpu) without / with | 1B words, cpu min without / with | units tokenized | "
          "conll2003 test sentences injected / found | peak MB without / with | target index MB | "
          "a piece's task, MB (whole indexes) | expected false matches |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    if args.folder:
        Path(args.folder).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        for words in (size(t) for t in args.tokens.split(",")):
            path, injected = build(words, args.inject, Path(folder))
            runs = {}
            for overlap in (False, True) * args.repeat:  # in turn, the lowest CPU kept (shared)
                command = [sys.executable, __file__, "--one", str(path), "1" if overlap else "0",
                           *(["--numpy"] if args.numpy else [])]
                done = subprocess.run(command, check=True, capture_output=True, text=True)
                got = json.loads(done.stdout)
                if overlap not in runs or got["cpu"] < runs[overlap]["cpu"]:
                    runs[overlap] = got
            a, b = runs[False], runs[True]
            false_matches = b["tested_grams"] * b["keys"] / 2 ** 64
            rate_a, rate_b = a["words"] / a["cpu"], b["words"] / b["cpu"]
            print(f"| {a['words']:,} | {a['units']:,} | {b['path']} | "
                  f"{a['wall']:.1f} ({a['cpu']:.1f}) | "
                  f"{b['wall']:.1f} "
                  f"({b['cpu']:.1f}) | {b['wall'] / a['wall']:.2f} ({b['cpu'] / a['cpu']:.2f}) | "
                  f"{rate_a:,.0f} / {rate_b:,.0f} | {1e9 / rate_a / 60:.0f} / {1e9 / rate_b / 60:.0f} | "
                  f"{b['tested']:,} ({b['tested'] / b['units']:.2%}) | {injected} / {b['test_held']:,} | "
                  f"{a['rss_mb']:.0f} / {b['rss_mb']:.0f} | {b['index_mb']:.0f} | "
                  f"{b['task_mb']:.1f} ({b['indexes_mb']:.1f}) | {false_matches:.1e} |", flush=True)
            print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
