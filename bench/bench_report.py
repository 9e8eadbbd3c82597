"""What building the Ranking page's report costs, part by part, as a markdown table.

The report the Ranking and export page builds once per matrix and choice of measures on a new
server (``dashboard/report_cache.py``: the ranking, the answers, the pairwise evidence, the CSV and
JSON downloads, the agreement and the HTML report), and what the Agreement page works out on each
open (the comparisons, the disagreements and which of them change a first choice), on a matrix of
bench/bench_pages.py's workspace: 20 sources x 8 targets x 5 measures of made-up values, WVV
missing for a third of the sources and no spread for a quarter (so every answer is drawn from the
std), and on the paper's Table 3. Each part is timed ``--repeat`` times in this process; the table
gives the best wall and CPU seconds (user+sys) of each. ``--root OTHER`` times another checkout the
same way (a before/after), each checkout in a process of its own.

Usage: .venv/bin/python bench/bench_report.py [--repeat 5] [--root OTHER]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASURES = (("ppl", 500), ("jsd", 0.5), ("tvc", 0.6), ("tvcc", 0.5), ("wvv", 1e-4))


def workspace_matrix(seed: int = 0):
    """A 20 x 8 x 5 matrix as bench_pages.py makes its six computed-looking ones."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    sources = [f"source_{i:02d}" for i in range(20)]
    targets = [f"target_{j}" for j in range(8)]
    rows = [{"source": s, "target": t, "measure": m,
             "value": np.nan if m == "wvv" and i % 3 == 0 else v,
             "std": np.nan if i % 4 == 0 else v * 0.01, "sample_tokens": 100_000}
            for m, base in MEASURES for i, s in enumerate(sources) for t in targets
            for v in [base * (1 + 0.3 * rng.random())]]
    return pd.DataFrame(rows)


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def best(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The best wall and CPU seconds of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        wall, used = time.perf_counter(), cpu()
        work()
        times.append((time.perf_counter() - wall, cpu() - used))
    return min(times)


def time_parts(repeat: int) -> None:
    """One line per matrix and part: 'matrix<TAB>part<TAB>wall<TAB>cpu'."""
    import pandas as pd

    from simcore.analysis.tables import checked_long, to_long

    table3 = to_long(pd.read_csv(ROOT / "sample_data" / "results" / "dai2019_table3.csv"))
    # as a workspace holds them: checked, with each measure's direction
    matrices = (("20 x 8 x 5", checked_long(workspace_matrix())), ("Table 3", checked_long(table3)))
    for name, long in matrices:
        for part, (wall, used) in time_matrix(name, long, repeat):
            print(f"{name}\t{part}\t{wall:.4f}\t{used:.4f}", flush=True)


def time_matrix(name: str, long, repeat: int) -> list[tuple[str, tuple[float, float]]]:
    """Each part's best wall and CPU seconds on one matrix."""
    from dashboard.agreement_view import flag_first_choice
    from dashboard.page_tables import rank_table
    from dashboard.report_cache import report_parts
    from simcore.analysis.agreement import agreement, comparisons
    from simcore.analysis.ranking import rank_sources
    from simcore.answer.evidence import pairs_evidence
    from simcore.answer.recommendation import recommend
    from simcore.reporting.export import pairs_csv, ranking_csv, ranking_json
    from simcore.reporting.report import build_report

    measures = list(dict.fromkeys(long["measure"]))
    answers = recommend(long, "lm")
    ranking = rank_sources(long, measures, "lm", recommendations=answers)
    pairs = pairs_evidence(long, answers, "lm")
    agreed = agreement(long, measures)
    paper = agreement(long, ["ppl", "wvv", "tvc"])

    def new_server() -> object:
        """The Ranking page's whole report, as a new server builds it (a new content each time)."""
        state = types.SimpleNamespace(matrix=long, results=None, extra={}, results_columns=None,
                                      matrix_options={"run": time.perf_counter()},
                                      matrix_label=name)
        return report_parts(state, measures, "lm")

    parts: list[tuple[str, Callable[[], object]]] = [
        ("rank_sources", lambda: rank_sources(long, measures, "lm")),
        ("recommend", lambda: recommend(long, "lm")),
        ("pairs_evidence", lambda: pairs_evidence(long, answers, "lm")),
        ("ranking and pairs CSV", lambda: (ranking_csv(ranking), pairs_csv(pairs))),
        ("ranking_json", lambda: ranking_json(ranking, {"measures": measures}, answers, pairs)),
        ("agreement, every measure", lambda: agreement(long, measures)),
        ("build_report", lambda: build_report(long, ranking, {}, source_label=name,
                                              agreement=agreed, recommendations=answers,
                                              pairs=pairs)),
        ("the whole report (a new server)", new_server),
        ("Ranking: a rank table per target", lambda: [
            rank_table(ranking, r.target, long, r.measures) for r in answers]),
        ("Agreement: comparisons", lambda: comparisons(long, ["ppl", "wvv", "tvc"])),
        ("Agreement: disagreements, first choices", lambda: flag_first_choice(
            paper.disagreements, long, paper.measures)),
    ]
    return [(part, best(work, repeat)) for part, work in parts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, action="append", default=[],
                        help="another checkout timed the same way (before/after)")
    parser.add_argument("--time-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.time_only:
        sys.path.insert(0, str(Path.cwd()))
        time_parts(args.repeat)
        return
    load = os.getloadavg()[0]
    results: dict[str, dict[tuple[str, str], tuple[float, float]]] = {}
    for root in [*args.root, ROOT]:
        command = [sys.executable, str(Path(__file__).resolve()), "--time-only",
                   "--repeat", str(args.repeat)]
        done = subprocess.run(command, cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                              capture_output=True, text=True)
        if done.returncode:
            lines = done.stderr.strip().splitlines()
            raise SystemExit(f"{root}: {lines[-1] if lines else 'failed'}")
        kept = results.setdefault(str(root), {})
        for line in done.stdout.splitlines():
            fields = line.split("\t")
            if len(fields) == 4:
                kept[(fields[0], fields[1])] = (float(fields[2]), float(fields[3]))
    print(f"\nReport building, best of {args.repeat} ({os.cpu_count()} cores; load average "
          f"{load:.1f} before, {os.getloadavg()[0]:.1f} after; milliseconds, CPU = user+sys)")
    roots = list(results)
    heads = " | ".join(f"{Path(r).name} wall ms | CPU ms" for r in roots)
    print(f"| matrix | part | {heads} |")
    print("|" + "---|" * (2 + 2 * len(roots)))
    for key in results[roots[-1]]:
        cells = " | ".join(f"{results[r][key][0] * 1000:.1f} | {results[r][key][1] * 1000:.1f}"
                           if key in results[r] else "– | –" for r in roots)
        print(f"| {key[0]} | {key[1]} | {cells} |")


if __name__ == "__main__":
    main()
