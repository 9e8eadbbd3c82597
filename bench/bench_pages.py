"""What each dashboard page's script costs, opened by its address in a large workspace, as a table.

Builds a workspace of 20 sources (the bundled sample's six and 14 cuts of ../shared/data's sources,
written under a temporary folder), 8 targets (the sample's three and 400 sentences of five shared
test splits) and 7 matrices (Table 3 of Dai et al. and six made-up 20 x 8 x 5 matrices: random
values, WVV missing for a third of the sources and no spread for a quarter, as a computed matrix of
these sizes has), the size issue 37 measured pages in. Then opens every page by its address
``rounds`` times with Streamlit's AppTest, each open a new session that restores the workspace from
disk (as a reload, a bookmark or a new tab does), and prints each run's wall and CPU seconds (the
process's user+sys: the script runs in a thread of this process). The first round includes the
page's imports and the first build of what the server caches; the later rounds are a user's repeat
visits.

The browser's own timings (first render, charts drawn) are bench/bench_ui.py's; this one needs no
browser and no computation, and says where a page's time goes with ``--profile`` (a stack sampler on
the script's thread, the share of samples in each of simcore's and the dashboard's functions).

Usage: .venv/bin/python bench/bench_pages.py [--rounds 2] [--profile] [--root DIR]
       (--root: another checkout's dashboard timed in the same way, a before/after)
"""

from __future__ import annotations

import argparse
import collections
import gzip
import itertools
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
PAGES = [
    "app.py",
    "pages/1_Corpora.py",
    "pages/2_Similarity.py",
    "pages/3_Predictiveness.py",
    "pages/4_Agreement.py",
    "pages/5_Ranking_and_export.py",
    "pages/6_Open_results.py",
    "pages/7_Sentence_selection.py",
    "pages/8_Compare_results.py",
    "pages/9_NER_probe.py",
]


def write_corpora(data: Path) -> None:
    """14 source cuts (3,000 lines each) and 5 targets (400 test sentences each) of the shared
    data."""
    (data / "sources").mkdir(parents=True, exist_ok=True)
    (data / "targets").mkdir(parents=True, exist_ok=True)
    cuts = []
    for path in sorted((SHARED / "sources").glob("*.txt.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines = [line for line in itertools.islice(f, 9000) if line.strip()]
        cuts += [
            (f"{path.name.removesuffix('.txt.gz')}_part{k}", lines[k * 3000 : (k + 1) * 3000])
            for k in range(3)
        ]
    for name, lines in [c for c in cuts if c[1]][:14]:
        (data / "sources" / f"{name}.txt").write_text("".join(lines), encoding="utf-8")
    for folder in sorted(p for p in (SHARED / "targets").iterdir() if (p / "test.conll").is_file())[
        :5
    ]:
        sentences = (folder / "test.conll").read_text(encoding="utf-8").split("\n\n")[:400]
        (data / "targets" / f"{folder.name}_test.conll").write_text(
            "\n\n".join(sentences) + "\n", encoding="utf-8"
        )


def build(data: Path) -> str:
    """The workspace (its id): the sample, the corpora above, Table 3 and six made-up matrices."""
    import numpy as np
    import pandas as pd
    from streamlit.testing.v1 import AppTest

    from dashboard.loading import add_matrix_table, add_server_path, load_table3

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.run()
    at.button(key="load_sample").click().run()
    state = at.session_state["simcore_state"]
    for role in ("source", "target"):
        for path in sorted((data / f"{role}s").iterdir()):
            add_server_path(state, role, str(path))
    load_table3(state)
    rng = np.random.default_rng(0)
    for k in range(6):
        # as a computed matrix of these sizes has them: WVV missing for some sources (below 1M
        # tokens), and
        # cells without a spread (a source used whole), so the answer is worked out target by target
        rows = [
            {
                "source": s,
                "target": t,
                "measure": m,
                "value": np.nan if m == "wvv" and i % 3 == 0 else v,
                "std": np.nan if i % 4 == 0 else v * 0.01,
                "sample_tokens": 100_000,
            }
            for m, base in (("ppl", 500), ("jsd", 0.5), ("tvc", 0.6), ("tvcc", 0.5), ("wvv", 1e-4))
            for i, s in enumerate(sorted(state.sources))
            for t in sorted(state.targets)
            for v in [base * (1 + 0.3 * rng.random())]
        ]
        add_matrix_table(state, pd.DataFrame(rows), f"run {k}", "computed")
    at.run()
    return state.workspace


class Sampler(threading.Thread):
    """Every 5 ms, which functions of this checkout are on the stack of each thread but the main
    one."""

    def __init__(self, app: Path) -> None:
        super().__init__(daemon=True)
        self.app = str(app)
        self.done, self.samples, self.counts = False, 0, collections.Counter()
        self.main = threading.main_thread().ident

    def run(self) -> None:
        while not self.done:
            for ident, frame in sys._current_frames().items():
                if ident in (self.main, threading.get_ident()):
                    continue
                seen = set()
                while frame is not None:
                    name = frame.f_code.co_filename
                    if name.startswith(self.app) and ".venv" not in name:
                        seen.add(f"{os.path.relpath(name, self.app)}:{frame.f_code.co_name}")
                    frame = frame.f_back
                self.counts.update(seen)
                self.samples += 1
            time.sleep(0.005)


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def time_pages(app: Path, ws: str, rounds: int, profile: bool) -> None:
    """The pages of the checkout ``app``: one line per page and round,
    'page<TAB>round<TAB>wall<TAB>cpu<TAB>
    exceptions' (then the profile's lines, starting '#')."""
    from streamlit.testing.v1 import AppTest

    for r in range(rounds):
        for page in PAGES:
            at = AppTest.from_file(str(app / "app.py"), default_timeout=600)
            at.query_params["ws"] = ws
            sampler = Sampler(app)
            sampler.start()
            wall, used = time.perf_counter(), cpu()
            (at.run() if page == "app.py" else at.switch_page(str(app / page)).run())
            wall, used = time.perf_counter() - wall, cpu() - used
            sampler.done = True
            sampler.join()
            problems = len(at.exception)
            print(f"{page}\t{r}\t{wall:.2f}\t{used:.2f}\t{problems}", flush=True)
            if profile and r == rounds - 1:
                for name, n in sampler.counts.most_common(12):
                    print(f"#\t{page}\t{n / max(sampler.samples, 1):.2f}\t{name}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--profile", action="store_true", help="where each page's time goes (last round)"
    )
    parser.add_argument(
        "--root",
        type=Path,
        action="append",
        default=[],
        help="another checkout timed the same way on the same workspace (before/after)",
    )
    parser.add_argument("--time-only", nargs=2, metavar=("CACHE", "WS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.time_only:
        os.environ["SIMCORE_CACHE"] = args.time_only[0]
        time_pages(Path.cwd(), args.time_only[1], args.rounds, args.profile)
        return
    if not (SHARED / "sources").is_dir():
        raise SystemExit(f"{SHARED} is not present: this bench needs ../shared/data")
    work = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    os.environ["SIMCORE_CACHE"] = str(work / "cache")
    os.environ["SIMCORE_DATA_ROOTS"] = os.pathsep.join(
        [str(ROOT / "sample_data"), str(work / "data")]
    )
    os.environ.pop("SIMCORE_DEMO", None)
    write_corpora(work / "data")
    ws = build(work / "data")
    load = os.getloadavg()[0]
    results: dict[str, dict[tuple[str, int], tuple[float, float]]] = {}
    for root in [*args.root, ROOT]:  # each checkout in a fresh process: its own imports and caches
        done = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--rounds",
                str(args.rounds),
                *(["--profile"] if args.profile else []),
                "--time-only",
                str(work / "cache"),
                ws,
            ],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise SystemExit(
                f"{root}: "
                + (done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
            )
        kept = results.setdefault(str(root), {})
        for line in done.stdout.splitlines():
            fields = line.split("\t")
            if fields[0] == "#":
                print(f"  {root.name} {fields[1]}: {fields[2]} {fields[3]}")
            elif len(fields) == 5:
                kept[(fields[0], int(fields[1]))] = (float(fields[2]), float(fields[3]))
    print(
        "\nPages opened by address in a workspace of 20 sources, 8 targets and 7 matrices "
        f"({os.cpu_count()} cores; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after; "
        "wall and CPU seconds of the "
        "page's script run, each open a new session)"
    )
    rounds = range(args.rounds)
    print(
        "| checkout | page | " + " | ".join(f"open {r + 1}: wall s | CPU s" for r in rounds) + " |"
    )
    print("|" + "---|" * (2 + 2 * args.rounds))
    for root, kept in results.items():
        for page in PAGES:
            cells = " | ".join(
                f"{kept[(page, r)][0]:.2f} | {kept[(page, r)][1]:.2f}"
                if (page, r) in kept
                else "– | –"
                for r in rounds
            )
            print(f"| {Path(root).name} | {page} | {cells} |")


if __name__ == "__main__":
    main()
