"""Every option of probe and select is range-checked before any work: one line, exit 2."""

from __future__ import annotations

import contextlib
import io

import pytest

from simcore import cli
from simcore.errors import SimcoreError
from simcore.selection.options import SelectionOptions

from .conftest import SAMPLE_DATA

PROBE = ["probe", "--sources", str(SAMPLE_DATA / "sources"), "--target", "/nonexistent", "--out", "/tmp/never.csv"]
SELECT = ["select", "--pool", str(SAMPLE_DATA / "sources" / "news.txt"), "--target",
          str(SAMPLE_DATA / "targets" / "news_ner.conll"), "--method", "cosine", "--top", "5", "--out", "/tmp/never.txt"]
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
