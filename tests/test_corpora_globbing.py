"""--source-glob's file patterns: glob.glob's matches, each file once, bounded walks, no system locations."""

from __future__ import annotations

import glob
import os
import random
import time
from pathlib import Path

import pytest

from simcore.cli.main import main
from simcore.corpora import globbing
from simcore.corpora.globbing import glob_files
from simcore.distributed.shards import corpus_from_glob
from simcore.utils.errors import CorpusError

from .conftest import SAMPLE_DATA


def _tree(root: Path) -> Path:
    """Folders, hidden names, several suffixes; no links (so glob.glob is the reference)."""
    for rel in ("a/x.txt", "a/y.jsonl", "a/b/x.txt", "a/b/c/z.txt", "a/.hidden/x.txt", "a/b/.h.txt", "top.txt",
                "d/e/f/g/deep.txt", "d/[x].txt", ".dot/x.txt", "a/b/c/d.gz"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("w\n")
    return root


PARTS = ["*", "**", "a", "b", "*.txt", "x.txt", "?", "[ab]", "c", ".*", "*.gz", "e"]


def test_matches_are_globs_matches(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t")
    rng = random.Random(22)
    patterns = ["**/*.txt", "**", "a/**/x.txt", "*/*", "a/**/**/*.txt", "**/.*", "d/**/deep.txt", "a/b/c/*",
                "a/*/x.txt", "top.txt", "nothing/**"]
    patterns += ["/".join(rng.choice(PARTS) for _ in range(rng.randint(1, 4))) for _ in range(150)]
    for pattern in patterns:
        full = f"{root}/{pattern}"
        expected = sorted({Path(p) for p in glob.glob(full, recursive=True) if os.path.isfile(p)})  # once each
        assert glob_files(full, 1000) == expected, pattern


def test_a_link_loop_lists_each_file_once_and_stops(tmp_path: Path) -> None:
    root = tmp_path / "shards"
    (root / "part").mkdir(parents=True)
    (root / "part" / "s1.txt").write_text("a b c\n")
    (root / "part" / "s2.txt").write_text("d e f\n")
    (root / "part" / "loop").symlink_to("..")       # back to the parent: glob.glob lists each file 41 times
    (root / "again").symlink_to(root / "part" / "s1.txt")  # a second name of one file
    assert len(glob.glob(f"{root}/**/*.txt", recursive=True)) > 40
    started = time.perf_counter()
    files = glob_files(f"{root}/**/*.txt", 1000)
    assert time.perf_counter() - started < 5
    assert files == [root / "part" / "s1.txt", root / "part" / "s2.txt"]
    corpus = corpus_from_glob(f"{root}/**/*", name="shards")
    assert [f.name for f in corpus.files] == ["again", "s2.txt"]  # s1.txt once, under its first name in order


@pytest.mark.parametrize("pattern", ["/proc/**", "/**", "/sys/**/*", "/dev/*", "/*/x/**", "/proc/self/fd/*"])
def test_patterns_over_system_locations_are_refused_at_once(pattern: str) -> None:
    started = time.perf_counter()
    with pytest.raises(CorpusError, match="system location"):
        glob_files(pattern, 1000)
    assert time.perf_counter() - started < 1


def test_a_link_into_a_system_location_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("a\n")
    (tmp_path / "c" / "kernel").symlink_to("/proc")
    with pytest.raises(CorpusError, match="through the link .*kernel"):
        glob_files(f"{tmp_path}/c/**", 1000)
    with pytest.raises(CorpusError, match="system location .*kernel"):
        glob_files(f"{tmp_path}/c/kernel/*", 1000)


def test_wide_patterns_are_bounded(tmp_path: Path, monkeypatch) -> None:
    root = _tree(tmp_path / "t")
    with pytest.raises(CorpusError, match="more than 3 files"):
        glob_files(f"{root}/**/*.txt", 3)
    monkeypatch.setattr(globbing, "MAX_FOLDERS", 4)
    with pytest.raises(CorpusError, match="walks more than 4 folders"):
        glob_files(f"{root}/**/*.txt", 1000)


def test_bad_patterns(tmp_path: Path) -> None:
    for bad in ("", " ", "a\0b", None):
        with pytest.raises(CorpusError):
            glob_files(bad, 10)  # type: ignore[arg-type]
    assert glob_files(f"{tmp_path}/*/", 10) == []
    os.mkfifo(tmp_path / "pipe.txt")
    assert glob_files(f"{tmp_path}/*.txt", 10) == []  # a FIFO is never a corpus file


def test_cli_refuses_a_source_glob_over_proc(tmp_path: Path, capsys) -> None:
    started = time.perf_counter()
    assert main(["matrix", "--sources", str(SAMPLE_DATA / "sources"), "--targets", str(SAMPLE_DATA / "targets"),
                 "--measures", "tvc", "--quiet", "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "m.csv"),
                 "--source-glob", "kernel=/proc/**"]) == 2
    err = capsys.readouterr().err
    assert "system location /proc" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert time.perf_counter() - started < 10 and not (tmp_path / "m.csv").exists()
