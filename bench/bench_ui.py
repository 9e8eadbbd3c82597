"""How long each dashboard page takes to show, in a real browser, printed as a table.

Starts ``streamlit run app.py`` on a free port with a fresh artefact store (or ``--cache DIR``), drives
Debian's Chromium with Playwright (as tests/test_browser.py does), loads the bundled sample and the
paper's Table 3 into one workspace, then opens every page by its address with that workspace's id
(``?ws=``: each open is a new browser session that restores the workspace from disk, as a reload does).

For each page it prints the time until the page's title is drawn (first render) and until its script
has finished (settled), the first time on this server and again. It also times a few clicks.

Usage: nice .venv/bin/python bench/bench_ui.py [--rounds 2] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
RUNNING = '[data-testid="stApp"][data-test-script-state="running"]'
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
PAGES = [("", "Home"), ("Corpora", "Corpora"), ("Similarity", "Similarity"), ("Predictiveness", "Predictiveness"),
         ("Agreement", "Agreement"), ("Ranking_and_export", "Ranking and export"), ("Open_results", "Open results"),
         ("Sentence_selection", "Sentence selection"), ("Compare_results", "Compare results"), ("NER_probe", "NER probe")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(cache: Path, log: Path) -> tuple[subprocess.Popen, str, float]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SIMCORE_CACHE": str(cache), "SIMCORE_DATA_ROOTS": str(ROOT / "sample_data"),
           "PYTHONPATH": str(ROOT)}
    env.pop("SIMCORE_DEMO", None)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true", "--server.address=127.0.0.1",
         f"--server.port={port}", "--browser.gatherUsageStats=false", "--server.fileWatcherType=none"],
        cwd=ROOT, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return process, url, time.perf_counter() - started
        except OSError:
            time.sleep(0.2)
    process.terminate()
    raise SystemExit(f"streamlit did not start; see {log}")


def settle(page, timeout: float = 120_000) -> None:
    """Until the script has run: it may not have started yet when the action returns."""
    try:
        page.wait_for_selector(RUNNING, timeout=1_500)
    except Exception:  # noqa: BLE001 - a fast run is over before it is seen
        pass
    page.wait_for_selector(IDLE, timeout=timeout)


def open_page(page, url: str, title: str) -> tuple[float, float]:
    """Seconds until the page's title shows, and until its script finished."""
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.get_by_role("heading", name=title, exact=False).first.wait_for(timeout=120_000)
    first = time.perf_counter() - t0
    settle(page)
    return first, time.perf_counter() - t0


def click(page, text: str) -> float:
    t0 = time.perf_counter()
    page.get_by_role("button", name=text).first.click()
    settle(page)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="times each page is opened")
    parser.add_argument("--cache", type=Path, help="artefact store to use (default: a new, empty one)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="bench-ui-"))
    cache = args.cache or work / "cache"
    process, url, start_s = start_server(cache, work / "server.log")
    clicks: list[tuple[str, float]] = []
    rows: list[tuple[str, list[tuple[float, float]]]] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            page = browser.new_context(viewport={"width": 1400, "height": 1600}).new_page()
            home = open_page(page, url, "Which corpus")
            clicks.append(("Home: Load the sample data", click(page, "Load the sample data")))
            ws_id = page.url.split("ws=")[1].split("&")[0]
            open_page(page, f"{url}/Open_results?ws={ws_id}", "Open results")
            clicks.append(("Open results: Open Table 3", click(page, "Open Table 3 of Dai et al. (2019)")))
            timings = {path: [] for path, _ in PAGES}
            timings[""].append(home)
            for _ in range(args.rounds):
                for path, title in PAGES:
                    if path == "" and len(timings[""]) >= args.rounds:
                        continue
                    shown = "Which corpus" if path == "" else title
                    timings[path].append(open_page(page, f"{url}/{path}?ws={ws_id}", shown))
            rows = [(title, timings[path]) for path, title in PAGES]
            browser.close()
    finally:
        process.terminate()
        process.wait(10)

    print(f"Dashboard pages in Chromium (server start {start_s:.1f} s; {os.cpu_count()} cores; "
          "each open is a new session restoring the workspace)")
    header = "| page | " + " | ".join(f"open {i + 1}: first render s | settled s" for i in range(args.rounds)) + " |"
    print(header)
    print("|" + "---|" * (1 + 2 * args.rounds))
    for title, times in rows:
        cells = " | ".join(f"{a:.2f} | {b:.2f}" for a, b in times)
        print(f"| {title} | {cells} |")
    print()
    print("| click | s until the script finished |")
    print("|---|---|")
    for name, seconds in clicks:
        print(f"| {name} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
