"""Shared fixtures: a fresh artefact store per test, paths to the bundled and shared data."""

from __future__ import annotations

from pathlib import Path

import pytest

from simcore.store import ArtefactStore

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DATA = ROOT / "sample_data"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def store(tmp_path: Path) -> ArtefactStore:
    return ArtefactStore(tmp_path / "store")


@pytest.fixture
def shared_data() -> Path:
    if not (SHARED_DATA / "sources").is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA
