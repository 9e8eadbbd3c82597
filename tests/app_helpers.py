"""Helpers shared by the AppTest modules: move to a page, read the session's state, check for problems."""

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
