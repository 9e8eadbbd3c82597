import errno
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simcore.utils.errors import StoreError
from simcore.utils.store import MANIFEST, ArtefactStore

from .conftest import ROOT


def test_build_once_then_reuse(store):
    calls = []

    def build(out: Path):
        calls.append(1)
        (out / "data.txt").write_text("hello")
        return {"n": 1}

    p1 = store.build("kind", "k1", build)
    p2 = store.build("kind", "k1", build)
    assert p1 == p2 and len(calls) == 1
    assert (p1 / "data.txt").read_text() == "hello" and store.meta(p1) == {"n": 1}


def test_tampered_or_half_written_artefacts_are_not_read(store):
    p = store.build("kind", "k", lambda out: (out / "a.bin").write_bytes(b"1234") and None)
    (p / "a.bin").write_bytes(b"4321")
    assert store.get("kind", "k") is None
    half = store.path("kind", "k2")
    half.mkdir(parents=True)
    (half / "a.bin").write_bytes(b"x")
    assert store.get("kind", "k2") is None, "no manifest: never read"
    foreign = store.path("kind", "k3")
    foreign.mkdir(parents=True)
    (foreign / MANIFEST).write_text(json.dumps({"marker": "other", "kind": "kind", "key": "k3", "files": {}}))
    assert store.get("kind", "k3") is None


def test_a_copied_or_forged_artefact_is_not_read(tmp_path, store):
    """Only what this store signed is loaded: a valid-looking manifest from elsewhere is refused."""
    built = store.build("kind", "k", lambda out: (out / "a.bin").write_bytes(b"data") and None)
    other = ArtefactStore(tmp_path / "other")
    copy = other.path("kind", "k")
    copy.parent.mkdir(parents=True)
    shutil.copytree(built, copy)
    assert other.get("kind", "k") is None
    manifest = json.loads((built / MANIFEST).read_text())
    manifest["meta"] = {"evil": True}
    (built / MANIFEST).write_text(json.dumps(manifest))
    assert store.get("kind", "k") is None
    assert (store.root / "signing.key").stat().st_mode & 0o077 == 0


def test_failed_build_leaves_nothing(store):
    def build(out: Path):
        (out / "partial").write_text("x")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.build("kind", "k", build)
    assert store.get("kind", "k") is None
    assert list((store.root / "tmp").iterdir()) == []


def _slow_build(root: str, log: str) -> str:
    def build(out: Path):
        with open(log, "a") as f:
            f.write("built\n")
        time.sleep(0.5)
        (out / "x").write_text("done")

    return str(ArtefactStore(root).build("kind", "shared", build))


def test_two_processes_build_once(tmp_path):
    root, log = tmp_path / "store", tmp_path / "log.txt"
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        paths = pool.starmap(_slow_build, [(str(root), str(log)), (str(root), str(log))])
    assert paths[0] == paths[1]
    assert log.read_text().count("built") == 1


def test_unwritable_root_gives_a_message(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match="cannot use the cache directory"):
        ArtefactStore(blocker / "store")


def test_a_directory_that_is_not_a_store_is_refused(tmp_path):
    with pytest.raises(StoreError, match="not a simcore store"):
        ArtefactStore(Path("/"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="not a simcore store"):
        ArtefactStore(project)
    assert sorted(p.name for p in project.iterdir()) == ["notes.txt"], "nothing was written into it"
    (tmp_path / "empty").mkdir()
    store = ArtefactStore(tmp_path / "empty")
    store.put_json("cell", "k", {"v": 1})
    assert ArtefactStore(tmp_path / "empty").get_json("cell", "k") == {"v": 1}, "a store opens again"


KILLED_BUILDER = r"""
import sys, time
from simcore.utils.store import ArtefactStore, digest
def build(out):
    (out / "part.bin").write_bytes(b"x" * 1000)
    print("building", flush=True)
    time.sleep(60)
ArtefactStore(sys.argv[1]).build(sys.argv[2], digest("killed"), build)
"""


@pytest.mark.parametrize("kind", ["kind", "content-words"])  # a kind with a hyphen: wvv-vectors, tokens-part too
def test_a_dead_builders_tmp_folder_is_removed_on_the_next_open(tmp_path, kind):
    root = tmp_path / "store"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_BUILDER, str(root), kind], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "building"
    assert len(list((root / "tmp").iterdir())) == 1
    ArtefactStore(root)  # the builder is alive and holds its key's lock: its folder stays
    assert len(list((root / "tmp").iterdir())) == 1
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    ArtefactStore(root)
    assert list((root / "tmp").iterdir()) == []


def test_integrity_is_checked_over_the_whole_file(tmp_path):
    size = int(33.8 * 1024 * 1024)
    for offset in (1 << 20, 20 << 20, size - 10):
        store = ArtefactStore(tmp_path / f"store{offset}")
        path = store.build("kind", "k", lambda out: (out / "big.bin").write_bytes(b"\x01" * size) and None)
        assert store.get("kind", "k") == path
        with open(path / "big.bin", "r+b") as f:
            f.seek(offset)
            f.write(b"\x02")
        assert store.get("kind", "k") is None, f"a byte flipped at {offset:,} is found"


def test_a_read_only_store_that_lacks_a_result_says_so(tmp_path, monkeypatch):
    store = ArtefactStore(tmp_path / "store")
    store.put_json("cell", "built", {"v": 1})
    real_open = open

    def read_only_open(path, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", read_only_open)
    assert store.get_json("cell", "built") == {"v": 1}, "what is built is still read"
    with pytest.raises(StoreError, match="read-only"):
        store.put_json("cell", "missing", {"v": 2})
