"""Ten browser sessions at once on one `streamlit run` server: each loads the sample, uploads its
own target, computes, and downloads its ranking.

Every session must get the values simcore computes directly, see only its own upload, and no
artefact may be built twice (the store's per-key lock; audited through $SIMCORE_BUILD_LOG)."""

from __future__ import annotations

import csv
import io
import time
from collections import Counter

import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.workbench import Workbench
from simcore.utils.store import ArtefactStore

from .conftest import SAMPLE_DATA
from .test_browser import Server, _page, browser, no_exception, settle, wait_for_jobs  # noqa: F401  (browser: a fixture)

pytestmark = pytest.mark.browser

SESSIONS = 10
EXAMPLE = (SAMPLE_DATA / "upload_example" / "med_forum_posts_sample.txt").read_text()


def upload_text(i: int) -> str:
    lines = EXAMPLE.splitlines()
    return "\n".join(lines[i:] + lines[:i]) + f"\nsession {i} writes about zzmarker{i} here\n"


SIDEBAR_LINK = '[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]'


def nav(page, label: str) -> None:
    page.locator(SIDEBAR_LINK, has_text=label).first.click()


def test_ten_sessions_at_once(browser, tmp_path, monkeypatch):  # noqa: F811  (the fixture imported above)
    cache, log = tmp_path / "store", tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    server = Server(cache, tmp_path / "server.log")
    started = time.perf_counter()
    try:
        sessions = [_page(browser) for _ in range(SESSIONS)]
        pages = [page for _, page in sessions]
        for page in pages:
            page.goto(server.url)
        for page in pages:
            settle(page, 300)
            page.get_by_role("button", name="Load the sample data").click()
        for i, page in enumerate(pages):
            settle(page)
            nav(page, "Corpora")
            settle(page)
            upload = tmp_path / f"session{i}.txt"
            upload.write_text(upload_text(i))
            page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(upload))
            page.wait_for_timeout(300)
            page.get_by_role("button", name="Add uploaded files").click()
        for page in pages:
            settle(page)
            nav(page, "Similarity")
        for page in pages:
            settle(page)
            for measure in ("TVcC", "WVV", "JSD", "TTR"):  # the two the test checks are enough to share the server
                page.get_by_label(f"Remove {measure}", exact=True).click()
            page.get_by_role("button", name="Compute").click()
        # as long as the server's computations go on (a loaded machine makes them slow, not stuck)
        wait_for_jobs(pages, '[data-testid="stPlotlyChart"] .main-svg')
        for page in pages:
            settle(page)
            no_exception(page)
        rankings = []
        for i, page in enumerate(pages):
            nav(page, "Ranking and export")
            settle(page)
            with page.expect_download() as info:
                page.get_by_role("button", name="Download ranking (CSV)").click()
            path = tmp_path / f"ranking{i}.csv"
            info.value.save_as(path)
            rankings.append(list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))))
            no_exception(page)
        elapsed = time.perf_counter() - started
        for context, _ in sessions:
            context.close()
    finally:
        server.stop()
    print(f"\n{SESSIONS} concurrent browser sessions: load, upload, compute, download in {elapsed:.1f} s")

    built = Counter(tuple(line.split()[:2]) for line in log.read_text().splitlines())
    twice = {k: n for k, n in built.items() if n > 1}
    assert not twice, f"built more than once: {twice}"

    bench = Workbench(ArtefactStore(cache))
    sources = corpora_in(SAMPLE_DATA / "sources")
    for i, rows in enumerate(rankings):
        targets = {r["target"] for r in rows}
        assert f"session{i}" in targets
        assert not {t for t in targets if t.startswith("session")} - {f"session{i}"}, "only its own upload"
        own = tmp_path / f"session{i}.txt"
        direct = bench.matrix(sources, [Corpus.from_path(own, name=f"session{i}")], ["ppl", "tvc"])
        for measure in ("ppl", "tvc"):
            part = direct[direct["measure"] == measure]
            best = part.loc[part["value"].idxmin() if measure == "ppl" else part["value"].idxmax(), "source"]
            first = [r["source"] for r in rows
                     if r["target"] == f"session{i}" and r["measure"] == measure and r["rank"] == "1"]
            assert first == [best]
            values = {r["source"]: float(r["value"]) for r in rows
                      if r["target"] == f"session{i}" and r["measure"] == measure}
            for row in part.itertuples():
                assert values[row.source] == pytest.approx(row.value, rel=1e-6)
