"""Which shortest-sentence default keeps one-liners out of ppl/xent selections?

ppl and xent score a pool sentence per token, so a sentence of two or three tokens can get an
extreme score and crowd the top ("Source :", "Wrapped in tissue ."). The pool here is what a user
brings: raw lines of the five sources in ../shared/data (one unit a line, no splitting, no length
filter; --per-source lines from each, shuffled together). For each target and method the pool is
scored once (stored) and the top --fraction chosen at each minimum length; the table gives the share
of the pool that minimum makes ineligible, the share of the kept sentences of 3 tokens or fewer, the
kept label-like lines (ending with ':' or of at most two tokens, such as "Source :"), the share of
the kept from the target's register source(s) and the median kept length.

Usage: .venv/bin/python bench/bench_min_tokens.py [--data ../shared/data] [--per-source 4000] [--fraction 0.1] [--mins 1,2,3,4,5,6,8]
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.corpora.corpus import Corpus  # noqa: E402
from simcore.selection.choosing import choose, kept_indices  # noqa: E402
from simcore.selection.driver import score_pool  # noqa: E402
from simcore.selection.options import SelectionOptions  # noqa: E402
from simcore.utils.store import ArtefactStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
SOURCES = ("biomed_ohsumed_medline", "clinical_mtsamples", "encyclopedia_wikitext2", "news_1bwb", "reviews_yelp")
TARGETS = {"conll2003": ("conll2003/train.conll", ("news_1bwb",)),
           "wetlab": ("wetlab_wlp/train.conll", ("biomed_ohsumed_medline", "clinical_mtsamples"))}


def build_pool(data: Path, directory: Path, per_source: int, seed: int) -> tuple[Path, np.ndarray, list[str]]:
    rng = random.Random(seed)
    rows: list[tuple[str, int]] = []
    for number, name in enumerate(SOURCES):
        with gzip.open(data / "sources" / f"{name}.txt.gz", "rt", encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        rows += [(s, number) for s in rng.sample(lines, min(per_source, len(lines)))]
    rng.shuffle(rows)
    path = directory / "pool.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(text + "\n" for text, _ in rows)
    return path, np.asarray([s for _, s in rows], dtype=np.int64), [t for t, _ in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-source", type=int, default=4_000)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--mins", default="1,2,3,4,5,6,8")
    parser.add_argument("--methods", default="ppl,xent")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--data", type=Path, default=SHARED, help="the shared data folder (sources/, targets/)")
    args = parser.parse_args()
    if not (args.data / "sources").is_dir():
        print(f"{args.data} is not present", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-min-tokens-") as tmp:
        store = ArtefactStore(Path(tmp) / "store")
        pool_path, origin, texts = build_pool(args.data, Path(tmp), args.per_source, args.seed)
        pool = Corpus.from_path(pool_path)
        print(f"pool: {len(texts):,} raw lines, top {args.fraction:.0%} kept\n")
        header = (f"{'target':<10} {'method':<6} {'min':>4} {'pool dropped':>12} {'kept <=3 tok':>12} "
                  f"{'label-like':>10} {'register':>9} {'median len':>10}  best kept")
        print(header)
        print("-" * (len(header) + 30))
        for target_name in TARGETS:
            split, register = TARGETS[target_name]
            target = Corpus.from_path(args.data / "targets" / split, name=target_name)
            wanted = np.isin(origin, [SOURCES.index(r) for r in register])
            for method in args.methods.split(","):
                scores = score_pool(pool, target, SelectionOptions(method=method, seed=args.seed), store)
                lengths = np.asarray(scores.lengths())
                for minimum in (int(m) for m in args.mins.split(",")):
                    cutoff = choose(scores, fraction=args.fraction, min_tokens=minimum)
                    kept = kept_indices(scores, cutoff)
                    kept_len = lengths[kept]
                    label_like = sum(1 for i in kept if texts[i].rstrip().endswith(":") or lengths[i] <= 2)
                    sign = -1 if scores.higher_kept else 1
                    best = kept[np.argsort(sign * scores.scores()[kept], kind="stable")[:2]]
                    print(f"{target_name:<10} {method:<6} {minimum:>4} {np.mean(lengths < minimum):>12.1%} "
                          f"{np.mean(kept_len <= 3):>12.1%} {label_like:>10,} {np.mean(wanted[kept]):>9.1%} "
                          f"{np.median(kept_len):>10.0f}  " + " | ".join(texts[i][:30] for i in best), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
