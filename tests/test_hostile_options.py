"""Every option of probe, select and matrix's measure options is range-checked before any work: one line, exit 2."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import pytest

from simcore.cli import main as cli
from simcore.measures.options import MeasureOptions
from simcore.selection.options import SelectionOptions
from simcore.utils.errors import SimcoreError

from .conftest import ROOT, SAMPLE_DATA

PROBE = ["probe", "--sources", str(SAMPLE_DATA / "sources"), "--target", "/nonexistent", "--out", "/tmp/never.csv"]
SELECT = ["select", "--pool", str(SAMPLE_DATA / "sources" / "news.txt"), "--target",
          str(SAMPLE_DATA / "targets" / "news_ner.conll"), "--method", "cosine", "--top", "5", "--out", "/tmp/never.txt"]
MATRIX = ["matrix", "--sources", str(SAMPLE_DATA / "sources"), "--targets", "/nonexistent", "--out", "/tmp/never.csv"]
HUGE = ["inf", "-inf", "nan", "1e400", str(2**70), "1000000000000", "-1", "0", "abc", "", "1.5"]


@pytest.mark.parametrize("flag", ["--max-epochs", "--max-seconds", "--seeds", "--seed", "--source-tokens",
                                  "--vector-seed", "--max-train-sentences"])
def test_probe_options_are_bounded(flag):
    for value in HUGE:
        if flag == "--max-train-sentences" and value in ("0",):
            continue  # 0 means all
        if (flag in ("--seed", "--vector-seed") and value == "0") or (flag == "--max-seconds" and value == "1.5"):
            continue
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main([*PROBE, flag, value])
        assert code == 2 and err.getvalue().count("\n") == 1 and flag in err.getvalue(), (flag, value, err.getvalue())


@pytest.mark.parametrize("flag", ["--workers", "--ner-processes", "--order", "--pool-sample", "--target-tokens",
                                  "--tagger-steps", "--adapt-steps", "--seed", "--top"])
def test_select_options_are_bounded(flag):
    argv = [a for a in SELECT] if flag != "--top" else SELECT[:SELECT.index("--top")] + SELECT[SELECT.index("--top") + 2:]
    for value in HUGE:
        if flag == "--seed" and value == "0":
            continue
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main([*argv, flag, value])
        assert code == 2 and err.getvalue().count("\n") == 1 and flag in err.getvalue(), (flag, value, err.getvalue())


def test_selection_options_bound_what_allocates_per_unit():
    for name, value in (("workers", 10**9), ("ner_processes", 10**6), ("seed", 2**70), ("order", 7), ("dims", 1.5),
                        ("workers", True), ("target_tokens", 0), ("method", None), ("adapt", "yes")):
        with pytest.raises(SimcoreError):
            SelectionOptions(**{name: value})


@pytest.mark.parametrize("flag", ["--kl-buckets", "--emb-sentences"])
def test_matrix_measure_options_are_bounded(flag):
    for value in [*HUGE, "-3", "1e99", "10000001" if flag == "--kl-buckets" else "1000001"]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main([*MATRIX, flag, value])
        assert code == 2 and err.getvalue().count("\n") == 1 and flag in err.getvalue(), (flag, value, err.getvalue())
    # as a program: the same one line and status 2, no traceback, before any corpus is read
    result = subprocess.run([sys.executable, "-m", "simcore", *MATRIX, flag, "abc"], capture_output=True, text=True,
                            cwd=ROOT)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == f"simcore: error: matrix: argument {flag}: 'abc' is not a number (see --help)"


@pytest.mark.parametrize("name,high", [("kl_buckets", 10_000_000), ("emb_sentences", 1_000_000)])
def test_measure_options_bound_kl_buckets_and_emb_sentences(name, high):
    assert getattr(MeasureOptions(**{name: high}), name) == high
    for value in (0, -3, high + 1, 1.5, True, "64", None):
        with pytest.raises(SimcoreError, match=f"MeasureOptions.{name} must be a whole number from 1 to {high:,}"):
            MeasureOptions(**{name: value})
