"""Shared fixtures: a fresh artefact store per test, paths to the bundled and shared data."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from simcore.corpora.corpus import keep_facts_in
from simcore.utils.store import ArtefactStore

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DATA = ROOT / "sample_data"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def store(tmp_path: Path) -> ArtefactStore:
    return ArtefactStore(tmp_path / "store")


@pytest.fixture(autouse=True)
def _no_kept_facts() -> Iterator[None]:
    """A dashboard page sets its store as where corpus facts are kept (simcore.corpora.corpus):
    each test ends with none, so that no later test keeps facts in another test's store."""
    yield
    keep_facts_in(None)


@pytest.fixture(scope="module")
def app_environment(tmp_path_factory) -> Iterator[Path]:
    """SIMCORE_CACHE in a temporary directory and SIMCORE_DATA_ROOTS on the sample, for one test module."""
    root = tmp_path_factory.mktemp("simcore-cache")
    old = {k: os.environ.get(k) for k in ("SIMCORE_CACHE", "SIMCORE_DATA_ROOTS")}
    os.environ["SIMCORE_CACHE"] = str(root)
    os.environ["SIMCORE_DATA_ROOTS"] = str(SAMPLE_DATA)
    yield root
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture
def shared_data() -> Path:
    if not (SHARED_DATA / "sources").is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The real-browser tests first (a stable sort: the rest keep their order). Under pytest-xdist
    (scripts/test.sh runs two processes, a file to each) the longest files then start at once and
    the run does not end on one process while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is None)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ARG001 (pytest's hook names)
    """How many tests were skipped, counted by reason, as the last lines of every run."""
    reasons: Counter[str] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    if not reasons:
        return
    total = sum(reasons.values())
    terminalreporter.section(f"{total} test{'s' if total != 1 else ''} skipped, by reason", sep="-")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"{count:5d}  {reason}")
