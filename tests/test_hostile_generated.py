"""A hostile-input generator: over a thousand generated command lines and library calls, fixed seed.

Every command runs in-process through ``simcore.cli.main`` (a subprocess per case would take far
too long); the few inputs that could hang a process (a FIFO with no writer, an endless device)
also run as subprocesses under a timeout. Faults are injected on the way: a full disk when the
output is written or an artefact is stored, an unreadable file, memory running out.

What is asserted, for every case: no traceback, exit status 0 or 2 (never the CLI's last-resort
"internal error"), no hang, and nothing lost (a run that ends 0, or that lists corpora it could not
read, has written its output). Library calls either return or raise a SimcoreError kind.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import inspect
import io
import os
import random
import string
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from simcore.cli import arguments as cli_options
from simcore.cli import main as cli
from simcore.utils.errors import SimcoreError

from .conftest import ROOT, SAMPLE_DATA

SEED = 20261122
N_CLI = 1050
N_LIBRARY = 1200

NAMES = ["news", "nan", "None", "NA", "null", "", " ", "-2+3", "=1+1", "'+1", "@sum", "<script>x</script>",
         "a|b", "名前", "x" * 300, "\t", "TRUE", "0", "1e5"]
NUMBERS = ["1", "-2.5", "0", "", "nan", "NaN", "inf", "-inf", "1e400", "x", "9" * 400, "None", "0.3", "1e-300"]
OPTIONS = ['{"seed": 13}', "not json", "[1, 2]", "[" * 5000, '{"a": ' * 3000, "null", "", "7", '"text"']
MEASURES = ["tvc", "ppl", "wvv", "jsd", "ttr", "tvcc", "", "nan", "TVC", "bogus", " ppl "]
HOSTILE_TEXT = ["", " ", "0", "-1", "1e400", "nan", "inf", "-inf", "1e30", "3.5", "abc", "9" * 40, "1e6",
                "名前", "--", "../x", "/", "/dev/zero", "/dev/null", "-1e3", "0x10", "1_000", " 2 "]


def _write_csv(path: Path, rows: list[list[str]]) -> None:
    buffer = io.StringIO()
    import csv

    csv.writer(buffer).writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")


TAME_SOURCES = ["s1", "nan", "-2+3", "<b>x</b>"]
TAME_TARGETS = ["t1", "None", "", "=t"]


def _matrix_csv(rng: random.Random, path: Path, tame: bool = False) -> Path:
    """A generated similarity table: sometimes well formed, often not."""
    if tame:
        rows = [["source", "target", "measure", "value", "direction", "error", "options"]]
        for t in TAME_TARGETS:
            for s in TAME_SOURCES:
                for m, d in (("tvc", "1"), ("ppl", "-1"), ("wvv", "-1"), ("ttr", "0")):
                    value = str(rng.uniform(0, 1) if m == "ttr" else rng.uniform(1, 100))
                    rows.append([s, t, m, value, d, "", rng.choice(OPTIONS)])
        if rng.random() < 0.3:  # one bad cell: refused with a message naming it (test_hostile_matrix_columns)
            rng.choice(rows[1:])[3] = rng.choice(NUMBERS)
        _write_csv(path, rows)
        return path
    kind = rng.random()
    if kind < 0.05:
        path.write_bytes(rng.choice([b"", b"\x00\x01binary\xff" * 50, b"\xef\xbb\xbf", b"\n\n\n",
                                     gzip.compress(b"source,target\n")]))
        return path
    if kind < 0.15:  # a wide table like the paper's Table 3
        columns = ["target", "source", *rng.sample(["ppl", "wvv", "tvc", "tvcc", "lm_f1", "junk"], rng.randint(0, 4))]
    else:
        columns = ["source", "target", "measure", "value", "direction", "error", "options"]
        for _ in range(rng.randint(0, 2)):
            columns.remove(rng.choice(columns))
        if rng.random() < 0.1:
            columns.append(rng.choice(columns + ["extra"]))
    rows = [columns]
    sources = rng.sample(NAMES, rng.randint(1, 4))
    targets = rng.sample(NAMES, rng.randint(1, 3))
    measures = rng.sample(MEASURES, rng.randint(1, 4))
    for t in targets:
        for s in sources:
            for m in measures:
                if rng.random() < 0.1:
                    continue
                cell = {"source": s, "target": t, "measure": m, "value": str(rng.uniform(-5, 500)),
                        "direction": rng.choice(["1", "-1", "0", "", "x"]), "error": rng.choice(["", "boom"]),
                        "options": rng.choice(OPTIONS), "extra": "e"}
                if rng.random() < 0.15:
                    cell["value"] = rng.choice(NUMBERS)
                row = [cell.get(c, str(rng.uniform(0, 100)) if rng.random() < 0.9 else rng.choice(NUMBERS))
                       for c in columns]
                rows.append(row)
    if rng.random() < 0.05:
        rows = rows[:1]  # header only
    _write_csv(path, rows)
    return path


def _results_csv(rng: random.Random, path: Path, tame: bool = False) -> Path:
    if tame:
        rows = [["target", "source", "f1", "baseline"]]
        rows += [[t, s, rng.choice(NUMBERS) if rng.random() < 0.05 else str(rng.uniform(40, 90)), "50"]
                 for t in TAME_TARGETS for s in TAME_SOURCES]
        _write_csv(path, rows)
        return path
    if rng.random() < 0.05:
        path.write_bytes(rng.choice([b"", b"\xff\xfe\x00junk", b"target\n"]))
        return path
    columns = ["target", "source", "f1", "baseline", "lm_delta"]
    if rng.random() < 0.2:
        columns.remove(rng.choice(columns))
    rows = [columns]
    for t in rng.sample(NAMES, rng.randint(1, 3)):
        for s in rng.sample(NAMES, rng.randint(1, 4)):
            values = {"target": t, "source": s, "f1": str(rng.uniform(40, 90)), "baseline": "50",
                      "lm_delta": str(rng.uniform(-3, 3))}
            if rng.random() < 0.15:
                values[rng.choice(["f1", "baseline", "lm_delta"])] = rng.choice(NUMBERS)
            rows.append([values[c] for c in columns])
    _write_csv(path, rows)
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Any]:
    """Corpus folders (good, quirky and broken entries), a FIFO, a link loop, a cache."""
    root = tmp_path_factory.mktemp("hostile")
    sources, targets, broken = root / "sources", root / "targets", root / "broken_targets"
    for d in (sources, targets, broken):
        d.mkdir()
    for name in ("news.txt", "tweets.jsonl"):
        (sources / name).write_bytes((SAMPLE_DATA / "sources" / name).read_bytes())
    news_ner = (SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes()
    (targets / "news_ner.conll").write_bytes(news_ner)
    (targets / "quirky.conll").write_bytes(b"-DOCSTART-\tO\n\nEU\tB-ORG\n \tO\n\tO\nB-PER\nrejects NN\tO\n\t\n"
                                           b"German\tB-MISC\n\xe2\x80\x8b\tO\ncall\tO\n\n")
    (broken / "alpha.conll").write_bytes(news_ner)
    (broken / "beta.conll").write_bytes(news_ner)  # equal bytes: must stay two targets
    (broken / "nan.conll").write_bytes((SAMPLE_DATA / "targets" / "lab_protocol_ner.conll").read_bytes())
    (broken / "empty.conll").write_bytes(b"")
    (broken / "binary.conll").write_bytes(os.urandom(2048))
    (broken / "surrogate.jsonl").write_text('{"text": "a \\ud800 b"}\n{"text": "fine words"}\n')
    (broken / "deep.jsonl").write_text("[" * 100_000 + "\n")
    (broken / "digits.jsonl").write_text('{"text": "x", "n": ' + "9" * 5000 + "}\n")
    os.mkfifo(broken / "fifo.conll")
    (broken / "loop").symlink_to(broken / "loop")
    fifo = root / "fifo.csv"
    os.mkfifo(fifo)
    folder = root / "a_folder"
    folder.mkdir()
    return {"root": root, "sources": sources, "targets": targets, "broken": broken, "fifo": fifo,
            "folder": folder, "cache": root / "cache", "counter": Counter()}


def _path_choice(rng: random.Random, world: dict[str, Any], good: Path) -> str:
    if rng.random() < 0.75:
        return str(good)
    return rng.choice([str(world["fifo"]), "/dev/zero", "/dev/null", str(world["folder"]), str(world["root"] / "nope"),
                       "", " ", str(SAMPLE_DATA / "results" / "dai2019_table3.csv"), str(world["broken"] / "loop"),
                       str(world["broken"] / "binary.conll")])


def _out_choice(rng: random.Random, world: dict[str, Any], case: int, suffix: str) -> str:
    if rng.random() < 0.8:
        return str(world["root"] / "out" / f"c{case}" / f"r{suffix}")
    return rng.choice([str(world["folder"]), "", str(world["root"] / "missing" / "deeper" / f"x{case}{suffix}"),
                       str(world["fifo"]), "/dev/full", str(world["root"] / f"x{case}.xlsx"),
                       str(world["broken"] / "binary.conll" / "under_a_file.csv")])


def _option(rng: random.Random, good: str, p_hostile: float = 0.25) -> str:
    return rng.choice(HOSTILE_TEXT) if rng.random() < p_hostile else good


def _path_choice_tame(rng: random.Random, world: dict[str, Any], good: Path, tame: bool) -> str:
    return str(good) if tame and rng.random() < 0.97 else _path_choice(rng, world, good)


def _argv(rng: random.Random, world: dict[str, Any], case: int) -> tuple[str, list[str], str | None]:
    command = rng.choices(["matrix", "rank", "agreement", "correlate", "regret", "select"],
                          weights=[12, 26, 18, 18, 18, 8])[0]
    tmp = world["root"] / "inputs"
    tmp.mkdir(exist_ok=True)
    out: str | None = None
    if command == "matrix":
        targets = world["broken"] if rng.random() < 0.3 else world["targets"]
        out = _out_choice(rng, world, case, ".csv")
        argv = ["matrix", "--sources", _path_choice(rng, world, world["sources"]),
                "--targets", _path_choice(rng, world, targets), "--out", out,
                "--measures", _option(rng, rng.choice(["tvc", "tvc,ttr", "jsd,tvc", "ttr"]), 0.15),
                "--cache", str(world["cache"]) if rng.random() < 0.95 else rng.choice(["/", str(world["folder"]),
                                                                                        "/dev/null", ""]),
                "--quiet"]
        for flag, good in (("--samples", "1"), ("--sample-tokens", "2000"), ("--ppl-order", "3"), ("--seed", "7"),
                           ("--workers", "1"), ("--encoding", "utf-8"), ("--text-field", "text")):
            if rng.random() < 0.3:
                argv += [flag, _option(rng, good, 0.6) if flag != "--encoding" else
                         rng.choice(["utf-8", "latin-1", "nope", "rot13", "", "utf-16"])]
    elif command == "select":
        out = _out_choice(rng, world, case, rng.choice([".txt.gz", ".txt", ".csv"]))
        argv = ["select", "--pool", _path_choice(rng, world, world["sources"] / "news.txt"),
                "--target", _path_choice(rng, world, world["targets"] / "news_ner.conll"),
                "--method", rng.choice(["ppl", "xent", "bogus", ""]), "--out", out, "--cache", str(world["cache"]),
                "--quiet", "--order", _option(rng, "2", 0.5)]
        amount = rng.random()
        if amount < 0.45:
            argv += ["--top", _option(rng, "50", 0.6)]
        elif amount < 0.9:
            argv += ["--fraction", rng.choice(["0.1", "10%", "0", "1.5", "150%", "nan", "inf", "-0.2", "abc", ""])]
        for flag, good in (("--pool-sample", "500"), ("--seed", "3"), ("--workers", "1"), ("--target-tokens", "300")):
            if rng.random() < 0.3:
                argv += [flag, _option(rng, good, 0.6)]
        if rng.random() < 0.8:
            argv[argv.index("--method") + 1] = "bogus"  # keep real selections rare: they train models
    else:
        tame = rng.random() < 0.45
        matrix = _matrix_csv(rng, tmp / f"m{case}.csv", tame)
        argv = [command, "--matrix", _path_choice_tame(rng, world, matrix, tame)]
        if command in ("correlate", "regret"):
            argv += ["--results", _path_choice_tame(rng, world, _results_csv(rng, tmp / f"r{case}.csv", tame), tame)]
            if rng.random() < 0.3 and not tame:
                argv += ["--f1", rng.choice(["f1", "lm_f1", "", "nope", "F1"])]
            if rng.random() < 0.2 and not tame:
                argv += ["--improvement", rng.choice(["lm_delta", "nope", ""])]
            if command == "correlate" and rng.random() < 0.5:
                argv.append("--per-target")
        if rng.random() < 0.5:
            choices = ["tvc", "ppl,tvc", "tvc,ppl,wvv"] if tame else ["tvc", "ppl,tvc", "ttr", "bogus", "", "ppl"]
            argv += ["--measures", rng.choice(choices)]
        if rng.random() < 0.6:
            suffix = rng.choice([".csv", ".md", ".html", ".json"]) if command == "rank" else ".csv"
            out = str(world["root"] / "out" / f"c{case}" / f"r{suffix}") if tame else _out_choice(rng, world, case, suffix)
            argv += ["--out", out]
    if rng.random() < 0.03:
        argv.insert(1, rng.choice(["--bogus", "-x", "--out"]))
    if rng.random() < 0.02:
        argv = argv[: rng.randint(0, len(argv))]
    return command, argv, out


class _Fault:
    """One injected fault for a case: a full disk when writing, an unreadable file, no memory."""

    KINDS = ("none",) * 12 + ("disk_full_out", "disk_full_store", "unreadable", "no_memory")

    def __init__(self, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.kind, self.mp = kind, monkeypatch

    def __enter__(self) -> _Fault:
        if self.kind == "disk_full_out":
            def full(*args: Any, **kwargs: Any) -> None:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.mp.setattr(cli_options.os, "replace", full)
        elif self.kind == "disk_full_store":
            from simcore.utils.store import ArtefactStore

            def full_manifest(*args: Any, **kwargs: Any) -> None:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.mp.setattr(ArtefactStore, "_write_manifest", full_manifest)
        elif self.kind == "unreadable":
            def denied(*args: Any, **kwargs: Any) -> None:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(args[0]) if args else "")
            self.mp.setattr(pd, "read_csv", denied)
        elif self.kind == "no_memory":
            from simcore.matrix.workbench import Workbench

            def no_memory(*args: Any, **kwargs: Any) -> None:
                raise MemoryError
            self.mp.setattr(Workbench, "matrix", no_memory)
            self.mp.setattr("simcore.analysis.ranking.rank_sources", no_memory)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.mp.undo()


def _run_in_process(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, err.getvalue()


def test_generated_command_lines(world, monkeypatch):
    rng = random.Random(SEED)
    monkeypatch.setenv("SIMCORE_CACHE", str(world["cache"]))
    monkeypatch.chdir(world["root"])
    outcomes: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    problems = []
    for case in range(N_CLI):
        command, argv, out = _argv(rng, world, case)
        out = out if out is not None and out in argv else None
        kind = rng.choice(_Fault.KINDS)
        with _Fault(kind, pytest.MonkeyPatch()):
            try:
                code, err = _run_in_process(argv)
            except BaseException as exc:  # noqa: BLE001  anything escaping main is a failure of this test
                problems.append((argv, kind, f"escaped main: {type(exc).__name__}: {exc}"[:300]))
                continue
        faults[kind] += kind != "none"
        outcomes[f"{command} exit {code}"] += 1
        if code == 2 and kind == "none":
            reasons[command + ": " + " ".join(err.strip().splitlines()[-1].split()[2:6])] += 1
        written = out is not None and Path(out).is_file() and Path(out).stat().st_size > 0
        if code not in (0, 2):
            problems.append((argv, kind, f"exit {code}: {err[-300:]}"))
        elif "Traceback" in err or "internal error" in err:
            problems.append((argv, kind, err[-400:]))
        elif code == 2 and not [line for line in err.splitlines() if line.startswith("simcore: error: ")]:
            problems.append((argv, kind, f"exit 2 without a one-line reason: {err[-300:]}"))
        elif code == 0 and out is not None and not written:
            problems.append((argv, kind, "exit 0 but the output was not written"))
        elif code == 2 and "could not be read, their cells are empty" in err and not written:
            problems.append((argv, kind, "corpora failed and the table of the others was not written"))
    world["counter"].update(outcomes)
    print(f"\n{N_CLI} generated command lines; outcomes {dict(sorted(outcomes.items()))}; "
          f"faults injected {dict(faults)} ({sum(faults.values())} in all)")
    print("most frequent refusals:", reasons.most_common(12))
    assert not problems, f"{len(problems)} cases failed, e.g. {problems[:3]}"
    assert outcomes.total() == N_CLI and sum(v for k, v in outcomes.items() if k.endswith("exit 0")) > 100


@pytest.mark.parametrize("argv", [
    ["rank", "--matrix", "/dev/zero"],
    ["rank", "--matrix", "{fifo}"],
    ["agreement", "--matrix", "/dev/stdin"],
    ["correlate", "--matrix", "{fifo}", "--results", "/dev/zero"],
    ["matrix", "--sources", "{broken}", "--targets", "{fifo_dir}", "--out", "{root}/fifo_run/m.csv",
     "--measures", "tvc", "--cache", "{cache}", "--quiet"],
    ["select", "--pool", "{fifo}", "--target", "/dev/zero", "--method", "ppl", "--top", "5", "--out", "{root}/s.txt"],
])
def test_inputs_that_could_hang_are_refused_or_bounded(world, argv):
    fifo_dir = world["root"] / "fifo_dir"
    fifo_dir.mkdir(exist_ok=True)
    if not (fifo_dir / "t.conll").exists():
        os.mkfifo(fifo_dir / "t.conll")
        (fifo_dir / "good.conll").write_bytes((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    values = {"fifo": world["fifo"], "broken": world["sources"], "fifo_dir": fifo_dir, "root": world["root"],
              "cache": world["cache"]}
    argv = [a.format(**values) for a in argv]
    with subprocess.Popen([sys.executable, "-m", "simcore", *argv], cwd=ROOT, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            _, err = proc.communicate(timeout=120)  # stdin stays open: an endless stream for /dev/stdin
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"hung: {argv}")
    assert proc.returncode == 2 and "Traceback" not in err and "simcore: error: " in err, err


# ---------------------------------------------------------------- library calls


def _values(world: dict[str, Any], store: Any, corpora: dict[str, Any]) -> list[Any]:
    from simcore.analysis.correlation import read_results
    from simcore.analysis.tables import read_matrix

    long = read_matrix(SAMPLE_DATA / "results" / "dai2019_table3.csv")
    results = read_results(SAMPLE_DATA / "results" / "dai2019_table3.csv", f1="lm_f1", improvement="lm_delta")
    odd = long.copy()
    odd.loc[::3, "target"] = np.nan
    odd["value"] = odd["value"].astype(object)
    odd.loc[::4, "value"] = "x"
    dup = pd.concat([long[["source", "target"]], long[["source"]]], axis=1)
    return [
        None, 0, -1, 1.5, float("nan"), float("inf"), True, "", "x", "tvc", "jsd,tvc", b"x", [], [None], ["tvc"],
        ["x", 1], {}, {"a": 1}, object(), Path("/"), Path("/dev/zero"), world["fifo"], world["folder"],
        world["root"] / "nope", str(SAMPLE_DATA / "results" / "dai2019_table3.csv"), world["broken"],
        world["targets"], pd.DataFrame(), pd.DataFrame({"a": [1]}), long, long.head(0), long[["source", "target"]],
        odd, dup, long.assign(measure=None), results, results.assign(f1=None), results.drop(columns=["f1"]),
        np.array([]), np.array([[1, 2], [3, 4]]), np.zeros((2, 2)), np.ones(3), np.array([["a", "b"]]),
        [[1, 2], [2, 1]], store, corpora["good"], corpora["unreadable"], [corpora["good"]],
        [corpora["good"], corpora["unreadable"]], [corpora["good"], corpora["good"]], pd.Series([1, 2]),
    ]


def test_generated_library_calls(world, tmp_path, monkeypatch):
    import simcore
    from simcore import analysis

    monkeypatch.setenv("SIMCORE_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.chdir(tmp_path)
    store = simcore.ArtefactStore(tmp_path / "store")
    corpora = {"good": simcore.Corpus.from_path(world["targets"] / "news_ner.conll"),
               "unreadable": simcore.Corpus.unreadable("gone", world["root"] / "gone", "gone: no such file")}
    bench = simcore.Workbench(store)
    pool = _values(world, store, corpora)
    functions = {
        "Corpus": simcore.Corpus, "Corpus.from_path": simcore.Corpus.from_path, "corpora_in": simcore.corpora_in,
        "ArtefactStore": simcore.ArtefactStore, "MeasureOptions": simcore.MeasureOptions,
        "TokenizerOptions": simcore.TokenizerOptions, "Workbench": simcore.Workbench,
        "Workbench.matrix": bench.matrix, "Workbench.tokenize": bench.tokenize, "Workbench.target": bench.target,
        "Workbench.source": bench.source, "Workbench.default_sample_tokens": bench.default_sample_tokens,
        "Workbench.cell": bench.cell, "recommend": simcore.recommend,
        "recommendation_table": simcore.recommendation_table, "pairwise_table": simcore.pairwise_table,
        **{f"analysis.{name}": getattr(analysis, name) for name in analysis.__all__ if name != "AgreementResult"},
    }
    keywords = {"MeasureOptions": ["ppl_order", "seed", "wvv_workers", "ppl_memory", "tvcc_pos", "jsd_max_n"],
                "TokenizerOptions": ["lowercase"], "Corpus.from_path": ["name", "fmt", "encoding", "text_field"],
                "Workbench.matrix": ["samples", "sample_tokens", "measures"], "analysis.read_results": ["f1", "bogus"],
                "analysis.correlate": ["per_target", "measures"], "Corpus": ["fmt", "max_bytes", "encoding"]}
    rng = random.Random(SEED + 1)
    names = sorted(functions)
    outcomes: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    wrong = []
    for _ in range(N_LIBRARY):
        name = rng.choice(names)
        signature = inspect.signature(functions[name])
        while True:  # any values, in a call the signature accepts (a wrong arity is Python's own TypeError)
            args = [rng.choice(pool) for _ in range(rng.randint(0, 3))]
            kwargs = {k: rng.choice(pool) for k in keywords.get(name, []) if rng.random() < 0.3}
            try:
                signature.bind(*args, **kwargs)
                break
            except TypeError:
                continue
        if name == "Workbench.matrix" and len(args) < 3 and "measures" not in kwargs:
            kwargs["measures"] = rng.choice(["tvc", ["ttr"], "jsd", "bogus", 3])  # not all six: spaCy is slow
        if name == "Workbench.matrix" and rng.random() < 0.5:  # cheap measures on real corpora too
            args = [[corpora["good"]], rng.choice([[corpora["good"]], [corpora["good"], corpora["unreadable"]]]),
                    rng.choice(["tvc", ["ttr"], "jsd", None, "bogus"])]
            kwargs.pop("measures", None)
        started = time.perf_counter()
        try:
            functions[name](*args, **kwargs)
        except SimcoreError:
            outcomes["SimcoreError"] += 1
        except Exception as exc:  # noqa: BLE001
            outcomes[type(exc).__name__] += 1
            wrong.append(f"{name}({', '.join(type(a).__name__ for a in args)}; {sorted(kwargs)}): "
                         f"{type(exc).__name__}: {str(exc)[:120]}")
        else:
            outcomes["returned"] += 1
        seconds[name] += time.perf_counter() - started
    print(f"slowest: {seconds.most_common(4)}")
    print(f"\n{N_LIBRARY} generated library calls over {len(functions)} functions; outcomes {dict(outcomes)}")
    assert not wrong, f"{len(wrong)} calls raised something else than SimcoreError, e.g.\n" + "\n".join(wrong[:8])
    assert outcomes["returned"] > 50 and outcomes["SimcoreError"] > 300
    assert not (Path("/") / "signing.key").exists() and not (Path("/") / "tmp" / "locks").exists()


# ---- shapes of the third round: deep JSON, long lines, Parquet row groups, workspace zips ----------------

N_SHAPES = 160


def _deep(rng: random.Random) -> str:
    depth = rng.choice([10, 900, 5_000, 200_000])
    return rng.choice(["[" * depth + "]" * depth, '{"a": ' * depth + "1" + "}" * depth, "[" * depth])


def _deep_json_case(rng: random.Random, d: Path) -> Any:
    from simcore.analysis.tables import read_matrix
    from simcore.corpora.corpus import Corpus

    where = rng.choice(["ladder", "jsonl", "dataset_info"])
    if where == "ladder":
        cell = _deep(rng).replace('"', '""')
        (d / "m.csv").write_text(f'source,target,measure,value,ladder\nnews,t,tvc,0.5,"{cell}"\n', encoding="utf-8")
        return read_matrix(d / "m.csv")
    if where == "jsonl":
        (d / "c.jsonl").write_text('{"text": "fine words here"}\n' + _deep(rng) + "\n", encoding="utf-8")
        return list(Corpus.from_path(d / "c.jsonl").units())
    import pyarrow as pa
    import pyarrow.parquet as pq

    (d / "hub").mkdir()
    pq.write_table(pa.table({"tokens": [["EU", "rejects"]], "ner_tags": [[1, 0]]}), d / "hub" / "test.parquet")
    (d / "hub" / "dataset_info.json").write_text('{"features": ' + _deep(rng) + "}", encoding="utf-8")
    return list(Corpus.from_path(d / "hub").tagged_sentences())


def _long_lines_case(rng: random.Random, d: Path) -> None:
    from simcore.corpora.corpus import Corpus
    from simcore.corpora.tokenize import TokenizerOptions
    from simcore.selection import pool as pool_module

    lines = []
    for _ in range(rng.randint(1, 6)):
        size = rng.choice([20, 900, 99_999, 100_001, 150_000, 260_000])
        word = rng.choice(["ab", "word", "x" * 120_000])  # a word longer than a unit must be cut inside
        lines.append(" ".join([word] * max(1, size // (len(word) + 1)))[:size] or "w")
    (d / "pool.dat").write_text("\n".join(lines) + "\n", encoding="utf-8")
    pool = Corpus.from_path(d / "pool.dat")
    where = pool_module.PoolPosition()
    batches = list(pool_module.pool_batches(pool, TokenizerOptions(), rng.choice([1, 7, 2000]), where))
    texts = [t for b in batches for t in b.texts]
    assert max(map(len, texts)) <= pool_module.MAX_UNIT_CHARS
    assert "".join(" ".join(texts).split()) == "".join(" ".join(pool_module.unit_text(u) for u in pool.units()).split())
    assert all(sum(map(len, b.texts)) < pool_module.BATCH_CHARS + pool_module.MAX_UNIT_CHARS for b in batches)
    assert where.long_lines == sum(len(pool_module.unit_text(u)) > pool_module.MAX_UNIT_CHARS for u in pool.units())


def _parquet_case(rng: random.Random, d: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from simcore.corpora.corpus import Corpus

    texts = [" ".join([f"w{i}"] * rng.choice([1, 50, 20_000])) for i in range(rng.randint(1, 40))]
    if rng.random() < 0.4:  # fourth round: one value repeated through a dictionary (a bomb in small)
        texts = [texts[0]] * rng.randint(1, 300)
    name = rng.choice(["c.parquet", "c.arrow"])
    if name == "c.parquet":
        pq.write_table(pa.table({"text": texts}), d / name, row_group_size=rng.choice([1, 3, 1000]),
                       compression=rng.choice(["zstd", "snappy", "none"]), use_dictionary=rng.random() < 0.5)
    else:
        table = pa.table({"text": pa.array(texts).dictionary_encode() if rng.random() < 0.7 else texts})
        with pa.OSFile(str(d / name), "wb") as sink, (pa.ipc.new_stream if rng.random() < 0.5 else pa.ipc.new_file)(
                sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=rng.choice([1, 7, 1000]))
    limit = rng.choice([None, 1_000, 100_000, 10**9])
    units = list(Corpus.from_path(d / name, max_decompressed_bytes=limit).units())
    assert " ".join(units).split() == " ".join(texts).split()  # read whole, or refused (SimcoreError)


_USER_CHARS = string.ascii_letters + string.digits + "/@:%!$'()*+,;=~-._?#&\"<>`"
_QUERY_CHARS = string.ascii_letters + string.digits + "/%+=-._~:@!$'()*,;"
_SECRET_NAMES = ["pass", "password", "secret", "sig", "signature", "key", "token", "X-Amz-Signature",
                 "X-Amz-Credential", "apikey", "api_key", "access_token", "Pwd", "SAS"]


def _secret_url_case(rng: random.Random, d: Path) -> None:
    """A URL with a secret in its user-info (any printable character) or in a secret-named query value,
    inside a message: the redacted message holds no secret, and the host and path are still there."""
    from simcore.corpora.remote import RemoteFile
    from simcore.utils.errors import CorpusError
    from simcore.utils.redact import redact

    secret = "ZQ" + "".join(rng.choice(_USER_CHARS) for _ in range(rng.randint(4, 30)))
    scheme = rng.choice(["s3", "http", "https", "gs", "az"])
    where = rng.choice(["user", "password", "query"])
    if where == "user":  # a bare user name cannot hold '/', '?' or '#' (that would be a path with an '@')
        secret = "ZQ" + "".join(rng.choice(_USER_CHARS.translate({ord(c): None for c in "/?#"}))
                                for _ in range(rng.randint(4, 30)))
    if where == "query":
        secret = "ZQ" + "".join(rng.choice(_QUERY_CHARS) for _ in range(rng.randint(4, 30)))
        url = f"{scheme}://host.example/data/c.txt?part=2&{rng.choice(_SECRET_NAMES)}={secret}"
    else:
        info = secret if where == "user" else f"AKIAEXAMPLE:{secret}"
        url = f"{scheme}://{info}@host.example/data/c.txt"
    message = rng.choice(["cannot open {}: boom", "{}", "'{}' failed", "see {} (404)"]).format(url)
    shown = redact(message)
    assert secret not in shown and "host.example/data/c.txt" in shown, (url, shown)
    if where != "query":
        try:
            RemoteFile(url)
        except CorpusError as exc:
            assert secret not in str(exc) and "not in the URL" in str(exc)
            raise
        raise AssertionError(f"{url} was not refused")


def _workspace_case(rng: random.Random, d: Path) -> tuple[Any, Any]:
    import hashlib
    import json
    import warnings
    import zipfile

    from dashboard import workspace as ws
    from dashboard.paths import resolve_server_path
    from dashboard.state import AppState, NamedMatrix
    from simcore.analysis.tables import to_long
    from simcore.utils.store import ArtefactStore

    store = ArtefactStore(d / "store")
    state = AppState()
    for name in ("A", "B", "C")[:rng.randint(1, 3)]:
        table = pd.DataFrame({"source": [f"{name} source"], "target": ["t"], "tvc": [rng.random()]})
        state.add_matrix(NamedMatrix(name, to_long(table), name, {}))
    files = ws.snapshot(state, "w", store.root, SAMPLE_DATA)
    members = list(files.items())
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["duplicate", "unnamed", "binary", "deep", "newline", "edited", "swapped", "dropped",
                           "limit", "truncated", "none", "bytes", "manifest value"])
        tables = [i for i, (n, _) in enumerate(members) if n.endswith(".csv")]
        if kind == "duplicate":
            members.append(rng.choice(members)[:1] + (b"source,target,measure,value\nx,y,tvc,1\n",))
        elif kind == "unnamed":
            members.append(("m77.csv", b"source,target,measure,value\nx,y,tvc,1\n"))
        elif kind == "binary" and tables:
            i = rng.choice(tables)
            members[i] = (members[i][0], rng.choice([b"\x80\x04\x95pickle", b"a,b\0"]))
        elif kind == "deep":
            members = [(n, _deep(rng).encode() if n == ws.MANIFEST else c) for n, c in members]
        elif kind == "newline":
            members.append(("m0.csv\n", b"x"))
        elif kind == "edited" and tables:
            i = rng.choice(tables)
            members[i] = (members[i][0], members[i][1] + members[i][1].splitlines(keepends=True)[-1])
        elif kind == "swapped" and len(tables) > 1:
            i, j = rng.sample(tables, 2)
            members[i], members[j] = (members[i][0], members[j][1]), (members[j][0], members[i][1])
        elif kind == "dropped" and tables:
            members.pop(rng.choice(tables))
        elif kind == "limit" and members[-1][0] == ws.MANIFEST and members[-1][1].startswith(b"{\n"):
            manifest = json.loads(members[-1][1])  # a corpus asking for 10^18 bytes
            manifest["corpora"]["source"] = [{"name": "news", "kind": "sample", "path": "sources/news.txt",
                                              "max_decompressed_bytes": 10**18}]
            members[-1] = (ws.MANIFEST, json.dumps(manifest).encode())
        elif kind == "truncated":
            members.append(("__truncate__", b""))
        elif kind == "bytes":  # compressed data damaged: zlib errors, bad CRCs, broken headers
            members.append(("__damage__", b""))
        elif kind == "manifest value" and members[-1][0] == ws.MANIFEST and members[-1][1].startswith(b"{\n"):
            manifest = json.loads(members[-1][1])
            leaves = list(_json_paths(manifest))
            node = manifest
            *parents, last = rng.choice(leaves)
            for key in parents:
                node = node[key]
            node[last] = rng.choice([None, 1, -1, 1.5, "x", [], {}, [1], {"a": 1}, True, "../../etc", 10**30])
            members[-1] = (ws.MANIFEST, json.dumps(manifest).encode())
    buffer = io.BytesIO()
    damage = any(n == "__damage__" for n, _ in members)
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED if damage else 0) as z:
        warnings.simplefilter("ignore")
        for name, content in members:
            if not name.startswith("__"):
                z.writestr(name, content)
    data = buffer.getvalue()
    if any(n == "__truncate__" for n, _ in members):
        data = data[:rng.randint(0, len(data))]
    if damage and data:
        mutable = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mutable[rng.randrange(len(mutable))] = rng.randrange(256)
        data = bytes(mutable)
    locator = ws.Locator(store, SAMPLE_DATA, lambda t: resolve_server_path(t, [SAMPLE_DATA.resolve()]))
    opened = ws.read_zip(data)
    restored = AppState()
    ws.restore(opened, restored, locator)
    manifest = json.loads(opened[ws.MANIFEST])
    entries = {e["name"]: e["file"] for e in manifest["matrices"]}
    assert all(c.corpus.max_decompressed_bytes in (None, 500_000_000) for c in restored.sources.values())
    for name, matrix in restored.matrices.items():  # never relabelled: each shows its own rows
        assert set(matrix.long["source"]) == {f"{name} source"}
        assert manifest["tables"][entries[name]] == hashlib.sha256(opened[entries[name]]).hexdigest()
    return opened, restored


def _json_paths(value: Any, prefix: tuple = ()) -> Any:
    """The path (keys and indices) of every value inside a JSON document."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield (*prefix, key)
        yield from _json_paths(inner, (*prefix, key))


def test_generated_hostile_shapes(tmp_path):
    """Deep JSON (ladder cells, JSONL lines, dataset_info.json), long lines through the selection's pool
    reader, Parquet and Arrow files of random row groups (and, since the fourth round, one value repeated
    through a dictionary) under random decompression limits, and workspace zips mutated 1-3 times
    (duplicate, unnamed, binary, newline-named members; deep or edited JSON; tables edited, swapped or
    dropped; the zip cut short; compressed bytes damaged; a manifest value of another type): each returns (and then keeps its invariant: no word
    lost, no unit or batch over its budget, no matrix relabelled) or raises a SimcoreError."""
    rng = random.Random(SEED + 2)
    cases = {"deep JSON": _deep_json_case, "long lines": _long_lines_case, "parquet": _parquet_case,
             "workspace zip": _workspace_case, "secret url": _secret_url_case}
    outcomes: Counter[tuple[str, str]] = Counter()
    wrong = []
    for case in range(N_SHAPES):
        kind = rng.choice(sorted(cases))
        d = tmp_path / str(case)
        d.mkdir()
        try:
            cases[kind](rng, d)
        except SimcoreError:
            outcomes[(kind, "SimcoreError")] += 1
        except Exception as exc:  # noqa: BLE001
            outcomes[(kind, type(exc).__name__)] += 1
            wrong.append(f"{kind} #{case}: {type(exc).__name__}: {str(exc)[:160]}")
        else:
            outcomes[(kind, "returned")] += 1
    print(f"\n{N_SHAPES} generated shapes; outcomes {dict(sorted(outcomes.items()))}")
    assert not wrong, f"{len(wrong)} cases failed, e.g.\n" + "\n".join(wrong[:8])
    # JSON nested in a ladder cell, a JSONL line or a dataset card is never what those fields hold: refused
    assert all(outcomes[(k, "returned")] > 0 for k in cases if k != "deep JSON")
    assert outcomes[("secret url", "SimcoreError")] > 0  # credentials in a URL: refused, naming neither
    assert outcomes[("workspace zip", "SimcoreError")] > 0 and outcomes[("deep JSON", "SimcoreError")] > 0
