"""Time of rank, recommend and the exports on a matrix of many targets (default 10,000 targets x 20 sources).

A generated matrix CSV with every column simcore writes (ppl and jsd, 20 bootstrap replicates a
cell), then: read_matrix (with its column checks), recommend, rank_sources, each export format,
and the command line's ``rank --out`` and ``recommend`` (which print a summary, not 10,000 lines).

Usage: .venv/bin/python bench/bench_hostile_scale.py [--targets 10000] [--sources 20] [--replicates 20]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.analysis.ranking import rank_sources  # noqa: E402
from simcore.analysis.tables import read_matrix  # noqa: E402
from simcore.answer.recommendation import recommend  # noqa: E402
from simcore.cli import main as cli  # noqa: E402
from simcore.matrix.rows import COLUMNS  # noqa: E402
from simcore.reporting.export import write_ranking, write_recommendations  # noqa: E402


def make_matrix(path: Path, targets: int, sources: int, replicates: int, seed: int = 7) -> int:
    rng = np.random.default_rng(seed)
    rows = []
    for measure, centre, direction in (("ppl", 400.0, -1), ("jsd", 0.4, -1)):
        values = centre * rng.uniform(0.5, 1.5, size=(targets, sources))
        noise = values[..., None] * rng.normal(1, 0.03, size=(targets, sources, replicates))
        for t in range(targets):
            for s in range(sources):
                rows.append((f"s{s}", f"t{t}", measure, values[t, s], values[t, s] * 0.03, 1, 100000, 500000,
                             False, True, "", direction, 0.01, "", json.dumps({"seed": 13}),
                             " ".join(f"{v:.6g}" for v in noise[t, s])))
    names = ["source", "target", "measure", "value", "std", "n_samples", "sample_tokens", "source_tokens",
             "used_whole", "reliable", "flag", "direction", "oov_rate", "error", "options", "replicates"]
    table = pd.DataFrame(rows, columns=names)
    table = table.reindex(columns=[c for c in COLUMNS if c in names or c not in ("ladder",)])
    table.to_csv(path, index=False)
    return len(table)


def timed(label: str, results: list[tuple[str, float]], work):
    started = time.perf_counter()
    value = work()
    results.append((label, time.perf_counter() - started))
    return value


def quietly(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    lines = out.getvalue().count("\n")
    return code * 1_000_000 + lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=10_000)
    parser.add_argument("--sources", type=int, default=20)
    parser.add_argument("--replicates", type=int, default=20)
    parser.add_argument("--skip-recommend", action="store_true",
                        help="leave out simcore.answer.recommendation.recommend (timed on its own in bench_recommendation)")
    args = parser.parse_args()
    kind = ["--pretraining", "vectors"] if args.skip_recommend else []  # a ppl/jsd matrix: no vectors recommendation
    results: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        matrix = tmp_path / "m.csv"
        n = timed("generate the matrix CSV", results, lambda: make_matrix(matrix, args.targets, args.sources,
                                                                          args.replicates))
        long = timed("read_matrix (every column checked)", results, lambda: read_matrix(matrix))
        if args.skip_recommend:
            recs = []
            ranking = timed("rank_sources (no recommendation)", results, lambda: rank_sources(long, pretraining=None))
        else:
            recs = timed("recommend (lm)", results, lambda: recommend(long, "lm"))
            ranking = timed("rank_sources (with the recommendation)", results,
                            lambda: rank_sources(long, recommendations=recs))
        for suffix in (".csv", ".json", ".md", ".html"):
            timed(f"write_ranking {suffix}", results,
                  lambda s=suffix: write_ranking(ranking, tmp_path / f"r{s}", {}, recs))
        if recs:
            timed("write_recommendations .csv", results,
                  lambda: write_recommendations(recs, ranking, tmp_path / "rec.csv"))
        lines = timed("CLI rank (printed summary)", results,
                      lambda: quietly(["rank", "--matrix", str(matrix), *kind]))
        timed("CLI rank --out .html", results,
              lambda: quietly(["rank", "--matrix", str(matrix), "--out", str(tmp_path / "cli.html"), *kind]))
        rec_lines = 0
        if not args.skip_recommend:
            rec_lines = timed("CLI recommend --out .csv", results,
                              lambda: quietly(["recommend", "--matrix", str(matrix), "--out", str(tmp_path / "c.csv")]))
    print(f"\n{args.targets:,} targets x {args.sources} sources x 2 measures ({n:,} rows, "
          f"{args.replicates} replicates a cell); CLI rank printed {lines % 1_000_000} lines, "
          f"recommend {rec_lines % 1_000_000}\n")
    print(f"{'step':45} {'seconds':>9}")
    for label, seconds in results:
        print(f"{label:45} {seconds:9.2f}")


if __name__ == "__main__":
    main()
