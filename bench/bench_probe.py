"""The NER probe on ../shared/data: does it reproduce the paper's word-vector findings?

For the four targets with a train split (CoNLL2003, CRAFT, ScienceIE, WetLab) and the five
shared sources: the similarity matrix (TVC, TVcC, PPL, WVV, JSD) on equal-size source samples,
then a spaCy NER tagger per (target, source vectors or none, seed) under small caps. Prints F1 per
source and the baseline, time per run, the Pearson/Spearman correlation of each measure with the
improvement over the baseline next to the paper's word-vector figures (Dai et al. 2019, Table 4),
the regret of choosing by each measure, and whether the probe orders the sources as Table 3 does.

Every artefact is stored, so a second run only prints. For a cold timing use an empty store.
Usage: nice .venv/bin/python bench/bench_probe.py [--cache DIR] [--train-sentences 500] [--seeds 3] ...
Defaults (500 train / 200 dev / 500 test sentences, 3 epochs, 3 seeds) fit in 30 minutes on a 2-core machine:
about 25 minutes from an empty store (4 of them the similarity matrix).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.analysis.correlation import (  # noqa: E402
    correlate,
    results_frame,
)
from simcore.analysis.regret import regret  # noqa: E402
from simcore.analysis.tables import read_matrix, to_long  # noqa: E402
from simcore.corpora.corpus import Corpus  # noqa: E402
from simcore.matrix.corpus_cache import corpora_in  # noqa: E402
from simcore.matrix.estimates import probe_seconds, probe_splits  # noqa: E402
from simcore.matrix.workbench import Workbench  # noqa: E402
from simcore.probe.config import ProbeCaps  # noqa: E402
from simcore.probe.data import TargetSplits  # noqa: E402
from simcore.probe.run import BASELINE, probe  # noqa: E402
from simcore.utils.store import ArtefactStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
TARGETS = {"conll2003": "CoNLL2003", "craft": "CRAFT", "scienceie": "ScienceIE", "wetlab_wlp": "WetLab"}
SOURCES = {"news_1bwb": "1BWB", "biomed_ohsumed_medline": "PubMed", "clinical_mtsamples": "MIMIC",
           "encyclopedia_wikitext2": "Wiki", "reviews_yelp": "Yelp"}
MEASURES = ["tvc", "tvcc", "ppl", "wvv", "jsd"]
PAPER_WV = {"tvc": 0.507, "tvcc": 0.488, "ppl": -0.372, "wvv": -0.552}  # Table 4, word vectors, Pearson


def _table(frame: pd.DataFrame) -> str:
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_rows", 200):
        return frame.to_string(index=False, float_format=lambda v: f"{v:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED))
    parser.add_argument("--cache", default=os.environ.get("SIMCORE_CACHE", "/tmp/simcore-cache-bench-probe"))
    parser.add_argument("--out", default=str(ROOT / "bench" / "out"))
    parser.add_argument("--train-sentences", type=int, default=500)
    parser.add_argument("--dev-sentences", type=int, default=200)
    parser.add_argument("--test-sentences", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--matrix", default=None,
                        help="read the similarity matrix from this CSV (one this bench wrote) instead of computing it")
    parser.add_argument("--source-tokens", type=int, default=None,
                        help="tokens per source sample, for every measure and the vectors (default: the smallest source)")
    args = parser.parse_args()
    data = Path(args.data)
    if not (data / "sources").is_dir():
        print(f"{data} has no sources/; nothing to measure", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    bench = Workbench(ArtefactStore(args.cache))
    sources = corpora_in(data / "sources")
    n_tokens = args.source_tokens or min(c.n_tokens for c in (bench.tokenize(s) for s in sources))
    caps = ProbeCaps(train_sentences=args.train_sentences, dev_sentences=args.dev_sentences,
                     test_sentences=args.test_sentences, epochs=args.epochs, seconds=args.seconds)
    print(f"machine: {os.cpu_count()} CPU cores; store {args.cache}")
    print(f"sources: {', '.join(c.name for c in sources)}; {n_tokens:,} tokens each (vectors and measures)")
    print(f"caps: {caps.describe()}; seeds {args.seeds}\n")

    t = time.perf_counter()
    if args.matrix:
        matrix = read_matrix(args.matrix)
        print(f"similarity matrix read from {args.matrix}")
    else:
        target_corpora = [Corpus.from_path(data / "targets" / name) for name in TARGETS]
        matrix = bench.matrix(sources, target_corpora, MEASURES, sample_tokens=n_tokens)
        matrix.to_csv(out / "probe_matrix.csv", index=False)
        print(f"similarity matrix ({', '.join(MEASURES)}): {time.perf_counter() - t:.0f} s")

    t = time.perf_counter()
    runs: list[dict] = []

    def on_run(run: dict) -> None:
        runs.append(run)
        print(f"  {run['target']:<10} {run['source']:<24} seed {run['seed']}: F1 {run['f1']:6.2f}  "
              f"{run['epochs']} epochs, {run['steps']} steps, {run['seconds']:5.1f} s ({run['stopped_by']})",
              flush=True)

    splits = [TargetSplits.from_directory(data / "targets" / name) for name in TARGETS]
    estimate = probe_seconds(bench, sources, seeds=args.seeds, epochs=caps.epochs, seconds_cap=caps.seconds,
                             train_sentences=caps.train_sentences, source_tokens=n_tokens, targets=len(splits),
                             splits=probe_splits(bench.store, splits, caps))
    t = time.perf_counter()  # the estimate drew the vectors' samples, as the probe would have
    results = probe(sources, splits, workbench=bench, caps=caps, seeds=list(range(args.seeds)),
                    source_tokens=n_tokens, on_run=on_run)
    results.to_csv(out / "probe_results.csv", index=False)
    probe_s = time.perf_counter() - t
    times = np.array([r["seconds"] for r in runs])
    print(f"probe: {probe_s:.0f} s for {len(runs)} runs; training time per run mean {times.mean():.1f} s, "
          f"min {times.min():.1f}, max {times.max():.1f} (as stored when the run was trained)")
    print(f"estimate before it ran: {estimate.seconds:.0f} s ({estimate.vectors:.0f} s vectors for "
          f"{estimate.sources} sources, {estimate.runs:.0f} s for {estimate.count} runs; "
          f"{'this machine' if estimate.measured else 'default'} paces), measured {probe_s:.0f} s: "
          f"ratio {estimate.seconds / max(probe_s, 1e-9):.2f}\n")

    print("F1 per target and source (mean over seeds; improvement = F1 - baseline)")
    shown = results[["target", "source", "f1", "f1_std", "baseline", "improvement", "train_sentences",
                     "test_sentences", "vectors_words"]]
    print(_table(shown) + "\n")

    # The paper's Table 3 on the same targets, for the ordering and the correlations
    paper = pd.read_csv(data / "results" / "dai2019_table3.csv")
    back_t, back_s = {v: k for k, v in TARGETS.items()}, {v: k for k, v in SOURCES.items()}
    paper = paper[paper["target"].isin(back_t)].assign(target=lambda d: d["target"].map(back_t),
                                                        source=lambda d: d["source"].map(back_s))

    long = to_long(matrix)
    ours = results_frame(results)
    corr = correlate(long, ours, [m for m in MEASURES], per_target=False)
    paper_long = to_long(paper[["target", "source", "ppl", "wvv", "tvc", "tvcc"]])
    paper_corr = correlate(paper_long, results_frame(paper, f1="wv_f1", improvement="wv_delta"),
                           list(PAPER_WV), per_target=False)
    rows = []
    for m in MEASURES:
        ours_row = corr[corr["measure"] == m].iloc[0]
        ref = paper_corr[paper_corr["measure"] == m]
        rows.append({"measure": m, "n": int(ours_row["n"]), "pearson": ours_row["pearson_r"],
                     "pearson_p": ours_row["pearson_p"], "spearman": ours_row["spearman_r"],
                     "table3_same_targets_pearson": ref["pearson_r"].iloc[0] if len(ref) else float("nan"),
                     "paper_table4_pearson": PAPER_WV.get(m, float("nan"))})
    print("Correlation of each measure with the probe's improvement (pooled over target x source pairs);")
    print("table3_same_targets_pearson: scipy on the paper's published wv_delta for these 4 targets")
    print(_table(pd.DataFrame(rows)) + "\n")

    reg = regret(long, ours, MEASURES)
    print("Mean regret of choosing the source each measure ranks first (F1 points)")
    print(_table(reg[reg["target"] == "mean"][["measure", "regret"]]) + "\n")

    print("Ordering of sources per target: probe F1 vs the paper's word-vector F1 (Table 3)")
    order_rows = []
    for name in TARGETS:
        mine = results[results["target"] == name].set_index("source")["f1"]
        theirs = paper[paper["target"] == name].set_index("source")["wv_f1"].reindex(mine.index)
        rho = stats.spearmanr(mine.to_numpy(), theirs.to_numpy()).statistic
        base = results[results["target"] == name]["baseline"].iloc[0]
        order_rows.append({"target": name, "probe_order": " > ".join(SOURCES[s] for s in mine.sort_values(
                               ascending=False).index),
                           "paper_order": " > ".join(SOURCES[s] for s in theirs.sort_values(ascending=False).index),
                           "spearman": rho, "same_best": mine.idxmax() == theirs.idxmax(),
                           "sources_above_baseline": int((mine > base).sum())})
    print(_table(pd.DataFrame(order_rows)))
    noise = results["f1_std"].dropna()
    if len(noise):
        print(f"\nseed spread: mean F1 standard deviation over seeds {noise.mean():.2f} points")
    print(f"\nbaseline runs: {BASELINE}; total wall time {time.perf_counter() - start:.0f} s")
    print(f"wrote {out / 'probe_results.csv'} and {out / 'probe_matrix.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
