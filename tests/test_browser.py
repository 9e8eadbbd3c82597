"""Real-browser tests: Playwright (from PyPI) driving Debian's Chromium against `streamlit run` on localhost.

Screenshots of each page go to test-artifacts/screenshots/ (look at them: a hard-to-read layout is a defect).
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .conftest import ROOT, SAMPLE_DATA

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "test-artifacts" / "screenshots"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
# The sidebar's navigation is st.page_link (dashboard.page_setup), not Streamlit's own (it called the home page "app").
SIDEBAR_LINK = '[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]'
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]

playwright_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, cache: Path, log: Path, port: int | None = None) -> None:
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "SIMCORE_CACHE": str(cache), "SIMCORE_DATA_ROOTS": str(SAMPLE_DATA)}
        self.log = open(log, "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true",
             "--server.address=127.0.0.1", f"--server.port={self.port}", "--browser.gatherUsageStats=false",
             "--server.fileWatcherType=none"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).read() == b"ok":
                    return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"streamlit did not start; see {log}")

    def kill(self) -> None:
        """The server and its job processes gone at once, as when the machine or its container stops."""
        os.killpg(self.process.pid, 9)
        self.process.wait(10)
        self.log.close()

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


@pytest.fixture(scope="module")
def browser():
    SHOTS.mkdir(parents=True, exist_ok=True)
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("browser-cache")


def _page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 2400}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    return context, page


def settle(page, ms: int = 400) -> None:
    page.wait_for_timeout(ms)
    page.wait_for_selector(IDLE, timeout=300_000)  # one script run; a loaded machine makes it slow, not stuck
    page.wait_for_timeout(200)


JOB_LINE = '[data-testid="stSidebar"] [data-testid="stProgress"]'
_JOB_STATE = """(sel) => [...document.querySelectorAll(sel)].map(e => e.innerText.replace(/ · [^·]*$/, '')).join('|')"""


def wait_for_jobs(pages, done: str, stall_s: float = 240) -> None:
    """Wait until every page shows ``done`` (a selector), for as long as the server's jobs make progress.

    Progress is the app's own: the sidebar's job lines (message, values, percentage; the clock left out).
    Only when none of them has changed for ``stall_s`` is it a failure: a loaded machine makes the work
    slow, which a fixed time budget mistook for a hang (ten sessions' computations run one after another).
    """
    last, changed = None, time.monotonic()
    while True:
        waiting = [p for p in pages if p.locator(done).count() == 0]
        if not waiting:
            return
        state = [p.evaluate(_JOB_STATE, JOB_LINE) for p in pages]
        if state != last:
            last, changed = state, time.monotonic()
        assert time.monotonic() - changed < stall_s, f"no job progressed for {stall_s:.0f} s: {last}"
        waiting[0].wait_for_timeout(1000)


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def visible(page, text: str) -> bool:
    """Wait (up to 30 s) for the text to show: a rerun may still be on its way when the script looks idle."""
    locator = page.get_by_text(text).first
    locator.wait_for(state="visible", timeout=30_000)
    return locator.is_visible()


def nav(page, label: str) -> None:
    page.locator(SIDEBAR_LINK, has_text=label).first.click()
    settle(page)


def test_deep_link_on_a_fresh_server(browser, tmp_path):
    server = Server(tmp_path / "cache", tmp_path / "server.log")
    try:
        context, page = _page(browser)
        page.goto(f"{server.url}/Agreement")  # the server's very first page request
        settle(page, 800)
        no_exception(page)
        assert visible(page, "No similarity matrix yet")
        links = page.locator(SIDEBAR_LINK)
        assert links.count() >= 9 and links.first.inner_text().strip().endswith("Home")
        shot(page, "00_agreement_direct_link_nothing_loaded")
        page.get_by_role("button", name="Load Table 3 of Dai et al. (2019)").click()
        settle(page)
        assert visible(page, "0.733")
        no_exception(page)
        shot(page, "01_agreement_table3")
        context.close()
    finally:
        server.stop()


def test_a_reload_keeps_the_work_and_the_address_names_it(browser, tmp_path):
    """Issue 19: F5 after 30 minutes brought back only the demo sample."""
    server = Server(tmp_path / "cache", tmp_path / "server.log")
    try:
        context, page = _page(browser)
        page.goto(server.url)
        settle(page, 800)
        page.get_by_role("button", name="Load the sample data").click()
        settle(page)
        nav(page, "Open results")
        page.get_by_role("button", name="Open Table 3 of Dai et al. (2019)").click()
        settle(page)
        assert "ws=" in page.url
        page.reload()  # F5
        settle(page, 800)
        sidebar = page.locator('[data-testid="stSidebar"]')
        assert sidebar.get_by_text("Sources: 6").count() == 1 and sidebar.get_by_text("Similarity matrices: 1").count() == 1
        no_exception(page)
        shot(page, "00b_open_results_after_reload")
        other = browser.new_context().new_page()  # someone else on the same server: nothing of it
        other.goto(server.url)
        settle(other, 800)
        assert other.locator('[data-testid="stSidebar"]').get_by_text("Sources: 6").count() == 0
        other.context.close()
        context.close()
    finally:
        server.stop()


def test_sample_compute_upload_download_and_charts(browser, cache, tmp_path):
    server = Server(cache, tmp_path / "server.log")
    try:
        context, page = _page(browser)
        page.goto(server.url)
        settle(page, 800)
        page.get_by_role("button", name="Load the sample data").click()
        settle(page)
        assert visible(page, "Loaded 6 sources and 3 targets")
        shot(page, "02_home_sample_loaded")

        nav(page, "Similarity")
        started = time.time()
        page.get_by_role("button", name="Compute").click()
        settle(page, 300)
        # the computation is the session's: it goes on while another page is open, progress in the sidebar
        nav(page, "Agreement")
        sidebar = page.locator('[data-testid="stSidebar"]')
        if sidebar.locator('[data-testid="stProgress"]').count():
            shot(page, "03a_agreement_while_computing")
        # about 30 s on a cold cache (KenLM, skip-gram, spaCy tagging), longer when the machine is shared
        wait_for_jobs([page], '[data-testid="stSidebar"] >> text=Similarity matrices: 1')
        print(f"matrix of the sample on a cold cache, computed in the background: {time.time() - started:.0f} s")
        nav(page, "Similarity")
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=60_000)
        no_exception(page)
        assert page.locator('[data-testid="stPlotlyChart"]').count() == 4  # WVV is not computed on the sample
        page.wait_for_timeout(500)
        shot(page, "03_similarity_heatmaps")

        nav(page, "Corpora")
        example = SAMPLE_DATA / "upload_example" / "med_forum_posts_sample.txt"
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(example))
        page.wait_for_timeout(500)
        page.get_by_role("button", name="Add uploaded files").click()
        settle(page)
        no_exception(page)
        assert visible(page, "Added med_forum_posts_sample as a target")
        # the sidebar counts the new target in the same response (it was one action behind)
        assert page.locator('[data-testid="stSidebar"]').get_by_text("Targets: 4").count() == 1
        shot(page, "04_corpora_after_upload")

        nav(page, "Ranking and export")
        no_exception(page)
        with page.expect_download() as info:
            page.get_by_role("button", name="Download ranking (CSV)").click()
        path = tmp_path / "ranking.csv"
        info.value.save_as(path)
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
        assert len(rows) == 3 * 6 * 6  # targets × sources × (5 measures + consensus)
        assert set(rows[0]) == {"target", "measure", "rank", "source", "value"}
        ppl = [r for r in rows if r["target"] == "med_forum_posts" and r["measure"] == "ppl"]
        by_value = sorted(ppl, key=lambda r: float(r["value"]))
        assert [r["source"] for r in by_value] == [r["source"] for r in sorted(ppl, key=lambda r: int(r["rank"]))]
        shot(page, "05_ranking_and_export")

        nav(page, "Open results")
        no_exception(page)
        shot(page, "06_open_results")

        nav(page, "Predictiveness")
        page.get_by_role("button", name="Load Table 3 of Dai et al. (2019)").click()
        # the click changes the state, then the page runs again (so the sidebar is current): wait for that run
        assert visible(page, "Opened Table 3 of Dai et al. (2019)")
        settle(page)
        page.wait_for_function(
            "document.querySelectorAll('[data-testid=\"stVegaLiteChart\"] svg.marks').length >= 4", timeout=30_000)
        no_exception(page)
        assert page.locator('[data-testid="stVegaLiteChart"]').count() == 4
        page.wait_for_timeout(1000)
        assert page.locator('[data-testid="stVegaLiteChart"] svg.marks').count() == 4
        shot(page, "07_predictiveness_table3")

        nav(page, "Agreement")
        no_exception(page)
        assert visible(page, "0.733")
        shot(page, "08_agreement_table3")

        nav(page, "Compare results")
        no_exception(page)
        # the computed run and Table 3 share no target: the page says so instead of comparing nothing
        assert visible(page, "No two of your matrices can be compared")
        shot(page, "08a_compare_results")

        nav(page, "Sentence selection")
        no_exception(page)
        page.get_by_role("button", name="Select").click()
        settle(page, 1000)
        wait_for_jobs([page], '[data-testid="stVegaLiteChart"] svg.marks')
        no_exception(page)
        page.wait_for_timeout(500)
        shot(page, "09_sentence_selection")
        context.close()
    finally:
        server.stop()
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_rename_stays_on_the_workspaces_tab_and_every_chosen_source_is_in_view(browser, tmp_path):
    """Issue 29: the Open results page jumped back to its first tab after a rename; the Similarity form's
    source chips sat on one scrolling row (2.5 of 9 in view)."""
    server = Server(tmp_path / "cache", tmp_path / "server.log")
    try:
        context, page = _page(browser)
        page.goto(server.url)
        settle(page, 800)
        page.get_by_role("button", name="Load the sample data").click()
        settle(page)
        page.locator('[data-testid="stSidebar"]').get_by_text("Manage workspaces").click()
        settle(page)
        selected = '[data-testid="stMain"] [role="tab"][aria-selected="true"]'
        assert page.locator(selected).inner_text().strip() == "Workspaces"
        nav(page, "Home")
        nav(page, "Open results")  # opened on its first tab; the user picks Workspaces
        page.locator('[data-testid="stMain"] [role="tab"]', has_text="Workspaces").click()
        settle(page)
        assert page.locator(selected).inner_text().strip() == "Workspaces"
        field = page.get_by_label("Name of this workspace")
        field.fill("Chip check")
        page.get_by_role("button", name="Rename").first.click()
        assert visible(page, "This workspace is now called Chip check")
        settle(page)
        assert page.locator(selected).inner_text().strip() == "Workspaces"
        no_exception(page)

        nav(page, "Corpora")  # the same for Corpora's Server path tab after adding a corpus from the server
        page.locator('[data-testid="stMain"] [role="tab"]', has_text="Server path").click()
        settle(page)
        page.get_by_label("…or type a path inside a data directory").fill("sources/news.txt")
        page.locator('[data-testid="stRadio"]', has_text="Add as").last.get_by_text("source", exact=True).click()
        page.get_by_role("button", name="Add from the server").click()
        assert visible(page, "Added news (2) as source")
        settle(page)
        assert page.locator(selected).first.inner_text().strip() == "Server path"

        nav(page, "Similarity")
        box = page.locator('[data-testid="stMultiSelect"]').first
        frame = box.bounding_box()
        chips = box.locator('[data-testid="stMultiSelectTagsContainer"] [data-tag]')
        assert chips.count() == 7
        for i in range(chips.count()):  # each chip inside the widget's own box: wrapped, not scrolled away
            chip = chips.nth(i).bounding_box()
            assert frame["x"] <= chip["x"] and chip["x"] + chip["width"] <= frame["x"] + frame["width"] + 1, (i, chip)
        shot(page, "10_similarity_form_sources")
        context.close()
    finally:
        server.stop()


def test_a_reload_and_a_second_tab_mid_job_show_it_and_get_its_result(browser, tmp_path):
    """Issue 29: F5 46 s into a computation came back with no job, no progress and Compute enabled. Now the
    job belongs to the workspace: the reloaded tab and a second tab show its progress and both get the matrix."""
    server = Server(tmp_path / "cache", tmp_path / "server.log")
    try:
        context, page = _page(browser)
        page.goto(server.url)
        settle(page, 800)
        page.get_by_role("button", name="Load the sample data").click()
        settle(page)
        nav(page, "Similarity")
        page.get_by_role("button", name="Compute").click()
        settle(page, 300)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.locator('[data-testid="stProgress"]').first.wait_for(timeout=60_000)
        page.reload()  # F5 mid-job
        settle(page, 800)
        sidebar.locator('[data-testid="stProgress"]').first.wait_for(timeout=30_000)  # the job is still there
        assert page.get_by_role("button", name="Compute").is_disabled()
        other = context.new_page()  # a second tab on the same address
        other.goto(page.url)
        settle(other, 800)
        other.locator('[data-testid="stSidebar"] [data-testid="stProgress"]').first.wait_for(timeout=30_000)
        shot(other, "11_second_tab_mid_job")
        done = '[data-testid="stSidebar"] >> text=Similarity matrices: 1'
        wait_for_jobs([page, other], done)
        for tab in (page, other):
            settle(tab)
            no_exception(tab)
            nav(tab, "Similarity")
            tab.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=60_000)
        context.close()
    finally:
        server.stop()


def test_a_server_restarted_mid_job_shows_it_interrupted_and_resume_completes_it(browser, tmp_path):
    """Issue 29: a job whose server stopped was lost without a word. Its record stays in the workspace on disk:
    the server killed mid-matrix and started again, the same address shows the job interrupted, and Resume
    finishes it, reading back the values the first server stored."""
    cache = tmp_path / "cache"
    server = Server(cache, tmp_path / "server.log")
    port = server.port
    try:
        context, page = _page(browser)
        page.goto(server.url)
        settle(page, 800)
        page.get_by_role("button", name="Load the sample data").click()
        settle(page)
        nav(page, "Similarity")
        page.get_by_role("button", name="Compute").click()
        settle(page, 300)
        line = page.locator(JOB_LINE).first
        line.wait_for(timeout=60_000)
        # the app's own state: wait until the first server has stored some values (the sidebar counts them)
        page.locator(JOB_LINE, has_text=re.compile(r"[1-9]\d* of \d+ values")).first.wait_for(timeout=600_000)
        address = page.url
        server.kill()
        stored = len(list((cache / "cell").iterdir()))
        server = Server(cache, tmp_path / "server2.log", port=port)  # started again: the tab reconnects
        page.goto(address)
        settle(page, 800)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("was interrupted").first.wait_for(timeout=60_000)
        shot(page, "12_interrupted_after_restart")
        sidebar.get_by_role("button", name="Resume").click()
        settle(page)
        wait_for_jobs([page], '[data-testid="stSidebar"] >> text=Similarity matrices: 1')
        settle(page)
        no_exception(page)
        assert sidebar.get_by_text("was interrupted").count() == 0
        assert not list((cache / "workspaces").glob("*/jobs/*.json")), "the finished job's record is gone"
        total = len(list((cache / "cell").iterdir()))
        print(f"values stored by the killed server and read back on resume: {stored} of {total}")
        assert 0 < stored <= total
        nav(page, "Similarity")
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=60_000)
        context.close()
    finally:
        server.stop()
