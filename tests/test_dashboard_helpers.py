"""The dashboard's non-widget helpers, on hand-made tables: comparison of two matrices, name matching,
kappa in words and the disagreements that change the first choice, the sentence-length chart, jobs."""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dashboard import jobs
from dashboard.agreement_view import first_choices, flag_first_choice, kappa_reading
from dashboard.charts import TARGET_COLOURS, fitted_lines, scatter
from dashboard.compare import compare
from dashboard.name_map import apply_mapping, suggest
from dashboard.page_tables import ranking_grid
from dashboard.state import AppState, NamedMatrix
from simcore.analysis.agreement import agreement
from simcore.corpora.corpus_counts import length_histogram
from simcore.utils.errors import SimcoreError


def long_frame(values: dict[tuple[str, str, str], float], directions: dict[str, int]) -> pd.DataFrame:
    return pd.DataFrame([{"target": t, "source": s, "measure": m, "value": v, "direction": directions[m]}
                         for (t, s, m), v in values.items()])


DIRS = {"ppl": -1, "tvc": 1, "ttr": 0}


def test_compare_two_rankings_by_hand():
    a = long_frame({("T", "x", "ppl"): 10, ("T", "y", "ppl"): 20, ("T", "z", "ppl"): 30,
                    ("T", "x", "tvc"): 0.9, ("T", "y", "tvc"): 0.5, ("T", "z", "tvc"): 0.1,
                    ("T", "x", "ttr"): 0.3, ("T", "y", "ttr"): 0.2, ("T", "z", "ttr"): 0.1,
                    ("U", "x", "ppl"): 5, ("U", "y", "ppl"): 6, ("U", "z", "ppl"): 7}, DIRS)
    # B: y now has the lowest perplexity for T; tvc unchanged; an extra source w only in B
    b = long_frame({("T", "x", "ppl"): 25, ("T", "y", "ppl"): 15, ("T", "z", "ppl"): 35, ("T", "w", "ppl"): 1,
                    ("T", "x", "tvc"): 0.8, ("T", "y", "tvc"): 0.6, ("T", "z", "tvc"): 0.2}, DIRS)
    result = compare(a, b)
    assert result.measures == ["ppl", "tvc"]  # TTR is not a similarity; no ranking
    assert result.targets == ["T"] and result.sources == ["x", "y", "z"]
    assert result.only_a == {"target": ["U"], "measure": ["ttr"]} and result.only_b == {"source": ["w"]}
    summary = result.summary().set_index(["target", "measure"])
    assert summary.loc[("T", "ppl"), "first choice (A)"] == "x"
    assert summary.loc[("T", "ppl"), "first choice (B)"] == "y"
    assert bool(summary.loc[("T", "ppl"), "first choice changed"])
    assert not summary.loc[("T", "tvc"), "first choice changed"]
    # ranks A (x1 y2 z3) against B (x2 y1 z3): scipy's Spearman
    assert summary.loc[("T", "ppl"), "Spearman ρ"] == pytest.approx(stats.spearmanr([1, 2, 3], [2, 1, 3]).statistic)
    assert summary.loc[("T", "ppl"), "sources that moved"] == 2
    side = result.side_by_side("T", "ppl").set_index("source")
    assert side.loc["y", "moved"] == "▲ 1" and side.loc["x", "moved"] == "▼ 1" and side.loc["z", "moved"] == "="
    assert side.loc["y", "value (B)"] == 15


def test_compare_refuses_matrices_with_nothing_in_common():
    a = long_frame({("T", "x", "ppl"): 1, ("T", "y", "ppl"): 2}, DIRS)
    b = long_frame({("V", "x", "ppl"): 1, ("V", "y", "ppl"): 2}, DIRS)
    with pytest.raises(SimcoreError, match="nothing|no target|share"):
        compare(a, b)


def test_named_matrices_are_kept_not_replaced():
    state = AppState()
    frame = long_frame({("T", "x", "ppl"): 1.0}, DIRS)
    first = state.add_matrix(NamedMatrix("run", frame, "computed"))
    second = state.add_matrix(NamedMatrix("run", frame.assign(value=2.0), "computed"))
    assert (first, second) == ("run", "run (2)") and state.active == "run (2)"
    assert state.matrix["value"].iloc[0] == 2.0
    renamed = state.rename_matrix("run", "order 4")
    assert list(state.matrices) == ["order 4", "run (2)"] and renamed == "order 4"
    state.remove_matrix("run (2)")
    assert state.active == "order 4" and state.matrix["value"].iloc[0] == 1.0


def test_name_suggestions():
    matrix_names = ["CoNLL2003", "news_ner", "med_forum_posts", "WNUT2016"]
    guesses = suggest(["news-ner", "Med Forum Posts", "conll", "dev", "wnut16"], matrix_names)
    assert guesses["news-ner"] == "news_ner" and guesses["Med Forum Posts"] == "med_forum_posts"
    assert guesses["conll"] == "CoNLL2003" and guesses["wnut16"] == "WNUT2016"
    assert guesses["dev"] is None  # nothing alike: the user picks
    results = pd.DataFrame({"target": ["dev", "news-ner"], "source": ["a", "b"], "f1": [1.0, 2.0]})
    mapped = apply_mapping(results, {"target": {"dev": "CoNLL2003", "news-ner": "news_ner"}, "source": {}})
    assert list(mapped["target"]) == ["CoNLL2003", "news_ner"] and list(results["target"]) == ["dev", "news-ner"]


@pytest.mark.parametrize("kappa, words", [(-0.1, "poor (less than chance)"), (0.0, "slight"), (0.2, "slight"),
                                          (0.35, "fair"), (0.5, "moderate"), (0.61, "substantial"),
                                          (0.733, "substantial"), (0.8, "substantial"), (0.81, "almost perfect"),
                                          (1.0, "almost perfect"), (float("nan"), "undefined")])
def test_kappa_reading_follows_landis_and_koch(kappa, words):
    assert kappa_reading(kappa) == words


def test_disagreements_that_change_the_first_choice():
    # target T: ppl ranks x first, tvc ranks y first -> (x, y) decides; (z, w) disagreement does not
    long = long_frame({("T", "x", "ppl"): 1, ("T", "y", "ppl"): 2, ("T", "z", "ppl"): 3, ("T", "w", "ppl"): 4,
                       ("T", "x", "tvc"): 0.8, ("T", "y", "tvc"): 0.9, ("T", "z", "tvc"): 0.1,
                       ("T", "w", "tvc"): 0.2}, DIRS)
    firsts = first_choices(long, ["ppl", "tvc"]).set_index("measure")["source"]
    assert firsts.to_dict() == {"ppl": "x", "tvc": "y"}
    result = agreement(long, ["ppl", "tvc"])
    flags = flag_first_choice(result.disagreements, long, ["ppl", "tvc"])
    pairs = {tuple(sorted((r.first, r.second))): bool(f) for r, f in zip(result.disagreements.itertuples(), flags)}
    assert pairs == {("x", "y"): True, ("w", "z"): False}


def test_length_histogram_clips_the_long_tail():
    lengths = np.array([5] * 50 + [6] * 30 + [7] * 18 + [400, 900])
    edges, counts = length_histogram(lengths, max_bins=30, clip_quantile=0.98)
    assert sum(counts) == len(lengths) and edges[-1] == 901
    # the regular bins stop at the 98th percentile (numpy's), not at 900
    assert edges[-2] == int(np.ceil(np.quantile(lengths, 0.98))) + 1 and edges[-2] < 20
    assert counts[-1] == 2  # the tail bin holds the two long lines


def test_length_chart_bars_have_both_ends():
    """The Corpora page's histograms were empty axes: binned bars without an end value."""
    from dashboard.corpus_view import length_chart
    from simcore.corpora.stats import CorpusStats

    edges, counts = length_histogram(np.array([3, 4, 4, 9, 200]), max_bins=5, clip_quantile=0.75)
    chart = length_chart(CorpusStats("c", 10, 5, 0.5, 5, 4.0, 4.0, 200, edges, counts)).to_dict()
    assert chart["encoding"]["x"]["field"] == "from" and chart["encoding"]["x2"]["field"] == "to"
    assert chart["encoding"]["x"]["bin"] == "binned"  # vertical bars from x to x2 (without it: flat ranges)
    rows = next(iter(chart["datasets"].values()))
    assert all(r["to"] > r["from"] for r in rows) and sum(r["sentences"] for r in rows) == 5
    assert rows[-1]["lengths"].endswith("or more")


def test_scatter_colours_labels_and_a_line_per_target():
    rng = np.random.default_rng(0)
    rows = [{"target": t, "source": f"s{i}", "value": float(i), "improvement": float(slope * i + rng.normal(0, 0.1))}
            for t, slope in (("CADEC", 1.0), ("CRAFT", -2.0), ("ScienceIE", 0.5), ("WetLab", 3.0)) for i in range(5)]
    points = pd.DataFrame(rows)
    spec = scatter(points, "tvc").to_dict()
    layers = spec["layer"]
    colour = layers[0]["encoding"]["color"]["scale"]
    assert colour["domain"] == ["CADEC", "CRAFT", "ScienceIE", "WetLab"]
    rgb = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in colour["range"]]
    # no look-alike pair: every two target colours differ clearly (Euclidean RGB distance)
    assert min(np.linalg.norm(np.subtract(a, b)) for i, a in enumerate(rgb) for b in rgb[i + 1:]) > 80
    assert colour["range"] == TARGET_COLOURS[:4]
    assert layers[1]["mark"]["type"] == "text" and layers[1]["encoding"]["text"]["field"] == "source"
    lines = fitted_lines(points)
    for target, part in points.groupby("target"):
        slope = np.polyfit(part["value"], part["improvement"], 1)[0]
        assert lines[lines["target"] == target]["slope"].iloc[0] == pytest.approx(slope)
    assert len(layers) == 4  # points, names, per-target lines, the pooled dashed line


def _until_cancelled(task) -> int:
    task.progress("half", 0.5)
    deadline = time.time() + 20
    while time.time() < deadline:
        time.sleep(0.05)
        task.check()  # raises once Cancel was pressed
    return 42


def _seven(task) -> int:
    task.partial.append({"cell": 1})
    task.progress("almost", 0.9)
    return 7


def _fails(task) -> None:
    raise SimcoreError("no such file")


def _dies(task) -> None:
    os._exit(3)


def _pid(task) -> int:
    return os.getpid()


def _wait_for(job, message: str, seconds: float = 30) -> None:
    deadline = time.time() + seconds
    while job.message != message and time.time() < deadline:
        time.sleep(0.05)
    assert job.message == message, job.message


def test_job_runs_in_its_own_process_and_can_be_cancelled():
    state = AppState()
    filed = []
    job = jobs.start(state, "x", "Test job", _until_cancelled, lambda s, j: filed.append(j.result))
    _wait_for(job, "half")  # reported from the child through the pipe
    assert job.running and job.fraction == 0.5
    with pytest.raises(SimcoreError, match="already running"):
        jobs.start(state, "x", "Again", _until_cancelled, lambda s, j: None)
    job.cancel()
    assert job.wait(15) and job.status == jobs.CANCELLED
    jobs.collect(state)
    assert not filed and any("cancelled" in text for _, text in state.flash)

    done = jobs.start(state, "x", "Test job", _seven, lambda s, j: filed.append(j.result))
    assert done.wait(30) and done.status == jobs.DONE
    assert done.partial == [{"cell": 1}]
    jobs.collect(state)
    jobs.collect(state)  # filed once
    assert filed == [7]

    other = jobs.start(state, "pid", "Where", _pid, lambda s, j: None)
    assert other.wait(30) and other.result != os.getpid(), "the work ran in another process"

    failing = jobs.start(state, "y", "Bad job", _fails, lambda s, j: None)
    dead = jobs.start(state, "z", "Dead job", _dies, lambda s, j: None)
    assert failing.wait(30) and dead.wait(30)
    jobs.collect(state)
    assert ("error", "Bad job stopped: no such file") in state.flash
    assert dead.status == jobs.FAILED and "exit code 3" in dead.error


def test_a_job_waits_for_the_servers_lock():
    state, lock = AppState(), threading.Lock()
    lock.acquire()
    job = jobs.start(state, "x", "Queued", _seven, lambda s, j: None, lock=lock)
    _wait_for(job, "waiting for another computation on this server to finish")
    lock.release()
    assert job.wait(30) and job.result == 7
    assert lock.acquire(timeout=1), "released when the job ended"


def test_dashboard_imports_go_one_way():
    """dashboard.common (now dashboard.session) and dashboard.loading imported each other; no module
    of the package may be in a cycle."""
    import ast
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "dashboard"
    modules = {p.stem for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for name in modules:
        deps: set[str] = set()
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                deps.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dashboard"):
                parts = node.module.split(".")
                deps.update([parts[1]] if len(parts) > 1 else [a.name for a in node.names])
        graph[name] = deps & modules

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(d == goal or (d not in seen and reaches(d, goal, seen | {d})) for d in graph[start])

    assert "loading" in graph["session"] and "session" not in graph["loading"]
    assert not [m for m in modules if reaches(m, m, {m})]


def test_job_progress_never_goes_back_and_counts_finished_cells_by_their_cost():
    """Issue 19: an 8 x 2 matrix showed 0% while "34 values finished" and went from 5% back to 0%."""
    from dashboard.compute import cell_cost

    cells = [("wvv", 1), ("tvc", 1), ("tvc", 1)]  # one word-vector cell and two coverage counts
    total_cost = sum(cell_cost({"measure": m}) * n for m, n in cells)
    job = jobs.BackgroundJob(kind="matrix", title="Similarity matrix", total=3, cost=cell_cost, total_cost=total_cost)
    assert job.message.startswith("starting")  # said at once, before the worker reports
    job.progress("training word vectors", 0.05)
    assert job.fraction == pytest.approx(0.05)
    job.progress("next source", 0.0)  # the work's own estimate went back: the bar does not
    assert job.fraction == pytest.approx(0.05)
    job.add_row({"measure": "tvc"})
    job.add_row({"measure": "tvc"})
    assert job.fraction == pytest.approx(2 / total_cost)  # two cheap cells: 2/22 = 9%, ahead of the work's 5%
    job.progress("still 0 from the work", 0.0)
    assert job.fraction == pytest.approx(2 / total_cost)
    job.add_row({"measure": "wvv"})
    assert 0.99 <= job.fraction < 1.0  # all cells done, not yet collected: never 100% while running
    assert "3 of 3 values" in job.line()


def test_job_says_time_spent_and_an_estimate_of_the_time_left():
    job = jobs.BackgroundJob(kind="matrix", title="Similarity matrix")
    job.started = job.work_started = time.time() - 60
    assert job.eta() is None  # no pace yet
    job.progress("ppl", 0.25)
    assert job.eta() == pytest.approx(180, rel=0.05)
    line = job.line()
    assert "25%" in line and "1 min 00 s" in line and "about 3 min 00 s left" in line
    assert jobs.duration(59) == "59 s" and jobs.duration(3725) == "1 h 02 min"


def test_scatter_gives_each_target_its_own_marker_shape():
    """Issue 19: the caption promises one colour and shape per target, but every marker was a circle."""
    points = pd.DataFrame({"target": ["a", "a", "b", "b", "c", "c"], "source": ["x", "y"] * 3,
                           "value": [1.0, 2.0, 1.5, 2.5, 1.2, 2.2], "improvement": [1.0, 2.0, 0.5, 1.5, 0.2, 0.9]})
    spec = scatter(points, "tvc", targets=["a", "b", "c"]).to_dict()
    shapes = next(layer["encoding"]["shape"]["scale"]["range"] for layer in spec["layer"] if "shape" in layer.get(
        "encoding", {}))
    assert len(set(shapes)) == 3


def _legends_by_field(spec: dict) -> dict[str, list]:
    """Every legend definition (None where disabled, "default" where unset) of each field, over all layers and
    legend channels of a chart spec."""
    found: dict[str, list] = {}
    for layer in spec.get("layer", [spec]):
        for channel in ("color", "fill", "stroke", "shape", "size", "opacity"):
            encoding = layer.get("encoding", {}).get(channel)
            if isinstance(encoding, dict) and "field" in encoding:
                found.setdefault(encoding["field"], []).append(encoding.get("legend", "default"))
    return found


def test_scatter_legends_agree_so_vega_lite_merges_them_without_conflict():
    """Issue 19: Vega logged 64 "Conflicting legend property" warnings. Vega-Lite merges the legends of one field
    (colour and shape, and the same channel in every layer) into one and warns for each property they define
    differently; the colour legend was set in the points layer but disabled for the shape and the lines."""
    points = pd.DataFrame({"target": ["a", "a", "b", "b"], "source": ["x", "y"] * 2,
                           "value": [1.0, 2.0, 1.5, 2.5], "improvement": [1.0, 2.0, 0.5, 1.5]})
    legends = _legends_by_field(scatter(points, "tvc", targets=["a", "b"]).to_dict())
    assert len(legends["target"]) >= 3  # colour and shape of the points, colour of the lines
    assert all(legend == legends["target"][0] for legend in legends["target"]), legends
    assert legends["target"][0] not in (None, "default") and legends["target"][0]["title"] == "target"


def test_runs_are_named_by_what_sets_them_apart_and_compare_opens_on_a_comparable_pair():
    from dashboard.compare import default_pair
    from dashboard.compute import options_label
    from dashboard.state import Job
    from simcore.matrix.plan import DEFAULT_MEASURES

    plain = Job(sources=["a"], targets=["t"], measures=list(DEFAULT_MEASURES), options={}, tokenizer={"lowercase": True})
    assert options_label(plain) == "default options"
    other = Job(sources=["a"], targets=["t"], measures=["tvc", "ppl"], options={"ppl_order": 4},
                tokenizer={"lowercase": False}, samples=3)
    assert options_label(other) == "PPL order 4, 3 sub-corpora, case kept, TVC, PPL"
    d = {"tvc": 1}
    mine = long_frame({("t", "a", "tvc"): 0.1, ("t", "b", "tvc"): 0.2}, d)
    again = long_frame({("t", "a", "tvc"): 0.3, ("t", "b", "tvc"): 0.1}, d)
    paper = long_frame({("CADEC", "1BWB", "tvc"): 0.1, ("CADEC", "Wiki", "tvc"): 0.2}, d)
    assert default_pair({"m1": mine, "m2": again, "paper": paper}) == ("m1", "m2")
    assert default_pair({"m1": mine, "paper": paper}) is None
    # issue 37: the newest two were "unrelated" (one target and two sources in common); the pair of runs on the
    # same cells (4 in common, counted by hand) is chosen over the newest pair (2 in common)
    wide = {("t", "a", "tvc"): 0.1, ("t", "b", "tvc"): 0.2, ("u", "a", "tvc"): 0.3, ("u", "b", "tvc"): 0.4}
    run1, run2 = long_frame(wide, d), long_frame({k: v + 0.05 for k, v in wide.items()}, d)
    narrow = long_frame({("t", "a", "tvc"): 0.5, ("t", "b", "tvc"): 0.6, ("x", "c", "tvc"): 0.7}, d)
    assert default_pair({"run1": run1, "run2": run2, "other": narrow}) == ("run1", "run2")


def test_cached_correlations_follow_the_content_not_the_object():
    from dashboard.analysis_cache import correlations
    from dashboard.answer_cache import fingerprint
    from simcore.analysis.correlation import correlate

    long = long_frame({("t", s, "tvc"): v for s, v in zip("abcd", [0.1, 0.4, 0.2, 0.3])}, {"tvc": 1})
    results = pd.DataFrame({"target": ["t"] * 4, "source": list("abcd"), "f1": [1.0, 4.0, 2.0, 3.5],
                            "improvement": [1.0, 4.0, 2.0, 3.5]})
    assert fingerprint(long) == fingerprint(long.copy())
    changed = results.assign(improvement=[1.0, 4.0, 2.0, 3.0])
    assert fingerprint(changed) != fingerprint(results)
    pd.testing.assert_frame_equal(correlations(long, results, ["tvc"]), correlate(long, results, ["tvc"], per_target=True))
    pd.testing.assert_frame_equal(correlations(long, changed, ["tvc"]), correlate(long, changed, ["tvc"], per_target=True))


def test_the_answer_for_language_models_is_shown_once_ppl_and_jsd_are_in(tmp_path):
    """Rows arrive one by one; the early answer appears only when every PPL and JSD cell is in, and it is
    the answer the whole matrix gives."""
    from dashboard.compute import early_lm_matrix
    from dashboard.state import Job
    from simcore.answer.recommendation import recommend
    from simcore.corpora.corpus import Corpus
    from simcore.matrix.workbench import Workbench
    from simcore.utils.store import ArtefactStore

    from .conftest import SAMPLE_DATA

    sources = [Corpus.from_path(SAMPLE_DATA / "sources" / n) for n in ("news.txt", "lab_protocols.txt")]
    targets = [Corpus.from_path(SAMPLE_DATA / "targets" / f"{n}.conll") for n in ("news_ner", "lab_protocol_ner")]
    measures = ["tvc", "ppl", "jsd"]
    full = Workbench(ArtefactStore(tmp_path / "store")).matrix(sources, targets, measures)
    job = Job([s.name for s in sources], [t.name for t in targets], measures, {}, {})
    task = jobs.BackgroundJob("matrix", "test", params=job)
    order = full.sort_values("measure", key=lambda m: m.map({"ppl": 0, "tvc": 1, "jsd": 2})).to_dict("records")
    seen = []
    for row in order:
        task.partial.append(row)
        seen.append(early_lm_matrix(task) is not None)
    first = seen.index(True)
    assert not any(seen[:first]) and all(seen[first:])
    assert {r["measure"] for r in order[:first + 1]} == {"ppl", "tvc", "jsd"}  # only once the last JSD cell is in
    early = recommend(early_lm_matrix(task), "lm")
    whole = recommend(full, "lm")
    assert [(r.target, r.recommended, r.confidence) for r in early] == [(r.target, r.recommended, r.confidence)
                                                                          for r in whole]
    assert early_lm_matrix(jobs.BackgroundJob("matrix", "test", params=Job([], [], ["ppl", "jsd"], {}, {}))) is None


def test_scatter_rings_the_points_of_runs_cut_short_by_the_time_cap():
    """Issue 20 left this: capped runs included on request looked like every other point."""
    points = pd.DataFrame({"target": ["a", "a", "b", "b"], "source": ["x", "y", "x", "y"],
                           "value": [1.0, 2.0, 1.5, 2.5], "improvement": [1.0, 0.0, 0.5, 1.5],
                           "time_capped": [0, 2, 0, 1]})
    spec = scatter(points, "tvc", targets=["a", "b"], capped_column="time_capped").to_dict()
    rings = [layer for layer in spec["layer"] if layer.get("mark", {}).get("filled") is False]
    assert len(rings) == 1
    ringed = spec["datasets"][rings[0]["data"]["name"]]
    assert sorted((r["target"], r["source"]) for r in ringed) == [("a", "y"), ("b", "y")]
    # without the column, or with no capped run, no ring
    for table in (points.drop(columns="time_capped"), points.assign(time_capped=0)):
        plain = scatter(table, "tvc", targets=["a", "b"], capped_column="time_capped").to_dict()
        assert not [layer for layer in plain["layer"] if layer.get("mark", {}).get("filled") is False]


def test_the_recommended_column_marks_a_source_flagged_under_a_carrying_measure():
    """Issue 20 left this: the grid's 'recommended' column had no ⚠, though the measures' columns did."""
    ranking = pd.DataFrame({"target": ["t"] * 6, "measure": ["ppl", "ppl", "tvc", "tvc", "recommended", "recommended"],
                            "source": ["small", "big"] * 3, "rank": [1, 2, 1, 2, 1, 2],
                            "value": [10.0, 20.0, 0.9, 0.5, 1.0, 0.0]})
    long = pd.DataFrame({"target": ["t"] * 4, "measure": ["ppl", "ppl", "tvc", "tvc"], "source": ["small", "big"] * 2,
                         "value": [10.0, 20.0, 0.9, 0.5], "used_whole": [True, False, False, False]})
    grid = ranking_grid(ranking, "t", long, carrying=("ppl", "jsd"))
    assert list(grid["PPL"]) == ["small ⚠", "big"] and list(grid["TVC"]) == ["small", "big"]
    assert list(grid["recommended"]) == ["small ⚠", "big"]  # flagged under PPL, which carries it
    # under word vectors TVC carries the answer, and small's TVC cell is not flagged
    assert list(ranking_grid(ranking, "t", long, carrying=("tvc",))["recommended"]) == ["small", "big"]


def test_a_jobs_child_does_not_run_the_page_script_that_started_it(tmp_path, monkeypatch):
    """Streamlit runs a page as ``__main__``; a spawned child re-ran that file in bare mode (the whole page:
    a thousand "missing ScriptRunContext" warnings on a demo start). The child must not run it."""
    import types

    marker = tmp_path / "ran"
    page = tmp_path / "page.py"
    page.write_text(f"open({str(marker)!r}, 'a').write('page ran')\n")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", fake)
    job = jobs.start(AppState(), "x", "Test job", _seven, lambda s, j: None)
    assert job.wait(30) and job.result == 7
    assert not marker.exists(), "the child ran the page script"
    assert sys.modules["__main__"] is fake, "the page's __main__ is back once the child started"


def test_a_jobs_time_left_starts_from_its_estimate_and_moves_to_its_pace():
    """Issue 29: the probe's sidebar said "33 s, about 33 s left" for two minutes (no estimate before a pace);
    a matrix said "0 of 126 values" through its whole preparation."""
    job = jobs.BackgroundJob(kind="probe", title="NER probe", expected=200.0)
    job.started = job.work_started = time.time() - 50
    assert job.eta() == pytest.approx(150, abs=2)  # no pace yet: the estimate less the time spent
    job.progress("training", 0.5)  # half done in 50 s: the pace says 50 s more
    assert job.eta() == pytest.approx(0.5 * 50 + 0.5 * 150, abs=2)
    job.work_started = time.time() - 250  # past its estimate: the pace alone
    assert job.eta() == pytest.approx(250, abs=2)
    matrix = jobs.BackgroundJob(kind="matrix", title="Similarity matrix", total=126)
    matrix.progress("preparing the sources in 2 processes (3 of 18)", 0.1)
    assert "126 values, the first once the corpora are prepared" in matrix.line() and "0 of 126" not in matrix.line()
    matrix.add_row({"measure": "tvc"})
    assert "1 of 126 values" in matrix.line()


def test_a_remote_root_is_a_prefix_of_the_decoded_url_and_no_link_leads_out(tmp_path):
    """``%2e%2e`` is ``..`` to the server that answers, so it is decoded before the prefix check; under a
    ``file://`` root a link to a file outside (``/etc/passwd``) or a folder holding one is refused."""
    from dashboard.paths import resolve_server_url
    from simcore.utils.errors import SimcoreError

    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("words\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    (root / "out.txt").symlink_to(tmp_path / "secret.txt")
    (root / "sub" / "link").symlink_to(tmp_path)
    roots = [f"file://{root}/", "https://host.example/data/"]
    assert resolve_server_url(f"file://{root}/a.txt", roots) == f"file://{root}/a.txt"
    assert resolve_server_url("https://host.example/data/x.txt", roots) == "https://host.example/data/x.txt"
    for url in (f"file://{root}/%2e%2e/secret.txt", f"file://{root}/%252e%252e/secret.txt",
                f"file://{root}/out.txt", f"file://{root}/sub/", f"file://{root}/sub/link/secret.txt",
                "https://host.example/data/%2E%2E/admin", "https://host.example/data/..%2fadmin",
                "https://host.example/database"):
        with pytest.raises(SimcoreError):
            resolve_server_url(url, roots)


def test_a_steps_done_in_the_middle_of_a_job_is_not_shown_as_done():
    """Issue 37: the sidebar read "done … 67%" while the job went on (a step's own last report)."""
    job = jobs.BackgroundJob(kind="matrix", title="Similarity matrix")
    assert not jobs._record(job, ("progress", "done", 0.67))
    assert job.running and "done" not in job.line().split(" — ")[0].split(": ", 1)[1]
    assert job.message != "done" and job.fraction == pytest.approx(0.67)
    assert jobs._record(job, (jobs.DONE, None)) and job.message == "done" and job.fraction == 1.0


def test_server_files_with_split_names_are_named_by_their_folder(tmp_path, monkeypatch):
    """Issue 37: targets added from a server path became ``test``, ``test (2)``, ``test (3)``."""
    from dashboard.loading import add_server_path
    from dashboard.state import AppState

    for folder in ("conll2003", "wetlab"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "test.conll").write_text("EU\tB-ORG\nrejects\tO\n\nPeter\tB-PER\n", encoding="utf-8")
    (tmp_path / "news_2019.txt").write_text("a plain sentence .\n", encoding="utf-8")
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", str(tmp_path))
    state = AppState()
    added = [
        *add_server_path(state, "target", "conll2003/test.conll"),
        *add_server_path(state, "target", "wetlab/test.conll"),
        *add_server_path(state, "source", "news_2019.txt"),
    ]
    assert added == ["conll2003 test", "wetlab test", "news_2019"]
    assert sorted(state.targets) == ["conll2003 test", "wetlab test"]


def test_heatmap_titles_are_short_lines_with_room_above_the_chart():
    """Issue 37: a heatmap's title was one long line (label, gloss, reading), cut at the chart's
    edge, and WVV was titled 'WVV (no unit)'."""
    import re

    from dashboard.charts import heatmap
    from simcore.measures.lookup import get_measure

    rows = [
        {"source": s, "target": t, "measure": m, "value": v, "direction": get_measure(m).direction}
        for m, v in (("ppl", 300.0), ("wvv", 1e-4), ("tvc", 0.5))
        for s in ("a", "b")
        for t in ("x", "y")
    ]
    for measure, head in (("ppl", "PPL"), ("wvv", "WVV"), ("tvc", "TVC (%)")):
        layout = heatmap(pd.DataFrame(rows), measure).layout
        lines = [re.sub(r"<[^>]+>", "", line).strip() for line in layout.title.text.split("<br>")]
        assert lines[0] == head and get_measure(measure).gloss in lines
        assert (
            max(map(len, lines)) <= 72
        )  # about 500 px of the 12 px text: fits beside the colour bar
        assert layout.margin.t >= 40 + 16 * (len(lines) - 1)


def test_the_early_answer_names_the_measures_still_coming():
    """Issue 37: the early answer says which measures are still being computed, by their labels,
    until every one of their cells is in."""
    from dashboard.compute import still_coming
    from dashboard.state import Job

    job = Job(["a", "b"], ["t"], ["ppl", "jsd", "tvcc", "wvv"], {}, {})
    task = jobs.BackgroundJob("matrix", "test", params=job)
    assert still_coming(task) == ["PPL", "JSD", "TVcC", "WVV"]
    for source in ("a", "b"):
        task.partial += [{"source": source, "target": "t", "measure": m} for m in ("ppl", "jsd")]
    task.partial.append({"source": "a", "target": "t", "measure": "tvcc"})
    assert still_coming(task) == ["TVcC", "WVV"], "one of TVcC's two cells is in: still coming"
    task.partial.append({"source": "b", "target": "t", "measure": "tvcc"})
    assert still_coming(task) == ["WVV"]
    assert still_coming(jobs.BackgroundJob("probe", "test", params={"x": 1})) == []


def test_a_wide_table_narrows_its_sentences_not_its_names_to_fit_its_room():
    """Issue 37 item 7: tables ran past their right edge (the Ranking page's 'why' was cut at
    'the r'). Worked by hand at 7.2 pixels a character, 16 of padding, a header's 44: the names
    keep their width, the sentences share what is left; a table that fits is left alone."""
    from dashboard.page_tables import fitted_widths, natural_widths

    name = "biomed_ohsumed_medline_part0"  # 28 characters: 217.6 pixels
    why = "the measures that carry it disagree, each naming another source " * 2
    frame = pd.DataFrame({"target": ["conll2003_test"] * 3,
                          "pretrain on": [f"{name} (50%) or news (22%)"] * 3,
                          "why": [why] * 3, "source": [name] * 3})
    natural = natural_widths(frame)
    assert natural == {"target": int(14 * 7.2 + 16), "pretrain on": int(48 * 7.2 + 16), "why": 500,
                       "source": int(28 * 7.2 + 16)}
    widths = fitted_widths(frame, room=900)
    left = 900 - natural["target"] - natural["source"]  # 900 - 116 - 217 = 567 for the sentences
    assert widths == {"pretrain on": left // 2, "why": left // 2}
    assert fitted_widths(frame[["target", "source"]], room=900) == {}  # fits: untouched
    # a sentence column narrower than the share keeps its width; the other takes the rest
    short = frame.assign(**{"pretrain on": ["news (50%) or web"] * 3})
    rest = 900 - 116 - 217 - natural_widths(short)["pretrain on"]
    assert fitted_widths(short, room=900) == {"why": rest}


def test_a_table_of_long_names_shortens_them_to_fit_and_says_which():
    """Issue 37: Agreement's disagreements (and the answer's table) scrolled sideways with
    28-character source names. Worked by hand: five measure columns and three of names, each
    7.2 pixels a character + 16, beside 'changes 1st choice' (a header of 18 characters + 44 =
    173): at 11 characters 8 x 95 + 173 = 933 > 900, at 10 8 x 88 + 173 = 877 fits."""
    from dashboard.page_tables import fitted_table, natural_widths, short_name, short_names

    a, b, t = "biomed_ohsumed_medline_part0", "biomed_ohsumed_medline_part1", "conll2003_test"
    frame = pd.DataFrame({"target": [t, t], "first": [a, a], "second": [b, b],
                          "changes 1st choice": [True, False],
                          **{m: [a, b] for m in ("PPL", "JSD", "TVC", "TVcC", "WVV")}})
    assert sum(natural_widths(frame).values()) == 116 + 217 * 7 + 173  # 1,808: it scrolled
    shown, widths, mapping = fitted_table(frame, 900, name_columns=[c for c in frame.columns
                                                                     if c != "changes 1st choice"],
                                          names=[a, b, t, "news"])
    assert mapping == {a: "biom…part0", b: "biom…part1", t: "conl…_test"}  # 4 + "…" + 5
    assert list(shown["first"]) == ["biom…part0"] * 2
    assert list(shown["TVC"]) == ["biom…part0", "biom…part1"]
    assert widths == {} and sum(natural_widths(shown).values()) == 8 * 88 + 173 <= 900
    assert list(shown["changes 1st choice"]) == [True, False]  # not a name column: as it was
    # a table that fits is left whole
    assert fitted_table(frame[["target", "first"]], 900, name_columns=["target", "first"],
                        names=[a, t])[2] == {}
    # the short forms never make two names one: at 10, news_a_part and news_b_part would both be
    # "news…_part", so the length grows to 11, where they are whole
    assert short_name("news_a_part", 10) == short_name("news_b_part", 10) == "news…_part"
    assert short_names(["news_a_part", "news_b_part", "reviews_yelp_full_part"], 10) == {
        "reviews_yelp_full_part": "revie…_part"}
    # a name inside a sentence ("a (50%) or b (22%)") is shortened where it stands
    answer = pd.DataFrame({"target": [t], "pretrain on": [f"{a} (50%) or {b} (22%)"],
                           "why": ["x " * 300]})
    shown, _, mapping = fitted_table(answer, 300, name_columns=["target", "pretrain on"],
                                     names=[a, b, t])
    assert shown["pretrain on"][0] == f"{mapping[a]} (50%) or {mapping[b]} (22%)"


def test_the_rankings_per_target_list_each_source_once_with_its_rank_under_each_measure():
    """Issue 37: the grid of names per measure scrolled sideways; the same ranking as ranks.
    By hand: PPL 10 < 20 (lower is better) ranks small 1, big 2; TVC ties (=1 both); the
    recommendation puts big first, so big's row comes first; small's PPL cell is flagged
    (used whole) and PPL carries the answer, so its 'recommended' cell is too."""
    from dashboard.page_tables import rank_table

    ranking = pd.DataFrame({"target": ["t"] * 6,
                            "measure": ["ppl", "ppl", "tvc", "tvc", "recommended", "recommended"],
                            "source": ["small", "big"] * 3, "rank": [1, 2, 1, 1, 2, 1],
                            "value": [10.0, 20.0, 0.9, 0.9, 0.0, 1.0]})
    long = pd.DataFrame({"target": ["t"] * 4, "measure": ["ppl", "ppl", "tvc", "tvc"],
                         "source": ["small", "big"] * 2, "value": [10.0, 20.0, 0.9, 0.9],
                         "used_whole": [True, False, False, False]})
    table = rank_table(ranking, "t", long, carrying=("ppl",))
    assert list(table.columns) == ["source", "PPL", "TVC", "recommended"]
    assert table.values.tolist() == [["big", "2", "=1", "1"], ["small", "1 ⚠", "=1", "2 ⚠"]]
    # a measure with no value for the target ranks nothing
    empty = ranking.assign(value=[None, None, 0.9, 0.9, 0.0, 1.0])
    assert list(rank_table(empty, "t")["PPL"]) == ["–", "–"]
