"""Helpers shared by the AppTest modules: a new session, move to a page, read the session's state, wait for its
jobs, find charts, check for problems."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from .conftest import ROOT


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(str(ROOT / page)).run()
    return at


def state(at: AppTest):
    return at.session_state["simcore_state"]


def no_problems(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def fresh() -> AppTest:
    """A new browser session on the home page."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    return at


def finish_jobs(at: AppTest, timeout: float = 180) -> AppTest:
    """Wait for the session's background jobs, then run the page again (as the sidebar's timer would)."""
    for job in list(state(at).jobs.values()):
        assert job.wait(timeout), f"{job.title} still running after {timeout} s"
    at.run()
    return at


def charts(at: AppTest, kind: str) -> list:
    """Every element of this kind on the page (plotly_chart, vega_lite_chart, ...), however deeply nested."""
    found = []

    def walk(node):
        for child in (node.children.values() if isinstance(getattr(node, "children", None), dict) else []):
            if getattr(child, "type", None) == kind:
                found.append(child)
            walk(child)

    walk(at._tree)
    return found
