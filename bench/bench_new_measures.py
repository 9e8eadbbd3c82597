"""The newer measures (KL of hashed 1-2-grams, DSIR; encoder centroid cosine, EMB) judged beside the
seed papers' measures on ../shared/data.

For each sample size, each measure (PPL, JSD, TVC, TVcC, WVV, KL, EMB) is judged on:
- table3: the five targets' test splits against the five sources; hits when its first choice is
  the winner of Dai et al.'s Table 3 (bench_recommendation.TABLE3);
- self: a held-out part of each source (2,000 units) against the five sources without it;
- stable: the same first choice on a second, independent draw of the sub-corpora (seed 14), for
  the measures named by --stable (the cheap ones by default);
- r_lm / r_wv: Pearson r, over the 25 (target, source) pairs, between the similarity (signed so
  that higher = more similar) and Table 3's F1 improvement with pretrained LMs / word vectors;
  rho_lm / rho_wv: the mean over targets of the Spearman correlation within a target (does it order
  a target's sources as the F1 gains do);
- s/source, s/target: cold cost of preparing one source sample and of scoring one target against
  the five sources (target-side work included), on this machine.
Then the recommendation for each pretraining kind with its carrying measures, and with KL or EMB
added to them (recommendation.PRETRAINING is swapped inside this script only), on both checks;
then KL reduction (KL(t‖union of sources) − KL(t‖s)) next to KL; then, with --hash, what SHA-256
hashing costs against a faster hash and whether the faster one changes anything.

Costs are cold only on the first run with an empty --cache.

Usage: .venv/bin/python bench/bench_new_measures.py [--sizes 100000] [--cache DIR] [--measures ppl,kl,...]
       [--stable ppl,jsd,tvc,kl] [--emb-sentences 2000] [--hash]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_recommendation import SHARED, TABLE3, firsts, held_out_split  # noqa: E402

from simcore.answer import recommendation  # noqa: E402
from simcore.answer.recommendation import recommend  # noqa: E402
from simcore.corpora.corpus import Corpus  # noqa: E402
from simcore.matrix.workbench import Workbench  # noqa: E402
from simcore.measures import kl as kl_module  # noqa: E402
from simcore.measures.lookup import get_measure  # noqa: E402
from simcore.measures.options import MeasureOptions  # noqa: E402
from simcore.utils.store import ArtefactStore  # noqa: E402

SEED_MEASURES = ["ppl", "jsd", "tvc", "tvcc", "wvv"]
NEW_MEASURES = ["kl", "emb"]
TARGET_NAMES = {"conll2003": "CoNLL2003", "craft": "CRAFT", "jnlpba": "JNLPBA", "scienceie": "ScienceIE",
                "wetlab_wlp": "WetLab"}
SOURCE_NAMES = {"news_1bwb": "1BWB", "biomed_ohsumed_medline": "PubMed", "clinical_mtsamples": "MIMIC",
                "encyclopedia_wikitext2": "Wiki", "reviews_yelp": "Yelp"}


def timed_matrix(bench: Workbench, sources: list[Corpus], targets: list[Corpus], measure: str,
                 size: int) -> tuple[pd.DataFrame, float, float]:
    """The measure's long table, with the cost per source sample and per target (seconds)."""
    for c in sources:
        bench.source(c, size, 1)  # tokenizing and sampling are shared by every measure: not counted
    for t in targets:
        bench.target(t)
    start = time.perf_counter()
    first = bench.matrix(sources, targets[:1], [measure], sample_tokens=size)
    t_first = time.perf_counter() - start
    start = time.perf_counter()
    rest = bench.matrix(sources, targets[1:], [measure], sample_tokens=size)
    per_target = (time.perf_counter() - start) / max(1, len(targets) - 1)
    per_source = max(0.0, t_first - per_target) / len(sources)
    return pd.concat([first, rest], ignore_index=True), per_source, per_target


def hits(long: pd.DataFrame, truth: dict[str, str], measure: str) -> str:
    first = firsts(long[long["measure"] == measure])
    return f"{sum(first.get((t, measure)) == s for t, s in truth.items())}/{len(truth)}"


def correlations(long: pd.DataFrame, results: pd.DataFrame, measure: str) -> dict[str, float]:
    part = long[long["measure"] == measure].assign(
        target=lambda d: d["target"].map(TARGET_NAMES), source=lambda d: d["source"].map(SOURCE_NAMES))
    joined = part.merge(results, on=["target", "source"])
    signed = joined["value"] * get_measure(measure).direction
    row = {}
    for kind in ("lm", "wv"):
        gain = joined[f"{kind}_delta"]
        ok = np.isfinite(signed) & np.isfinite(gain)
        row[f"r_{kind}"] = float(stats.pearsonr(signed[ok], gain[ok]).statistic) if ok.sum() > 2 else float("nan")
        rhos = [stats.spearmanr(signed[idx], gain[idx]).statistic
                for _, idx in joined[ok].groupby("target").groups.items()]
        row[f"rho_{kind}"] = float(np.mean(rhos)) if rhos else float("nan")
    return row


def recommendation_hits(long: pd.DataFrame, truth: dict[str, str], kind: str, extra: str | None) -> str:
    """Hits of the recommendation for ``kind``, with ``extra`` added to its carrying measures."""
    saved = dict(recommendation.PRETRAINING)
    if extra:
        recommendation.PRETRAINING[kind] = (*saved[kind], extra)
    try:
        recs = {r.target: r for r in recommend(long, kind)}
    finally:
        recommendation.PRETRAINING.clear()
        recommendation.PRETRAINING.update(saved)
    n = sum(recs[t].recommended == [s] for t, s in truth.items())
    ties = sum(len(recs[t].recommended) > 1 and s in recs[t].recommended for t, s in truth.items())
    confidence = np.nanmean([recs[t].confidence for t in truth])
    return f"{n}/{len(truth)}" + (f" +{ties} tie" if ties else "") + f" ({confidence:.0%})"


def kl_reductions(bench: Workbench, sources: list[Corpus], targets: list[Corpus], size: int) -> pd.DataFrame:
    rows = []
    prepared = [bench.source(c, size, 1)[0] for c in sources]
    for t in targets:
        target = bench.target(t)
        for name, value in kl_module.kl_reduction(prepared, target).items():
            rows.append({"source": name, "target": t.name, "measure": "kl", "value": -value})
    return pd.DataFrame(rows)  # negated so that "lower = more similar" holds, as for KL itself


def hash_costs(bench: Workbench, sources: list[Corpus], targets: list[Corpus], size: int) -> None:
    """SHA-256 (DSIR's, memoised per distinct n-gram) against CRC-32: time and effect on the rankings."""
    sample = bench.source(sources[0], size, 1)[0].sample
    units = list(sample.sentences())
    rows = []
    for label, fn, memo in (("sha256, every n-gram hashed", kl_module.bucket_of, False),
                            ("sha256, memoised (shipped)", kl_module.bucket_of, True),
                            ("crc32, memoised", lambda g, b: zlib.crc32(g.encode("utf-8")) % b, True)):
        featurizer = kl_module.Featurizer(10_000)
        if not memo:
            featurizer.bucket = lambda g, f=fn: f(g, 10_000)  # type: ignore[method-assign]
        else:
            featurizer.bucket = _memoised(fn)  # type: ignore[method-assign]
        start = time.perf_counter()
        featurizer.counts(units)
        rows.append({"featurizer": label, "seconds": round(time.perf_counter() - start, 2),
                     "tokens": sample.n_tokens})
    start = time.perf_counter()
    for tokens in units:
        kl_module.WORDPUNCT.findall(" ".join(tokens).lower())
    rows.append({"featurizer": "(splitting alone)", "seconds": round(time.perf_counter() - start, 2),
                 "tokens": sample.n_tokens})
    print(pd.DataFrame(rows).to_string(index=False), flush=True)
    # the rankings of the five sources for each target under each hash
    orders = {}
    for label, fn in (("sha256", kl_module.bucket_of), ("crc32", lambda g, b: zlib.crc32(g.encode()) % b)):
        values = {}
        for c in sources:
            f = kl_module.Featurizer(10_000)
            f.bucket = _memoised(fn)  # type: ignore[method-assign]
            values[c.name] = f.counts(bench.source(c, size, 1)[0].sample.sentences())
        for t in targets:
            f = kl_module.Featurizer(10_000)
            f.bucket = _memoised(fn)  # type: ignore[method-assign]
            p_t = f.counts(bench.target(t).sentences)
            p_t = p_t / p_t.sum()
            kls = {s: float(kl_module.divergence(p_t, v / v.sum())) for s, v in values.items()}
            orders[(label, t.name)] = (sorted(kls, key=kls.get), kls)
    for t in targets:
        a, b = orders[("sha256", t.name)], orders[("crc32", t.name)]
        gap = max(abs(a[1][s] - b[1][s]) for s in a[1])
        print(f"{t.name}: same first source: {a[0][0] == b[0][0]}; same ranking of the 5: {a[0] == b[0]}; largest KL difference {gap:.4f} "
              f"(KL range {min(a[1].values()):.3f}..{max(a[1].values()):.3f})", flush=True)


def _memoised(fn):
    memo: dict[str, int] = {}

    def bucket(gram: str) -> int:
        b = memo.get(gram)
        if b is None:
            b = memo[gram] = fn(gram, 10_000)
        return b

    return bucket


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--cache", default=str(ROOT / "bench" / "out" / "cache-new-measures"))
    parser.add_argument("--measures", default=",".join(SEED_MEASURES + NEW_MEASURES))
    parser.add_argument("--stable", default="ppl,jsd,tvc,kl",
                        help="measures whose first choices are compared with a second draw of the sub-corpora (seed 14)")
    parser.add_argument("--emb-sentences", type=int, default=MeasureOptions().emb_sentences,
                        help="sentences per side that EMB embeds")
    parser.add_argument("--hash", action="store_true", help="only time SHA-256 against CRC-32 hashing")
    args = parser.parse_args()
    if not (SHARED / "sources").is_dir():
        sys.exit("../shared/data is not present")
    store = ArtefactStore(Path(args.cache))
    sources = [Corpus.from_path(p) for p in sorted((SHARED / "sources").glob("*.txt.gz"))]
    targets = [Corpus.from_path(SHARED / "targets" / t / "test.conll", name=t) for t in TABLE3]
    results = pd.read_csv(SHARED / "results" / "dai2019_table3.csv")
    measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    if args.hash:
        hash_costs(Workbench(store), sources, targets, int(args.sizes.split(",")[0]))
        return
    held_sources, held_targets = held_out_split(Path(tempfile.mkdtemp(prefix="simcore-bench-new-")))
    self_truth = {c.name: c.name for c in held_sources}
    rows, recs = [], []
    for size in [int(s) for s in args.sizes.split(",")]:
        bench = Workbench(store, options=MeasureOptions(seed=13, emb_sentences=args.emb_sentences))
        tables, held = [], []
        for m in measures:
            long, per_source, per_target = timed_matrix(bench, sources, targets, m, size)
            self_long = bench.matrix(held_sources, held_targets, [m], sample_tokens=size)
            errors = long["error"].dropna().unique()
            stable = ""
            if m in args.stable.split(","):
                other = Workbench(store, options=MeasureOptions(seed=14)).matrix(sources, targets, [m], sample_tokens=size)
                a, b = firsts(long), firsts(other)
                stable = f"{sum(a.get((t, m)) == b.get((t, m)) for t in TABLE3)}/{len(TABLE3)}"
            tables.append(long)
            held.append(self_long)
            rows.append({"size": f"{size:,}", "measure": get_measure(m).label, "table3": hits(long, TABLE3, m),
                         "self": hits(self_long, self_truth, m), "stable": stable,
                         **correlations(long, results, m),
                         "s/source": round(per_source, 1), "s/target": round(per_target, 1),
                         "error": errors[0][:60] if len(errors) else ""})
            print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format=lambda v: f"{v:.3f}"), flush=True)
        long, self_long = pd.concat(tables, ignore_index=True), pd.concat(held, ignore_index=True)
        for kind in ("lm", "vectors"):
            carrying = recommendation.PRETRAINING[kind]
            if not set(carrying) <= set(measures):
                continue
            for extra in [None] + [m for m in NEW_MEASURES if m in measures]:
                recs.append({"size": f"{size:,}", "pretraining": kind,
                             "measures": "+".join((*carrying, extra) if extra else carrying),
                             "table3": recommendation_hits(long, TABLE3, kind, extra),
                             "self": recommendation_hits(self_long, self_truth, kind, extra)})
        if "kl" in measures:
            reduction = kl_reductions(bench, sources, targets, size)
            rows.append({"size": f"{size:,}", "measure": "KL reduction (−)", "table3": hits(reduction, TABLE3, "kl"),
                         "self": "", **correlations(reduction, results, "kl")})
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("\nMeasures (hits: first choice is the right source; r: Pearson over 25 pairs with Table 3's F1 gain, "
              "similarity signed so higher = more similar; rho: mean within-target Spearman):")
        print(pd.DataFrame(rows).astype(object).fillna("").to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        if recs:
            print("\nRecommendation with its carrying measures, and with a newer measure added (hits, ties that "
                  "include the right source, mean confidence):")
            print(pd.DataFrame(recs).to_string(index=False))


if __name__ == "__main__":
    main()
