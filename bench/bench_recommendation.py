"""How each measure and the recommendation find the right source as the sample size grows.

Checks, on ../shared/data:
- table3: the five targets' test splits against the five sources; the right source is the winner of
  the paper's Table 3 (CoNLL2003 -> 1BWB; CRAFT, JNLPBA, ScienceIE, WetLab -> MEDLINE).
- self: a held-out part of each source (2,000 random units) as a target, against the five sources
  without that part; the right source is its own.
For each size: hits of each measure (its first choice is the right source) and of the
recommendation for language models (PPL+JSD) and for word vectors (TVcC+TVC+WVV), where a tie that
includes the right source counts as "tie"; how stable each measure's first choices are between two
independent draws of the sub-corpora (seeds 13 and 14); the mean confidence; the time each size costs.

With --fairness: the checks of the size ladder (issue 20):
- size bias: PPL, its OOV rate, JSD and TVC of each source as its sample shrinks (10k to 1M tokens), per
  target, and the direction each moves (the wording of simcore.matrix.ladder.SIZE_DIRECTION is tested against it);
- size invariance: one source cut to 10k, 30k and 100k tokens beside the five full sources: the cut copy's
  rank under PPL and JSD (compared pairwise at common sizes) and in the recommendation, before this change
  (the recommendation of commit 336cfc9 on a table at max(smallest source, 100k) tokens, small sources used
  whole) and after;
- mixed sizes: the bundled sample beside news_1bwb and biomed_ohsumed_medline, against the CoNLL2003 and
  WetLab test splits;
- the time the ladder adds to a cold 5 x 5 matrix (PPL and JSD).

With --costs N: what the bootstrap (200 replicates) adds to scoring, and what one-thread (reproducible)
skip-gram training costs against four threads, at sample size N.

With --speed T: the time of ``recommend`` (wall and CPU seconds, every thread's) and ``rank_sources``
on generated tables of T targets x 20 sources (PPL and JSD, the paper's Table 3 shape: value and std,
no replicates; and the same with 200 replicates per cell), and the load average after them, with
--root DIR another checkout measured beside this one (a before/after).
Needs no shared data.

Usage: .venv/bin/python bench/bench_recommendation.py [--sizes 100000,300000,1000000] [--cache DIR] [--costs N]
       .venv/bin/python bench/bench_recommendation.py --fairness [--cut-source reviews_yelp]
       .venv/bin/python bench/bench_recommendation.py --speed 10000 [--root DIR]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.answer.recommendation import recommend  # noqa: E402
from simcore.corpora.corpus import Corpus  # noqa: E402
from simcore.matrix.workbench import Workbench  # noqa: E402
from simcore.measures.lookup import get_measure  # noqa: E402
from simcore.measures.options import MeasureOptions  # noqa: E402
from simcore.utils.store import ArtefactStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
MEASURES = ["ppl", "jsd", "tvc", "tvcc", "wvv"]
TABLE3 = {"conll2003": "news_1bwb", "craft": "biomed_ohsumed_medline", "jnlpba": "biomed_ohsumed_medline",
          "scienceie": "biomed_ohsumed_medline", "wetlab_wlp": "biomed_ohsumed_medline"}
HELD_OUT_UNITS = 2000


def held_out_split(work: Path) -> tuple[list[Corpus], list[Corpus]]:
    """Each source without 2,000 random units, and those units as a target named after it."""
    (work / "sources").mkdir(parents=True, exist_ok=True)
    (work / "targets").mkdir(parents=True, exist_ok=True)
    for path in sorted((SHARED / "sources").glob("*.txt.gz")):
        name = path.name.removesuffix(".txt.gz")
        with gzip.open(path, "rt", encoding="utf-8") as f:
            units = [line for line in f if line.strip()]
        held = set(random.Random(7).sample(range(len(units)), HELD_OUT_UNITS))
        (work / "sources" / f"{name}.txt").write_text("".join(u for i, u in enumerate(units) if i not in held))
        (work / "targets" / f"{name}.txt").write_text("".join(units[i] for i in sorted(held)))
    sources = [Corpus.from_path(p) for p in sorted((work / "sources").iterdir())]
    targets = [Corpus.from_path(p) for p in sorted((work / "targets").iterdir())]
    return sources, targets


def firsts(long: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(target, measure) -> the source the measure ranks first."""
    out = {}
    for (target, measure), part in long.groupby(["target", "measure"]):
        key = part["value"] * get_measure(measure).direction
        if key.notna().any():
            out[(target, measure)] = part.loc[key.idxmax(), "source"]
    return out


def score(long: pd.DataFrame, truth: dict[str, str]) -> dict[str, str]:
    """Hits per measure and per recommendation, as 'hits/n' (+ ties that include the right source)."""
    first = firsts(long)
    row = {}
    for m in MEASURES:
        row[m] = f"{sum(first.get((t, m)) == s for t, s in truth.items())}/{len(truth)}"
    for kind in ("lm", "vectors"):
        recs = {r.target: r for r in recommend(long, kind)}
        hits = sum(recs[t].recommended == [s] for t, s in truth.items())
        ties = sum(len(recs[t].recommended) > 1 and s in recs[t].recommended for t, s in truth.items())
        confidence = pd.Series([recs[t].confidence for t in truth]).mean()
        row[f"rec_{kind}"] = f"{hits}/{len(truth)}" + (f" +{ties} tie" if ties else "") + f" ({confidence:.0%})"
    return row


def costs(store: ArtefactStore, sources: list[Corpus], targets: list[Corpus], size: int) -> None:
    """What the bootstrap and reproducible WVV cost: warm scoring with and without replicates, and
    skip-gram training with one thread (reproducible) and four."""
    rows = []
    for bootstrap in (0, 200):
        bench = Workbench(store, options=MeasureOptions(bootstrap=bootstrap, seed=21))
        bench.matrix(sources, targets[:1], ["ppl", "jsd", "tvc"], sample_tokens=size)  # prepare (not timed)
        start = time.perf_counter()
        bench.matrix(sources, targets[1:], ["ppl", "jsd", "tvc"], sample_tokens=size)
        rows.append({"what": f"score {len(targets) - 1} targets x {len(sources)} sources (PPL, JSD, TVC), "
                             f"bootstrap {bootstrap}", "seconds": round(time.perf_counter() - start, 1)})
    for workers in (1, 4):
        bench = Workbench(store, options=MeasureOptions(wvv_workers=workers, seed=31 + workers))
        source = bench.source(sources[0], size, 1)[0]
        start = time.perf_counter()
        get_measure("wvv").prepare(source)
        rows.append({"what": f"skip-gram on {source.sample.n_tokens:,} tokens, {workers} thread(s)"
                             + (" (reproducible)" if workers == 1 else ""),
                     "seconds": round(time.perf_counter() - start, 1)})
    print(pd.DataFrame(rows).to_string(index=False), flush=True)


def cut(source: Path, tokens: int, out: Path, seed: int = 5) -> Corpus:
    """A random cut of about ``tokens`` whitespace tokens of a source, as a corpus of its own."""
    with gzip.open(source, "rt", encoding="utf-8") as f:
        units = [line for line in f if line.strip()]
    random.Random(seed).shuffle(units)
    kept, count = [], 0
    for unit in units:
        if count >= tokens:
            break
        kept.append(unit)
        count += len(unit.split())
    out.write_text("".join(kept))
    return Corpus.from_path(out)


def old_recommend():
    """The recommendation as it was before the size ladder (commit 336cfc9), loaded from git."""
    import importlib.util
    import subprocess

    text = subprocess.run(["git", "-C", str(ROOT), "show", "336cfc9:simcore/answer/recommendation.py"], check=True,
                          capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader("simcore._recommendation_before", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "simcore"
    sys.modules[spec.name] = module
    exec(compile(text, "recommendation@336cfc9", "exec"), module.__dict__)
    return module.recommend


def size_bias_table(store: ArtefactStore, sources: list[Corpus], targets: list[Corpus]) -> pd.DataFrame:
    """PPL, OOV rate, JSD and TVC of each source at 10k to 1M tokens, per target."""
    bench = Workbench(store)
    rows = []
    for source in sources:
        n = bench.tokenize(source).n_tokens
        for size in [s for s in (10_000, 30_000, 100_000, 300_000, 1_000_000) if s <= n]:
            samples = bench.source(source, size, 1)
            for target in targets:
                prepared = bench.target(target)
                cells = {m: bench.cell(samples, prepared, m) for m in ("ppl", "jsd", "tvc")}
                rows.append({"source": source.name, "target": target.name, "tokens": size,
                             "ppl": cells["ppl"].value, "oov": cells["ppl"].details.get("oov_rate"),
                             "jsd": cells["jsd"].value, "tvc": cells["tvc"].value})
    return pd.DataFrame(rows)


def size_directions(table: pd.DataFrame) -> pd.DataFrame:
    """Per measure: in how many (source, target) series the value at the smallest size is above the
    value at the largest, i.e. which way the measure moves as the sample shrinks."""
    rows = []
    for measure in ("ppl", "oov", "jsd", "tvc"):
        up = down = 0
        for _, series in table.groupby(["source", "target"]):
            series = series.sort_values("tokens")
            if len(series) < 2:
                continue
            small, large = series[measure].iloc[0], series[measure].iloc[-1]
            up += small > large
            down += small < large
        rows.append({"measure": measure, "higher when smaller": up, "lower when smaller": down})
    return pd.DataFrame(rows)


def rank_of(long: pd.DataFrame, target: str, measure: str, source: str) -> int:
    """The source's place under one measure, counted pairwise at common sizes (1 + sources that beat it)."""
    from simcore.answer.recommendation import pairwise_table

    pairs = pairwise_table(long, target)
    pairs = pairs[pairs["measure"] == measure]
    mine = pairs[(pairs["source_a"] == source) | (pairs["source_b"] == source)]
    return 1 + int(((mine["better"] != source) & (mine["better"] != "=")).sum())


def ladder_cost(sources: list[Corpus], targets: list[Corpus]) -> None:
    """A cold 5 x 5 matrix (PPL and JSD) on a fresh store, at one size and with the ladder."""
    print("## What the ladder costs: a cold 5 x 5 matrix (PPL and JSD), fresh store\n")
    rows = []
    for label, one_size in (("one size (no ladder)", True), ("with the ladder", False)):
        bench = Workbench(ArtefactStore(Path(tempfile.mkdtemp(prefix="simcore-bench-cold-"))))
        start = time.perf_counter()
        sizes = [bench.tokenize(c).n_tokens for c in sources]
        table = bench.matrix(sources, targets, ["ppl", "jsd"], sample_tokens=min(sizes) if one_size else None)
        samples = int(table.groupby("source")["ladder"].first().map(
            lambda t: 1 + (len(json.loads(t)) if isinstance(t, str) else 0)).sum())
        rows.append({"matrix": label, "seconds": round(time.perf_counter() - start, 1), "source samples": samples})
    print(pd.DataFrame(rows).to_string(index=False))


def fairness(store: ArtefactStore, cut_name: str, cost_only: bool = False) -> None:
    sources = [Corpus.from_path(p) for p in sorted((SHARED / "sources").glob("*.txt.gz"))]
    targets = [Corpus.from_path(SHARED / "targets" / t / "test.conll", name=t) for t in TABLE3]
    if cost_only:
        ladder_cost(sources, targets)
        return
    work = Path(tempfile.mkdtemp(prefix="simcore-bench-fair-"))
    print("## Size bias: PPL, OOV rate, JSD and TVC as a source's sample shrinks\n", flush=True)
    start = time.perf_counter()
    bias = size_bias_table(store, sources, targets)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(bias.round({"ppl": 1, "oov": 3, "jsd": 4, "tvc": 4}).to_string(index=False))
        print()
        print(size_directions(bias).to_string(index=False))
    print(f"({time.perf_counter() - start:.0f} s)\n", flush=True)

    print(f"## Size invariance: {cut_name} cut to 10k, 30k and 100k tokens beside the five full sources\n")
    before_recommend = old_recommend()
    rows = []
    for tokens in (10_000, 30_000, 100_000):
        copy = cut(SHARED / "sources" / f"{cut_name}.txt.gz", tokens, work / f"{cut_name}_cut{tokens // 1000}k.txt")
        pool = sources + [copy]
        bench = Workbench(store)
        sizes = [bench.tokenize(c).n_tokens for c in pool]
        before = bench.matrix(pool, targets, ["ppl", "jsd"], sample_tokens=max(min(sizes), 100_000))
        after = bench.matrix(pool, targets, ["ppl", "jsd"])
        old = {r.target: r for r in before_recommend(before, "lm")}
        new = {r.target: r for r in recommend(after, "lm")}
        for target in TABLE3:
            rows.append({
                "cut": f"{tokens // 1000}k", "target": target,
                "ppl rank before": int(before[(before.target == target) & (before.measure == "ppl")]
                                       .set_index("source")["value"].rank().loc[copy.name]),
                "ppl rank after": rank_of(after, target, "ppl", copy.name),
                "jsd rank after": rank_of(after, target, "jsd", copy.name),
                "cut's share before": f"{old[target].shares.get(copy.name, 0):.0%}",
                "cut's share after": f"{new[target].shares.get(copy.name, 0):.0%}",
                "answer before": f"{'|'.join(old[target].recommended)} ({old[target].level} {old[target].confidence:.0%})",
                "answer after": f"{'|'.join(new[target].recommended)} ({new[target].level} {new[target].confidence:.0%})",
                "right": TABLE3[target]})
        print(pd.DataFrame(rows[-len(TABLE3):]).to_string(index=False), flush=True)

    print("\n## Mixed sizes: the bundled sample beside news_1bwb and biomed_ohsumed_medline\n")
    sample = ROOT / "sample_data" / "sources"
    pool = [Corpus.from_path(p) for p in sorted(sample.iterdir()) if not p.name.startswith(".")]
    pool += [c for c in sources if c.name in ("news_1bwb", "biomed_ohsumed_medline")]
    mixed_targets = [t for t in targets if t.name in ("conll2003", "wetlab_wlp")]
    bench = Workbench(store)
    sizes = [bench.tokenize(c).n_tokens for c in pool]
    before = bench.matrix(pool, mixed_targets, ["ppl", "jsd"], sample_tokens=max(min(sizes), 100_000))
    after = bench.matrix(pool, mixed_targets, ["ppl", "jsd"])
    for name, table, rec in (("before", before, before_recommend), ("after", after, recommend)):
        for r in rec(table, "lm"):
            print(f"{name}: {r.headline()}")
    print()

    ladder_cost(sources, targets)


_SPEED = """
import os, sys, time
sys.path.insert(0, {root!r})
import numpy as np, pandas as pd
from simcore.analysis import rank_sources
from simcore.matrix.rows import encode_replicates
from simcore.answer.recommendation import recommend
rng = np.random.default_rng(0)
rows = []
for t in range({targets}):
    for measure, base, sd in (("ppl", 500, 8), ("jsd", 0.5, 0.004)):
        for s in range(20):
            value = base * (0.8 if t % 7 == 0 and s == 0 else 1 + 0.03 * rng.random())
            rows.append(dict(source=f"s{{s:02d}}", target=f"t{{t:05d}}", measure=measure, value=value,
                             std=sd * rng.random(), sample_tokens=100_000))
long = pd.DataFrame(rows)
if {replicates}:
    draws = np.random.default_rng(1).standard_normal((len(long), 200))
    long["replicates"] = [encode_replicates(r) for r in (long["value"].to_numpy()[:, None]
                                                         + long["std"].to_numpy()[:, None] * draws).tolist()]
start, cpu = time.perf_counter(), time.process_time()
recommendations = recommend(long)
middle, cpu = time.perf_counter(), time.process_time() - cpu
rank_sources(long)
print(round(middle - start, 1), round(cpu, 1), round(time.perf_counter() - middle, 1), round(os.getloadavg()[0], 1),
      sep="\t")
"""


def speed(targets: int, roots: list[Path]) -> None:
    """recommend and rank_sources on T targets x 20 sources, with and without replicates, per checkout."""
    import subprocess

    rows = []
    for root in roots:
        for replicates in (False, True):
            script = _SPEED.format(root=str(root), targets=targets, replicates=replicates)
            done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
            recommend_s, cpu_s, rank_s, load = done.stdout.strip().splitlines()[-1].split("\t")
            rows.append({"checkout": str(root), "table": "value, std, 200 replicates" if replicates else "value, std",
                         "targets x sources": f"{targets:,} x 20", "recommend s": float(recommend_s),
                         "recommend CPU s": float(cpu_s), "rank s": float(rank_s), "load": float(load)})
            print(f"{root}: {rows[-1]['table']}: recommend {recommend_s} s ({cpu_s} CPU s), rank {rank_s} s, "
                  f"load {load}", flush=True)
    print()
    print(pd.DataFrame(rows).to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--cache", default=str(ROOT / "bench" / "out" / "cache-recommendation"))
    parser.add_argument("--fairness", action="store_true", help="only the size-ladder checks (see above)")
    parser.add_argument("--cost-only", action="store_true", help="with --fairness: only the ladder's cost")
    parser.add_argument("--cut-source", default="reviews_yelp", help="the source cut to 10k/30k/100k tokens")
    parser.add_argument("--costs", type=int, default=0, metavar="TOKENS",
                        help="only time the bootstrap and reproducible WVV at this sample size")
    parser.add_argument("--speed", type=int, default=0, metavar="TARGETS",
                        help="only time recommend and rank on generated tables of this many targets x 20 sources")
    parser.add_argument("--root", type=Path, action="append", default=[],
                        help="with --speed: another checkout to time beside this one (repeatable)")
    args = parser.parse_args()
    if args.speed:
        speed(args.speed, [*args.root, ROOT])
        return
    if not (SHARED / "sources").is_dir():
        sys.exit("../shared/data is not present")
    store = ArtefactStore(Path(args.cache))
    sources = [Corpus.from_path(p) for p in sorted((SHARED / "sources").glob("*.txt.gz"))]
    targets = [Corpus.from_path(SHARED / "targets" / t / "test.conll", name=t) for t in TABLE3]
    if args.costs:
        costs(store, sources, targets, args.costs)
        return
    if args.fairness:
        fairness(store, args.cut_source, args.cost_only)
        return
    work = Path(tempfile.mkdtemp(prefix="simcore-bench-rec-"))
    held_sources, held_targets = held_out_split(work)
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        start = time.perf_counter()
        tables = {}
        for seed in (13, 14):
            bench = Workbench(store, options=MeasureOptions(seed=seed))
            tables[seed] = bench.matrix(sources, targets, MEASURES + ["ttr"], sample_tokens=size)
        table3_seconds = (time.perf_counter() - start) / 2
        start = time.perf_counter()
        held = Workbench(store).matrix(held_sources, held_targets, MEASURES, sample_tokens=size)
        self_seconds = time.perf_counter() - start
        a, b = firsts(tables[13]), firsts(tables[14])
        stability = {m: f"{sum(a.get((t, m)) == b.get((t, m)) for t in TABLE3)}/{len(TABLE3)}" for m in MEASURES}
        rows.append({"size": f"{size:,}", "check": "table3", **score(tables[13], TABLE3),
                     "seconds": round(table3_seconds)})
        rows.append({"size": f"{size:,}", "check": "self", **score(held, {c.name: c.name for c in held_sources}),
                     "seconds": round(self_seconds)})
        rows.append({"size": f"{size:,}", "check": "stable (2 draws)", **stability, "seconds": None})
        print(pd.DataFrame(rows[-3:]).to_string(index=False), flush=True)
    print("\nHits: the measure's first choice is the right source; rec_lm/rec_vectors: the recommendation "
          "(ties that include the right source, and the mean confidence, in brackets). Stable: the same first "
          "choice on two independent draws of the sub-corpora. Seconds: cold matrix time per draw.\n")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(pd.DataFrame(rows).fillna("").to_string(index=False))


if __name__ == "__main__":
    main()
