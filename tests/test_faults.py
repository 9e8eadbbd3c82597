"""Injected faults: killed writers, concurrent builders, a failing lmplz, a full disk."""

import errno
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.utils.errors import StoreError
from simcore.utils.store import ArtefactStore

from .conftest import ROOT, SAMPLE_DATA

SLOW_WRITER = r"""
import sys, time
from simcore.utils.store import ArtefactStore
def build(out):
    with open(out / "big.bin", "wb") as f:
        for _ in range(1000):
            f.write(b"x" * 100000)
            f.flush()
            time.sleep(0.01)
    return {"complete": True}
ArtefactStore(sys.argv[1]).build("kind", "key", build)
"""


def test_a_writer_killed_mid_artefact_leaves_nothing_that_is_read(tmp_path):
    root = tmp_path / "store"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(root)], cwd=ROOT)
    deadline = time.time() + 30
    while time.time() < deadline and not list((root / "tmp").glob("kind-*/big.bin")):
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = ArtefactStore(root)
    assert list((root / "tmp").iterdir()), "the half-written directory is still there"
    assert store.get("kind", "key") is None
    rebuilt = store.build("kind", "key", lambda out: (out / "big.bin").write_bytes(b"y") and None)
    assert (rebuilt / "big.bin").read_bytes() == b"y"
    store.clear_tmp(older_than_s=0)
    assert not list((root / "tmp").iterdir())


def test_a_matrix_run_killed_mid_way_then_rerun_gives_the_clean_result(tmp_path):
    sources, targets = tmp_path / "s", tmp_path / "t"
    sources.mkdir()
    targets.mkdir()
    for name in ("news.txt", "clinical_notes.txt", "biomed_abstracts.txt"):
        (sources / name).write_bytes((SAMPLE_DATA / "sources" / name).read_bytes())
    (targets / "news_ner.conll").write_bytes((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    command = [sys.executable, "-m", "simcore", "matrix", "--sources", str(sources), "--targets", str(targets),
               "--measures", "tvc,ppl,jsd", "--quiet", "--out"]
    killed_cache, clean_cache = tmp_path / "killed", tmp_path / "clean"
    proc = subprocess.Popen([*command, str(tmp_path / "k.csv"), "--cache", str(killed_cache)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not list(killed_cache.glob("kenlm/*")):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    subprocess.run([*command, str(tmp_path / "after.csv"), "--cache", str(killed_cache)], cwd=ROOT, check=True)
    subprocess.run([*command, str(tmp_path / "clean.csv"), "--cache", str(clean_cache)], cwd=ROOT, check=True)
    after = pd.read_csv(tmp_path / "after.csv").sort_values(["source", "measure"]).reset_index(drop=True)
    clean = pd.read_csv(tmp_path / "clean.csv").sort_values(["source", "measure"]).reset_index(drop=True)
    pd.testing.assert_series_equal(after["value"], clean["value"], rtol=1e-9)


PREPARE = r"""
import sys
from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.utils.store import ArtefactStore
from simcore.measures.ppl import model_path
bench = Workbench(ArtefactStore(sys.argv[1]))
source = bench.source(Corpus.from_path(sys.argv[2]), 10**9, 1)[0]
print(model_path(source))
"""


def test_two_processes_preparing_the_same_source_share_one_model(tmp_path):
    root = tmp_path / "store"
    source = SAMPLE_DATA / "sources" / "clinical_notes.txt"
    procs = [subprocess.Popen([sys.executable, "-c", PREPARE, str(root), str(source)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    paths = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert paths[0] == paths[1] and Path(paths[0]).is_file()
    assert len(list(root.glob("kenlm/*"))) == 1 and len(list(root.glob("tokens/*"))) == 1


def test_a_failing_lmplz_disables_ppl_only(tmp_path, store, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "lmplz"
    fake.write_text("#!/bin/sh\necho 'lmplz: simulated crash' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    (bin_dir / "build_binary").symlink_to(ROOT / ".tools" / "kenlm" / "bin" / "build_binary")
    monkeypatch.setenv("SIMCORE_KENLM_BIN", str(bin_dir))
    table = Workbench(store).matrix([Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")],
                                    [Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")],
                                    ["ppl", "tvc", "jsd"]).set_index("measure")
    assert "simulated crash" in table.loc["ppl", "error"]
    assert table.loc["tvc", "value"] > 0 and table.loc["jsd", "value"] > 0


def test_a_full_disk_is_a_message(store):
    def build(out):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(StoreError, match="full"):
        store.build("kind", "key", build)
    assert store.get("kind", "key") is None


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs: a real full disk (needs the right to mount; skipped elsewhere)."""
    where = tmp_path / "tiny"
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    yield where
    subprocess.run(["umount", str(where)], capture_output=True)


def test_lmplz_running_out_of_disk_is_reported_as_disk_full(tmp_path, tiny_disk):
    from simcore.models.kenlm_tools import estimate
    from simcore.utils.errors import DiskFull

    text = tmp_path / "text.txt"
    words = (SAMPLE_DATA / "sources" / "news.txt").read_text().split()
    text.write_text("\n".join(" ".join(f"{w}{i % 997}" for w in words[:40]) for i in range(20000)))
    with pytest.raises(DiskFull, match="disk .* is full"):
        estimate(text, tiny_disk / "model.bin", 3, memory="100M")


def test_a_full_cache_disk_on_the_command_line_is_one_line(tmp_path, tiny_disk):
    result = subprocess.run([sys.executable, "-m", "simcore", "matrix", "--sources", str(SAMPLE_DATA / "sources"),
                             "--targets", str(SAMPLE_DATA / "targets"), "--out", str(tmp_path / "m.csv"),
                             "--measures", "tvc,ttr", "--cache", str(tiny_disk / "cache"), "--quiet"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "full" in result.stderr and result.stderr.count("\n") <= 2
