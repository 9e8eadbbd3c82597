"""What the Corpora page's statistics cost the first time, corpus by corpus, as a table.

Builds bench/bench_pages.py's 28 corpora (the bundled sample's six sources and three targets, 14
cuts of ../shared/data's sources and 400 sentences of five of its test splits) and tokenizes them
into a fresh artefact store, as adding them to the dashboard does: timed per corpus ("tokenize"),
with the share of it that counts the statistics kept with the tokens ("of which counting",
:func:`simcore.corpora.corpus_counts.corpus_counts` run again on the same token file). Then times
:func:`simcore.corpora.stats.corpus_statistics` on each with no "stats" record stored: what the
page's first open on a new server does (reading the counts, or counting where tokenizing did not).
Each round starts again from a store without "stats" records (the tokens are kept). Prints wall
and CPU seconds (this process's user+sys) per corpus of the first round, and the totals of each
round; the first round includes first-time costs (regex compiles, imports the statistics need).
``--root OTHER`` times another checkout's simcore (a before/after: run it once with each).

Usage: .venv/bin/python bench/bench_stats.py [--rounds 3] [--root OTHER]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose simcore is timed")
    args = parser.parse_args()
    from bench_pages import SHARED, write_corpora  # (puts this checkout on the path)

    sys.path.insert(0, str(args.root.resolve()))

    if not (SHARED / "sources").is_dir():
        raise SystemExit(f"{SHARED} is not present: this bench needs ../shared/data")
    from simcore.corpora.corpus import Corpus, tokenize_corpus
    from simcore.corpora.stats import corpus_statistics

    try:
        from simcore.corpora import corpus_counts as counts
    except ImportError:  # a checkout from before the tokenizing pass counted
        counts = None
    from simcore.utils.store import ArtefactStore

    work = Path(tempfile.mkdtemp(prefix="bench-stats-"))
    try:
        write_corpora(work / "data")
        files = [p for role in ("sources", "targets")
                 for folder in (ROOT / "sample_data", work / "data")
                 for p in sorted((folder / role).iterdir())]
        store = ArtefactStore(work / "cache")
        corpora = [Corpus.from_path(p) for p in files]
        tokenizing: dict[str, tuple[float, float]] = {}
        for corpus in corpora:
            w = time.perf_counter()
            tokenized = tokenize_corpus(corpus, store)
            wall = time.perf_counter() - w
            counting = float("nan")
            if counts is not None:
                w = time.perf_counter()
                counts.corpus_counts(tokenized.tokens_file, corpus.tagged_sentences)
                counting = time.perf_counter() - w
            tokenizing[corpus.name] = (wall, counting)
        rows: list[tuple[str, int, float, float]] = []
        totals: list[tuple[float, float]] = []
        for r in range(args.rounds):
            shutil.rmtree(store.root / "stats", ignore_errors=True)
            wall0, cpu0 = time.perf_counter(), cpu()
            for corpus in corpora:
                w, c = time.perf_counter(), cpu()
                corpus_statistics(corpus, store)
                if r == 0:
                    wall, used = time.perf_counter() - w, cpu() - c
                    rows.append((corpus.name, corpus.size_bytes, wall, used))
            totals.append((time.perf_counter() - wall0, cpu() - cpu0))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    import simcore

    print(f"simcore from {Path(simcore.__file__).parent}; load average {os.getloadavg()[0]:.2f}\n")
    print("| corpus | bytes | tokenize wall s | of which counting s | statistics' first time: wall s | CPU s |\n"
          "|---|---:|---:|---:|---:|---:|")
    for name, size, wall, used in rows:
        tokenized, counting = tokenizing[name]
        print(f"| {name} | {size:,} | {tokenized:.3f} | {counting:.3f} | {wall:.3f} | {used:.3f} |")
    print(f"\ntokenizing all {len(rows)}: {sum(t for t, _ in tokenizing.values()):.2f} s wall, of which "
          f"counting {sum(c for _, c in tokenizing.values()):.2f} s")
    print("\n| round | corpora | wall s | CPU s |\n|---:|---:|---:|---:|")
    for r, (wall, used) in enumerate(totals):
        print(f"| {r} | {len(rows)} | {wall:.2f} | {used:.2f} |")


if __name__ == "__main__":
    main()
