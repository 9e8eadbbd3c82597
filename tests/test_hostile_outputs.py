"""No command writes over one of its own inputs: the same path, a symbolic link, a hard link, or a
file inside an input folder read as corpora is refused with one line before any work; outputs are
written whole, with the permissions a normal file gets."""

from __future__ import annotations

import contextlib
import io
import os
import stat
from pathlib import Path

import pytest

from simcore.cli import main as cli
from simcore.utils.errors import OutputError
from simcore.utils.output_paths import refuse_overwriting_inputs, write_text_atomic

from .conftest import SAMPLE_DATA

TABLE3 = SAMPLE_DATA / "results" / "dai2019_table3.csv"


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, err.getvalue()


def _link(kind: str, original: Path, link: Path) -> Path:
    if kind == "symlink":
        link.symlink_to(original)
    else:
        os.link(original, link)
    return link


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    sources, targets = tmp_path / "sources", tmp_path / "targets"
    sources.mkdir()
    targets.mkdir()
    (sources / "news.txt").write_bytes((SAMPLE_DATA / "sources" / "news.txt").read_bytes())
    (targets / "news_ner.conll").write_bytes((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    probe_target = tmp_path / "probe_target"
    probe_target.mkdir()
    for split in ("train", "test"):
        (probe_target / f"{split}.conll").write_bytes((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    matrix = tmp_path / "matrix.csv"
    matrix.write_bytes(TABLE3.read_bytes())
    return {"root": tmp_path, "sources": sources, "targets": targets, "matrix": matrix,
            "results": tmp_path / "results.csv", "probe_target": probe_target}


def _commands(w: dict[str, Path], out: str) -> dict[str, tuple[list[str], Path]]:
    """Each subcommand with ``out`` as its output, and the input ``out`` will be made to point at."""
    w["results"].write_bytes(TABLE3.read_bytes())
    results = ["--results", str(w["results"]), "--f1", "lm_f1", "--improvement", "lm_delta"]
    return {
        "rank": (["rank", "--matrix", str(w["matrix"]), "--out", out + ".csv"], w["matrix"]),
        "rank.html": (["rank", "--matrix", str(w["matrix"]), "--out", out + ".html"], w["matrix"]),
        "recommend": (["recommend", "--matrix", str(w["matrix"]), "--out", out + ".csv"], w["matrix"]),
        "agreement": (["agreement", "--matrix", str(w["matrix"]), "--measures", "ppl,tvc", "--out", out + ".csv"],
                      w["matrix"]),
        "correlate": (["correlate", "--matrix", str(w["matrix"]), *results, "--out", out + ".csv"], w["results"]),
        "regret": (["regret", "--matrix", str(w["matrix"]), *results, "--out", out + ".csv"], w["matrix"]),
        "matrix": (["matrix", "--sources", str(w["sources"]), "--targets", str(w["targets"]), "--measures", "ttr",
                    "--cache", str(w["root"] / "cache"), "--quiet", "--out", out + ".csv"],
                   w["targets"] / "news_ner.conll"),
        "select": (["select", "--pool", str(w["sources"] / "news.txt"), "--target", str(w["targets"] / "news_ner.conll"),
                    "--method", "ppl", "--top", "5", "--cache", str(w["root"] / "cache"), "--quiet",
                    "--out", out + ".txt"], w["sources"] / "news.txt"),
        "select --scores": (["select", "--pool", str(w["sources"] / "news.txt"),
                             "--target", str(w["targets"] / "news_ner.conll"), "--method", "ppl", "--top", "5",
                             "--cache", str(w["root"] / "cache"), "--quiet", "--out", str(w["root"] / "sel.txt"),
                             "--scores", out + ".csv"], w["targets"] / "news_ner.conll"),
        "probe": (["probe", "--sources", str(w["sources"]), "--target", str(w["probe_target"]),
                   "--cache", str(w["root"] / "cache"), "--quiet", "--out", out + ".csv"],
                  w["probe_target"] / "train.conll"),
    }


COMMANDS = ["rank", "rank.html", "recommend", "agreement", "correlate", "regret", "matrix", "select",
            "select --scores", "probe"]


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_linked_to_an_input_is_refused_and_the_input_kept(world, command, kind):
    out_stem = str(world["root"] / "elsewhere" / "out")
    argv, victim = _commands(world, out_stem)[command]
    out = Path(argv[argv.index("--scores" if command == "select --scores" else "--out") + 1])
    out.parent.mkdir(exist_ok=True)
    before = victim.read_bytes()
    _link(kind, victim, out)
    code, err = _run(argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simcore: error: ") and "input" in lines[0], err
    assert victim.read_bytes() == before
    assert not (world["root"] / "cache").exists() or command in ("matrix", "select", "select --scores", "probe")


@pytest.mark.parametrize("command", ["rank", "correlate", "matrix", "select", "probe"])
def test_an_output_naming_the_input_itself_is_refused(world, command):
    argv, victim = _commands(world, "unused")[command]
    flag = "--out"
    argv[argv.index(flag) + 1] = str(victim)
    if command == "rank":  # the matrix under a name with an accepted suffix
        assert victim.suffix == ".csv"
    before = victim.read_bytes() if victim.is_file() else None
    code, err = _run(argv)
    assert code == 2 and "simcore: error: " in err, err
    if before is not None:
        assert victim.read_bytes() == before


def test_an_output_inside_an_input_folder_is_refused(world):
    code, err = _run(["matrix", "--sources", str(world["sources"]), "--targets", str(world["targets"]),
                      "--measures", "ttr", "--cache", str(world["root"] / "cache"), "--quiet",
                      "--out", str(world["sources"] / "m.csv")])
    assert code == 2 and "inside the input folder --sources" in err, err
    assert not (world["sources"] / "m.csv").exists()


def test_a_folder_reached_through_a_link_is_caught(tmp_path):
    data = tmp_path / "data"
    (data / "shard").mkdir(parents=True)
    (data / "shard" / "a.txt").write_text("words\n")
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "crawl").symlink_to(data / "shard")
    with pytest.raises(OutputError, match="input folder"):
        refuse_overwriting_inputs({"--out": data / "shard" / "m.csv"}, {"--sources": sources})
    os.link(data / "shard" / "a.txt", tmp_path / "hard.csv")
    with pytest.raises(OutputError, match="input folder"):
        refuse_overwriting_inputs({"--out": tmp_path / "hard.csv"}, {"--sources": sources})
    with pytest.raises(OutputError, match="--source-glob"):
        refuse_overwriting_inputs({"--out": data / "shard" / "b.txt"}, {}, {"--source-glob": [f"c={data}/shard/*.txt"]})
    with pytest.raises(OutputError, match="name the same file"):
        refuse_overwriting_inputs({"--out": tmp_path / "x.csv", "--scores": tmp_path / "x.csv"}, {})
    refuse_overwriting_inputs({"--out": tmp_path / "new.csv"}, {"--sources": sources, "--matrix": None})


def test_outputs_are_written_whole_with_normal_permissions(tmp_path):
    old = os.umask(0o027)
    try:
        path = tmp_path / "out.csv"
        write_text_atomic(path, "a,b\n")
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
    finally:
        os.umask(old)
    write_text_atomic(path, "c\n")
    assert path.read_text() == "c\n" and stat.S_IMODE(path.stat().st_mode) == 0o666 & ~old
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]  # no temporary file left


def _glob_world(tmp_path: Path) -> tuple[Path, Path, Path, bytes]:
    """A folder of CSV shards, a symbolic link to it, and a target folder."""
    shards = tmp_path / "shards"
    shards.mkdir()
    shard = shards / "shard.csv"
    shard.write_text("text\n" + "".join(f"review number {i} was fine .\n" for i in range(200)), encoding="utf-8")
    (tmp_path / "link").symlink_to(shards)
    targets = tmp_path / "targets"
    targets.mkdir()
    (targets / "news_ner.conll").write_bytes((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "news.txt").write_bytes((SAMPLE_DATA / "sources" / "news.txt").read_bytes())
    return sources, shard, targets, shard.read_bytes()


@pytest.mark.parametrize("form", ["star through a link", "double star", "folder wildcard reaching the link",
                                  "character class through a link"])
def test_an_output_matched_by_a_source_glob_is_refused_and_the_shard_kept(tmp_path, form):
    sources, shard, targets, before = _glob_world(tmp_path)
    pattern = {"star through a link": f"{tmp_path}/link/*.csv",
               "double star": f"{tmp_path}/shards/**/*.csv",  # ** matching no folder
               "folder wildcard reaching the link": f"{tmp_path}/l*/shard.csv",
               "character class through a link": f"{tmp_path}/link/[s]hard.csv"}[form]
    code, err = _run(["matrix", "--sources", str(sources), "--source-glob", f"g={pattern}", "--targets", str(targets), "--measures", "ttr",
                      "--cache", str(tmp_path / "cache"), "--quiet", "--out", str(shard)])
    assert shard.read_bytes() == before
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simcore: error: --out ") and "--source-glob" in lines[0], err
    assert not (tmp_path / "cache").exists()  # refused before any work


def test_an_output_the_glob_does_not_match_is_written(tmp_path):
    sources, shard, targets, before = _glob_world(tmp_path)
    out = tmp_path / "m.csv"
    code, err = _run(["matrix", "--sources", str(sources), "--source-glob", f"g={tmp_path}/link/*.csv", "--targets", str(targets),
                      "--measures", "ttr", "--cache", str(tmp_path / "cache"), "--quiet", "--out", str(out)])
    assert code == 0, err
    assert shard.read_bytes() == before and "g" in out.read_text()
