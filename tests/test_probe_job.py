"""dashboard.probe_job without a page: the target a form's choices name, and the checks before a job starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.probe_job import LOADED, SERVER, UPLOAD, ProbeRequest, resolve_target, start_probe
from dashboard.state import AppState
from simcore.probe.config import ProbeCaps
from simcore.probe.data import TargetSplits, read_split
from simcore.utils.errors import SimcoreError

TRAIN = b"John\tB-PER\nlives\tO\nin\tO\nOslo\tB-LOC\n\nMary\tB-PER\nleft\tO\n"
TEST = b"Anna\tB-PER\nsaw\tO\nRome\tB-LOC\n"


def test_uploaded_splits_are_saved_by_their_bytes_and_read_back(store, tmp_path: Path) -> None:
    target = resolve_target(AppState(), UPLOAD, uploads={"train": ("../../x/train.conll", TRAIN),
                                                         "test": ("test.conll", TEST)},
                            upload_name="my<b>target", store=store)
    assert target.dev is None and target.name == "my_b_target"  # display_name: a safe label
    for path in (target.train, target.test):
        assert path.is_relative_to(store.root) and "x" not in path.parts  # the name chose no path
    assert target.train.read_bytes() == TRAIN
    assert read_split(target, "train") == [(["John", "lives", "in", "Oslo"], ["B-PER", "O", "O", "B-LOC"]),
                                           (["Mary", "left"], ["B-PER", "O"])]


@pytest.mark.parametrize(("uploads", "message"), [
    ({"train": ("train.conll", TRAIN)}, "upload at least a train file and a test file"),
    ({"train": ("train.conll", TRAIN), "test": ("test.conll", b"  \n")}, "the uploaded test file is empty"),
])
def test_bad_uploads_are_clear_errors(store, uploads, message) -> None:
    with pytest.raises(SimcoreError, match=message):
        resolve_target(AppState(), UPLOAD, uploads=uploads, store=store)


def test_server_and_loaded_targets_need_a_directory(monkeypatch, tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "train.conll").write_bytes(TRAIN)
    (tmp_path / "t" / "test.conll").write_bytes(TEST)
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", str(tmp_path))
    assert resolve_target(AppState(), SERVER, server=str(tmp_path / "t")) == TargetSplits(
        "t", (tmp_path / "t" / "train.conll").resolve(), (tmp_path / "t" / "test.conll").resolve())
    with pytest.raises(SimcoreError, match="type the server directory"):
        resolve_target(AppState(), SERVER, server=" ")
    with pytest.raises(SimcoreError, match="no loaded target is a directory"):
        resolve_target(AppState(), LOADED, loaded="anything")


def test_a_probe_needs_loaded_sources_before_it_starts(tmp_path: Path) -> None:
    state = AppState()
    target = TargetSplits("t", tmp_path / "train.conll", tmp_path / "test.conll")
    with pytest.raises(SimcoreError, match="choose at least one source"):
        start_probe(state, ProbeRequest((), target, ProbeCaps()))
    with pytest.raises(SimcoreError, match="not loaded any more: news"):
        start_probe(state, ProbeRequest(("news",), target, ProbeCaps()))
    assert not state.jobs
