"""How long each dashboard page and each slow click takes, in a real browser, printed as markdown tables.

Drives Debian's Chromium with Playwright (as tests/test_browser.py does) against the dashboard started
as scripts/demo.sh starts it (``python -m dashboard.serve``: ``streamlit run app.py`` with the pages'
modules imported before it listens; the start-up column includes that) on a free port with a fresh
artefact store (or ``--cache DIR``).

Pages: on one server, loads the bundled sample and the paper's Table 3 into one workspace, then opens
every page by its address with that workspace's id (``?ws=``: each open is a new browser session that
restores the workspace from disk, as a reload does). For each page it prints the time until the page's
title is drawn (first render), until its script has finished (settled) and until the browser has drawn
every chart on it (Plotly's SVG, Vega-Lite's marks), the first time on this server and again. Then
the floor: a one-line Streamlit app's first render in a new browser (Streamlit's and Chromium's own
start, which every first open in a new browser pays before any page of ours runs).

Clicks: on a second fresh server (so "first" means the first on a server, as a user meets it), the clicks
issue 19 named, in one browser session: the first Home load, uploading two target files and adding a
server file (first and second time), renaming a corpus, loading the sample and Table 3, opening Corpora and
Predictiveness from the sidebar, uploading a results CSV and one name-mapping pick. Each is timed from the
click (or the file being set) until something on the page answers (a spinner, a message or the new
element) and until the script has finished. A widget that cannot be found gives an "n/a" row.

Times come from the page's own clock: a log of the app's script states (kept by a MutationObserver) says
when the runs an action started were over, and the answers are checked in the page every 50 ms.

With ``--issue-data ../shared/data`` the workspace also holds issue 29's corpora (news_1bwb,
biomed_ohsumed_medline and reviews_yelp as sources, the conll2003 and wetlab test splits as targets) and
their 9 x 5 matrix, computed before the rounds: the case where Corpora and Similarity took 7-12 s.
The machine may be shared with other work: the load average is printed with the tables, and figures
taken under load are indicative only.

With ``--large`` the pages open in bench/bench_pages.py's workspace instead (20 sources, 8 targets
and 7 matrices built from ../shared/data before the server starts), the size issue 37 asks every
page to settle in within 2 s and render first within 1 s. Each open also prints the server
process's CPU seconds (user+sys) until the page settled and its charts were drawn.

Usage: nice .venv/bin/python bench/bench_ui.py [--rounds 2] [--cache DIR] [--clicks-only | --pages-only]
       [--issue-data ../shared/data | --large]
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"
CHROMIUM = "/usr/bin/chromium"
SIDEBAR_LINK = '[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]'
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
PAGES = [("", "Home"), ("Corpora", "Corpora"), ("Similarity", "Similarity"), ("Predictiveness", "Predictiveness"),
         ("Agreement", "Agreement"), ("Ranking_and_export", "Ranking and export"), ("Open_results", "Open results"),
         ("Sentence_selection", "Sentence selection"), ("Compare_results", "Compare results"), ("NER_probe", "NER probe")]
HOME_TITLE = "Which corpus"
FIND_MS = 30_000  # a widget not there by then is reported as not found
ANSWER_MS = 120_000
SETTLE_MS = 180_000
QUIET_MS = 400  # idle this long after a run: no rerun (st.rerun, a second widget event) follows
# Every change of the app's script state, with the page's clock: a run over before Python looks is still seen.
RUN_LOG = """
window.__runs = [];
new MutationObserver(changes => {
  for (const m of changes) window.__runs.push([m.target.getAttribute('data-test-script-state'), performance.now()]);
}).observe(document, {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});
window.__lastChange = 0;  // when the page's elements last changed (charts are drawn after the script ends)
new MutationObserver(() => { window.__lastChange = performance.now(); })
  .observe(document, {childList: true, subtree: true});
"""
SETTLED = """([start, quiet]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const runs = (window.__runs || []).filter(r => r[1] >= start);
  if (!runs.some(r => r[0] === 'running')) return false;
  const last = runs[runs.length - 1];
  if (last[0] !== 'notRunning' || performance.now() - last[1] < quiet) return false;
  return last[1];
}"""
# The first probe [label, CSS selector or "" for the whole page, regex] whose element shows matching text.
SHOWN = """(probes) => {
  for (const [label, selector, pattern] of probes) {
    const re = new RegExp(pattern);
    for (const node of selector ? document.querySelectorAll(selector) : [document.body]) {
      if (node.checkVisibility() && re.test(node.innerText || '')) return [label, performance.now()];
    }
  }
  return false;
}"""
Probe = tuple[str, str, str]
# Every chart drawn: no placeholder left (Streamlit loads the chart libraries lazily), each Plotly chart has its
# SVG and each Vega-Lite chart its marks, and the page has not changed for a while: when it last changed, and how
# many charts it holds.
DRAWN = """([quiet]) => {
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;
  const plotly = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  const vega = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')];
  if (!plotly.every(c => c.querySelector('.main-svg')) || !vega.every(c => c.querySelector('svg.marks, canvas'))) {
    return false;
  }
  if (performance.now() - window.__lastChange < quiet) return false;
  return [window.__lastChange, plotly.length + vega.length];
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(cache: Path, log: Path, roots: list[Path] | None = None,
                 script: Path | None = None) -> tuple[subprocess.Popen, str, float]:
    """The dashboard as scripts/demo.sh starts it, or ``streamlit run script`` when one is given."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SIMCORE_CACHE": str(cache), "SIMCORE_DATA_ROOTS": os.pathsep.join(map(str, roots or [SAMPLE])),
           "PYTHONPATH": str(ROOT)}
    env.pop("SIMCORE_DEMO", None)
    started = time.perf_counter()
    launcher = ["dashboard.serve"] if script is None else ["streamlit", "run", str(script)]
    process = subprocess.Popen(
        [sys.executable, "-m", *launcher, "--server.headless=true", "--server.address=127.0.0.1",
         f"--server.port={port}", "--browser.gatherUsageStats=false", "--server.fileWatcherType=none"],
        cwd=ROOT, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return process, url, time.perf_counter() - started
        except OSError:
            time.sleep(0.2)
    stop_server(process)
    raise SystemExit(f"streamlit did not start; see {log}")


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


def server_cpu(pid: int) -> float:
    """CPU seconds (user + sys) the server process has used, with its finished children's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def settled_at(page, start: float, timeout: float = SETTLE_MS) -> float:
    """The page's time when the script run(s) begun after ``start`` (page time) were over.

    From the page's log of script states: a run that ended before Python looked is still seen (waiting
    for the running state to show, as this bench did, added up to 1.5 s to a fast run)."""
    return page.wait_for_function(SETTLED, arg=[start, QUIET_MS], timeout=timeout, polling=100).json_value()


def shown_at(page, probes: list[Probe], timeout: float = ANSWER_MS) -> tuple[str, float]:
    """Which probe showed first and the page's time it did (checked every 50 ms)."""
    label, at = page.wait_for_function(SHOWN, arg=probes, timeout=timeout, polling=50).json_value()
    return label, at


def on_python_clock(page, page_time: float) -> float:
    """``page_time`` (performance.now() in the page) as a time.perf_counter() value."""
    page_now, py_now = page.evaluate("performance.now()"), time.perf_counter()
    return py_now - (page_now - page_time) / 1000


def title(text: str) -> Probe:
    return ("page title", "h1", re.escape(text))


def text(label: str, words: str, selector: str = "") -> Probe:
    return (label, selector, re.escape(words))


SPINNER: Probe = ("spinner", '[data-testid="stSpinner"]', "")


def open_page(page, url: str, title_text: str) -> tuple[float, float, float, int]:
    """Seconds until the page's title shows, until its script finished, and until the browser had drawn
    every chart, with the number of charts (a new document: the page's clock starts with the navigation,
    so its times are brought onto Python's)."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    _, shown = shown_at(page, [title(title_text)])
    end = settled_at(page, 0)
    drawn, charts = page.wait_for_function(DRAWN, arg=[QUIET_MS], timeout=ANSWER_MS, polling=50).json_value()
    return (on_python_clock(page, min(shown, end)) - t0, on_python_clock(page, end) - t0,
            on_python_clock(page, max(drawn, end)) - t0, int(charts))


# ---- timed clicks ---------------------------------------------------------------------------------------

class NotFound(Exception):
    """A widget the bench needs is not on the page (its label changed, or an earlier step failed)."""


@dataclass
class Row:
    """One click's timings (seconds from the click), or why it has none."""

    name: str
    answer: float | None = None
    settled: float | None = None
    answered_by: str = ""
    failed: str = ""


def find(locator, what: str, timeout: float = FIND_MS, state: str = "visible"):
    """The first match of ``locator`` (visible, or only in the page: a file input is hidden), or NotFound
    naming ``what``."""
    try:
        locator.first.wait_for(state=state, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError, or the page went away
        raise NotFound(what) from exc
    return locator.first


def timed(page, act: Callable[[], None], answers: list[Probe] | None = None, done=None) -> Row:
    """Do ``act`` and time it on the page's clock: until the first of ``answers`` shows, and until the
    script run(s) it started are over. ``done``: a locator that shows once the action's result is drawn (so
    a run that follows a rerun is waited for)."""
    row = Row("")
    start = page.evaluate("performance.now()")
    act()
    if answers:
        try:
            row.answered_by, at = shown_at(page, answers)
            row.answer = (at - start) / 1000
        except Exception:  # noqa: BLE001 - the script's end is still worth reporting
            row.answered_by = "nothing (" + " or ".join(label for label, _, _ in answers) + " never showed)"
    if done is not None:
        find(done, "the action's result", ANSWER_MS)
    row.settled = (settled_at(page, start) - start) / 1000
    if row.answer is not None:  # drawn by the script, so by its end: later only by the 50 ms checks
        row.answer = min(row.answer, row.settled)
    return row


def step(rows: list[Row], name: str, measure: Callable[..., Row], *args: object) -> None:
    """Run one timed step, ``measure(*args)``; a missing widget or a failure becomes an n/a row, the bench goes on."""
    try:
        row = measure(*args)
    except NotFound as exc:
        row = Row(name, failed=f"n/a (not found: {exc})")
    except Exception as exc:  # noqa: BLE001 - one broken step must not cost the others' numbers
        row = Row(name, failed=f"n/a ({type(exc).__name__}: {str(exc).splitlines()[0][:100]})")
    row.name = name
    rows.append(row)
    print(f"  {name}: {row.failed or f'{row.settled:.2f} s'}", file=sys.stderr, flush=True)


def sidebar(page, label: str, title_text: str) -> Row:
    """Open a page from the sidebar: answered when its title is drawn."""
    link = find(page.locator(SIDEBAR_LINK, has_text=label), f"sidebar link {label}")
    return timed(page, link.click, [title(title_text)])


def choose(page, label: str, option: str) -> Callable[[], None]:
    """Open the select box ``label`` and return the click on ``option`` (the click to time)."""
    box = find(page.get_by_role("combobox", name=label, exact=True), f"select box “{label}”")
    box.click()
    item = find(page.get_by_role("option", name=option, exact=True), f"option “{option}” of “{label}”")
    return item.click


# ---- what the clicks upload ------------------------------------------------------------------------------

def conll_file(path: Path, seed: int, sentences: int = 40) -> Path:
    """A small made-up CoNLL file: token<TAB>BIO tag, sentences apart by a blank line."""
    rng = random.Random(seed)
    words = ("the patient said that after a week of taking it she felt much better but the pain came back "
             "in the morning and we added two drops to each sample before mixing them at room temperature").split()
    entities = {"DRUG": ["Varolex", "Mentacin", "Zeprofen", "Caldomab"], "ADR": ["headache", "dizzy spells",
                "dry mouth", "stomach cramps"], "REAGENT": ["buffer K", "Tris solution", "saline wash"]}
    lines = []
    for _ in range(sentences):
        tokens = [(w, "O") for w in rng.choices(words, k=rng.randint(6, 14))]
        for _ in range(rng.randint(1, 2)):
            label = rng.choice(sorted(entities))
            mention = rng.choice(entities[label]).split()
            at = rng.randint(0, len(tokens))
            tokens[at:at] = [(w, ("B-" if i == 0 else "I-") + label) for i, w in enumerate(mention)]
        lines += [f"{w}\t{t}" for w, t in tokens] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


# Names the results call differently from Table 3's corpora: a picker each; "askapatient" and "wlp" get no guess.
RESULT_NAMES = {"target": {"CADEC": "askapatient", "WetLab": "wlp"}, "source": {"PubMed": "pubmed-abstracts"}}


def results_csv(path: Path) -> Path:
    """Table 3's LM F1 as results (f1, baseline = f1 − improvement), some names spelt another way."""
    with open(SAMPLE / "results" / "dai2019_table3.csv", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["target", "source", "f1", "baseline"])
        for r in table:
            f1 = float(r["lm_f1"])
            out.writerow([RESULT_NAMES["target"].get(r["target"], r["target"]),
                          RESULT_NAMES["source"].get(r["source"], r["source"]), f1, round(f1 - float(r["lm_delta"]), 2)])
    return path


# ---- the two runs -----------------------------------------------------------------------------------------

def upload_targets(page, files: list[Path]) -> Row:
    """Corpora: set the files in the upload form (not timed: the browser sends them), press Add."""
    zone = find(page.locator('[data-testid="stFileUploaderDropzoneInput"]'), "the corpus file uploader",
                state="attached")
    zone.set_input_files([str(f) for f in files])
    for f in files:  # sent and listed in the form
        find(page.get_by_text(f.name), f"uploaded file {f.name} in the list")
    button = find(page.get_by_role("button", name="Add uploaded files"), "button Add uploaded files")
    first, last = (f"Added {f.stem} as a target" for f in (files[0], files[-1]))
    return timed(page, button.click, [SPINNER, text("message", first)], done=page.get_by_text(last))


def add_from_server(page, file: Path) -> Row:
    """Corpora, Server path tab: pick the file, press Add from the server."""
    find(page.get_by_role("tab", name="Server path"), "tab Server path").click()
    choose(page, "Pick a corpus file or a directory", str(file))()
    button = find(page.get_by_role("button", name="Add from the server"), "button Add from the server")
    added = f"Added {file.stem} as source"
    return timed(page, button.click, [SPINNER, text("message", added)], done=page.get_by_text(added))


def rename_corpus(page, old: str, new: str) -> Row:
    """Corpora: open the corpus's expander, type a new name, press Enter (submits its rename form)."""
    expander = find(page.locator('[data-testid="stExpander"]', has_text=f"{old}: preview"), f"expander of {old}")
    expander.locator("summary").click()
    field = find(expander.get_by_label("Name", exact=True), f"rename field of {old}")
    field.fill(new)
    return timed(page, lambda: field.press("Enter"), [text("message", f"Renamed {old} to {new}")])


def picker_label(column: str, name: str) -> str:
    return f"{column} “{name}” is"


def upload_results(page, path: Path) -> Row:
    """Predictiveness: set the results CSV in its uploader (the upload starts the run)."""
    zone = find(page.locator('[data-testid="stFileUploader"]', has_text="Upload a results CSV")
                .locator('[data-testid="stFileUploaderDropzoneInput"]'), "the results CSV uploader", state="attached")
    return timed(page, lambda: zone.set_input_files(str(path)), [text("message", f"NER results from {path.name}")],
                 done=page.get_by_role("combobox", name=picker_label("target", "askapatient")))


MATCHED = re.compile(r"(\d+) \(target, source\) pairs matched")


def map_name(page) -> Row:
    """Predictiveness: pick the corpus the results' "askapatient" stands for; answered when the count of
    matched pairs changes."""
    act = choose(page, picker_label("target", "askapatient"), "CADEC")
    caption = find(page.get_by_text(MATCHED), "the matched pairs' caption")
    before = MATCHED.search(caption.inner_text())[1]
    return timed(page, act, [("pairs matched", "", rf"\b(?!{before}\b)\d+ \(target, source\) pairs matched")])


def home_first_load(page, url: str) -> Row:
    first, settled, _, _ = open_page(page, url, HOME_TITLE)
    return Row("", first, settled, "page title")


def press(page, page_label: str, title_text: str, button: str, answer: Probe) -> Row:
    """Open a page from the sidebar (not timed), then time a button on it."""
    sidebar(page, page_label, title_text)
    target = find(page.get_by_role("button", name=button), f"button {button}")
    return timed(page, target.click, [answer])


def clicks_run(browser, url: str, work: Path) -> list[Row]:
    """The clicks of issue 19 in one session on a fresh server, in the order a user meets them."""
    page = browser.new_context(viewport={"width": 1400, "height": 1600}).new_page()
    page.add_init_script(RUN_LOG)
    rows: list[Row] = []
    step(rows, "Home: first load on a fresh server", home_first_load, page, url)
    step(rows, "Sidebar: open Corpora (nothing loaded)", sidebar, page, "Corpora", "Corpora")
    for i, when in enumerate(("first", "second")):
        files = [conll_file(work / f"bench-forum-{i}.conll", 10 * i),
                 conll_file(work / f"bench-lab-{i}.conll", 10 * i + 1)]
        step(rows, f"Corpora: upload two target files, Add uploaded files ({when})", upload_targets, page, files)
    for name, when in (("news.txt", "first"), ("clinical_notes.txt", "second")):
        step(rows, f"Corpora: Add from the server, {name} ({when})", add_from_server, page, SAMPLE / "sources" / name)
    step(rows, "Corpora: rename a corpus (Enter)", rename_corpus, page, "bench-forum-0", "bench-forum-renamed")
    step(rows, "Home: Load the sample data", press, page, "Home", HOME_TITLE, "Load the sample data",
         ("message", "", r"Loaded \d+ sources"))
    step(rows, "Open results: Open Table 3", press, page, "Open results", "Open results",
         "Open Table 3 of Dai et al. (2019)", text("sidebar count", "Similarity matrices: 1", '[data-testid="stSidebar"]'))
    step(rows, "Sidebar: open Corpora (sample, Table 3, own files)", sidebar, page, "Corpora", "Corpora")
    step(rows, "Sidebar: open Predictiveness (Table 3)", sidebar, page, "Predictiveness", "Predictiveness")
    step(rows, "Predictiveness: upload a results CSV", upload_results, page, results_csv(work / "bench-results.csv"))
    step(rows, "Predictiveness: one name-mapping pick", map_name, page)
    page.context.close()
    return rows


# Issue 29's data, added from the server (under --issue-data DIR): three sources and two NER test splits.
ISSUE_CORPORA = [("sources/news_1bwb.txt.gz", "source"), ("sources/biomed_ohsumed_medline.txt.gz", "source"),
                 ("sources/reviews_yelp.txt.gz", "source"), ("targets/conll2003/test.conll", "target"),
                 ("targets/wetlab_wlp/test.conll", "target")]


def add_issue_data(page, url: str, ws_id: str) -> None:
    """The issue's corpora added on Corpora (server path), then the matrix computed on Similarity (waited for)."""
    open_page(page, f"{url}/Corpora?ws={ws_id}", "Corpora")
    find(page.get_by_role("tab", name="Server path"), "Server path tab").click()
    for path, role in ISSUE_CORPORA:
        find(page.get_by_label("…or type a path inside a data directory"), "path field").fill(path)
        page.locator('[data-testid="stRadio"]', has_text="Add as").last.get_by_text(role, exact=True).click()
        timed(page, find(page.get_by_role("button", name="Add from the server"), "add button").click,
              [text("added", "Added ")])
    open_page(page, f"{url}/Similarity?ws={ws_id}", "Similarity")
    timed(page, find(page.get_by_role("button", name="Compute"), "Compute").click)
    page.wait_for_selector('[data-testid="stSidebar"] >> text=/Similarity matrices: 2/', timeout=3_600_000)


# first render, settled, charts drawn (s), charts, the server's CPU s
Timing = tuple[float, float, float, int, float]


def pages_run(browser, url: str, pid: int, rounds: int, issue_data: bool = False,
              ws_id: str | None = None) -> list[tuple[str, list[Timing]]]:
    """Every page opened by address ``rounds`` times, in a workspace holding the sample and Table 3
    (and with ``issue_data``, the issue's corpora and their matrix), or in the workspace ``ws_id``
    already built. Each open also counts the server process's CPU seconds until the page had
    settled and its charts were drawn."""
    page = browser.new_context(viewport={"width": 1400, "height": 1600}).new_page()
    page.add_init_script(RUN_LOG)
    timings: dict[str, list[Timing]] = {path: [] for path, _ in PAGES}

    def opened(address: str, heading: str) -> Timing:
        before = server_cpu(pid)
        return (*open_page(page, address, heading), server_cpu(pid) - before)

    if ws_id is None:
        timings[""].append(opened(url, HOME_TITLE))
        timed(page, page.get_by_role("button", name="Load the sample data").first.click)
        ws_id = page.url.split("ws=")[1].split("&")[0]
        open_page(page, f"{url}/Open_results?ws={ws_id}", "Open results")
        table3 = page.get_by_role("button", name="Open Table 3 of Dai et al. (2019)")
        timed(page, table3.first.click)
        if issue_data:
            add_issue_data(page, url, ws_id)
    for _ in range(rounds):
        for path, heading in PAGES:
            if path == "" and len(timings[""]) >= rounds:
                continue
            heading = HOME_TITLE if path == "" else heading
            timings[path].append(opened(f"{url}/{path}?ws={ws_id}", heading))
    page.context.close()
    return [(heading, timings[path]) for path, heading in PAGES]


def large_workspace(cache: Path, data: Path) -> str:
    """bench/bench_pages.py's workspace (20 sources, 8 targets, 7 matrices) built in ``cache``: its
    id."""
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_pages

    os.environ["SIMCORE_CACHE"] = str(cache)
    os.environ["SIMCORE_DATA_ROOTS"] = os.pathsep.join([str(SAMPLE), str(data)])
    bench_pages.write_corpora(data)
    return bench_pages.build(data)


def on_fresh_server(cache: Path, log: Path, run: Callable, roots: list[Path] | None = None) -> tuple[object, float]:
    """``run(browser, url, server pid)`` against a server started for it; the server is stopped
    whatever happens."""
    from playwright.sync_api import sync_playwright

    process, url, start_s = start_server(cache, log, roots)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            try:
                return run(browser, url, process.pid), start_s
            finally:
                browser.close()
    finally:
        stop_server(process)


def floor_run(work: Path) -> tuple[float, float]:
    """First render of a one-line Streamlit app (``st.title`` and nothing else) on a new server in a
    new browser, and in a second new browser context: what Streamlit and Chromium take before any
    page of ours runs (a new context has none of the frontend's files cached)."""
    from playwright.sync_api import sync_playwright

    app = work / "floor_app.py"
    app.write_text('import streamlit as st\n\nst.title("Floor")\n', encoding="utf-8")
    process, url, _ = start_server(work / "cache-floor", work / "server-floor.log", script=app)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            try:
                renders = []
                for _ in range(2):
                    page = browser.new_context(viewport={"width": 1400, "height": 1600}).new_page()
                    page.add_init_script(RUN_LOG)
                    renders.append(open_page(page, url, "Floor")[0])
                    page.context.close()
                return renders[0], renders[1]
            finally:
                browser.close()
    finally:
        stop_server(process)


def cell(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="times each page is opened")
    parser.add_argument("--cache", type=Path, help="artefact store to use (default: a new, empty one per server)")
    parser.add_argument("--clicks-only", action="store_true", help="skip the page-open rounds (a quicker run)")
    parser.add_argument("--pages-only", action="store_true", help="skip the clicks")
    parser.add_argument("--large", action="store_true",
                        help="open the pages in bench/bench_pages.py's workspace (20 sources, 8 "
                             "targets, 7 matrices, built first from ../shared/data) instead of the "
                             "sample and Table 3")
    parser.add_argument("--issue-data", type=Path, default=None,
                        help="also add issue 29's corpora from this data folder (../shared/data) and compute their "
                             "matrix before the page-open rounds (9 sources x 5 targets)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]

    work = Path(tempfile.mkdtemp(prefix="bench-ui-"))
    rows: list[tuple[str, list[Timing]]] = []
    if not args.clicks_only:
        print("pages…", file=sys.stderr, flush=True)
        roots = [SAMPLE, args.issue_data] if args.issue_data else None
        cache, ws_id = args.cache or work / "cache-pages", None
        if args.large:
            ws_id = large_workspace(cache, work / "data")
            roots = [SAMPLE, work / "data"]
        def pages(browser, url: str, pid: int) -> list[tuple[str, list[Timing]]]:
            return pages_run(browser, url, pid, args.rounds, bool(args.issue_data), ws_id)

        rows, pages_start = on_fresh_server(cache, work / "server-pages.log", pages, roots)
        floor = floor_run(work)
    clicks, clicks_start = [], 0.0
    if not args.pages_only:
        print("clicks…", file=sys.stderr, flush=True)
        clicks, clicks_start = on_fresh_server(
            args.cache or work / "cache-clicks", work / "server-clicks.log",
            lambda browser, url, _pid: clicks_run(browser, url, work))

    # Other work on the machine slows every figure: the load average says how much there was.
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after (figures are indicative)"
    if rows:
        issue = " and issue 29's corpora with their matrix" if args.issue_data else ""
        data = ("bench_pages.py's workspace of 20 sources, 8 targets and 7 matrices" if args.large
                else "the sample, Table 3" + issue)
        print(f"Dashboard pages in Chromium on {data} (server start {pages_start:.1f} s; "
              f"{os.cpu_count()} cores; {load}; each open is a new session restoring the "
              "workspace; CPU: the server's user+sys seconds until the page settled and its "
              "charts were drawn)")
        heads = "first render s | settled s | charts drawn s | CPU s"
        opens = " | ".join(f"open {i + 1}: {heads}" for i in range(args.rounds))
        print(f"| page | charts | {opens} |")
        print("|" + "---|" * (2 + 4 * args.rounds))
        for title, times in rows:
            cells = " | ".join(f"{a:.2f} | {b:.2f} | {d:.2f} | {c:.2f}" for a, b, d, _, c in times)
            print(f"| {title} | {times[0][3]} | {cells} |")
        print(f"\nThe floor: a one-line Streamlit app (st.title only) renders first in {floor[0]:.2f} s on a new "
              f"server in a new browser, {floor[1]:.2f} s in a second new browser context (no file of "
              "the frontend cached).")
        print()
    if not clicks:
        return
    print(f"Clicks in one session on a fresh server (server start {clicks_start:.1f} s; {load}; "
          "seconds from the click or the file being set)")
    print("| click | s until the page answers | answered by | s until the script finished |")
    print("|---|---|---|---|")
    for r in clicks:
        if r.failed:
            print(f"| {r.name} | {r.failed} | | n/a |")
        else:
            print(f"| {r.name} | {cell(r.answer)} | {r.answered_by} | {cell(r.settled)} |")


if __name__ == "__main__":
    main()
