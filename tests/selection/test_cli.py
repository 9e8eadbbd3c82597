"""python -m simcore select: outputs, one-line errors, usage errors."""

from __future__ import annotations

import gzip

import pytest

from simcore.cli.main import main

from .conftest import biology, chat, football, mixed_pool, write_conll, write_lines


def test_cli_select_writes_outputs(tmp_path, bio_target, capsys):
    pool, is_bio = mixed_pool(tmp_path, biology(30, seed=21), football(30, seed=22))
    out, table = tmp_path / "SELECTED.txt.gz", tmp_path / "SCORES.csv"
    code = main(["select", "--pool", str(pool), "--target", str(bio_target), "--method", "xent",
                 "--fraction", "25%", "--out", str(out), "--scores", str(table), "--cache", str(tmp_path / "c"),
                 "--quiet"])
    assert code == 0
    with gzip.open(out, "rt", encoding="utf-8") as f:
        selected = f.read().splitlines()
    assert len(selected) == 15
    bio_lines = set(pool.read_text().splitlines()) - set(football(30, seed=22))
    assert sum(s in bio_lines for s in selected) >= 14
    assert "wrote 15 sentences" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--method", "ppl", "--top", "5", "--pool", "MISSING"], "does not exist"),
    (["--method", "ppl", "--top", "5", "--pipeline", "x"], "only used by --method entities"),
    (["--method", "ppl", "--top", "5", "--out", "OUT.json"], ".txt.gz"),
    (["--method", "entities", "--top", "5", "--pipeline", "NOTADIR"], "not a spaCy pipeline directory"),
    (["--method", "ppl", "--top", "5", "--tagger", "generic"], "only used by --method entities"),
    (["--method", "cosine", "--top", "5", "--encoder", "x"], "only used by --method encoder"),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, bio_target, capsys, argv, message):
    pool = write_lines(tmp_path / "pool.txt", biology(10, seed=23))
    base = {"--pool": str(pool), "--target": str(bio_target), "--out": str(tmp_path / "o.txt.gz")}
    args = dict(zip(argv[::2], argv[1::2]))
    for flag in ("--pool", "--out", "--pipeline"):
        if args.get(flag) in ("MISSING", "NOTADIR"):
            args[flag] = str(tmp_path / args[flag])
    full = ["select", "--cache", str(tmp_path / "c"), "--quiet"]
    for flag, value in (base | args).items():
        full += [flag, value]
    assert main(full) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("amount", [["--fraction", "1.5"], ["--fraction", "0"], ["--top", "0"], ["--top", "x"]])
def test_cli_bad_amount_is_a_usage_error(tmp_path, bio_target, capsys, amount):
    code = main(["select", "--pool", str(bio_target), "--target", str(bio_target), "--method", "ppl", *amount,
                 "--out", str(tmp_path / "o.txt.gz")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.startswith("simcore: error: select: argument")




def test_cli_min_tokens_keeps_only_long_enough_sentences(tmp_path, capsys):
    """Protocol steps in the target: under ppl the pool's one-liners score best unless a minimum keeps them
    out, which ppl and xent have by default (PER_TOKEN_MIN_TOKENS); --min-tokens 1 lets them back in."""
    from simcore.selection.choosing import PER_TOKEN_MIN_TOKENS, default_min_tokens

    assert default_min_tokens("ppl") == default_min_tokens("xent") == PER_TOKEN_MIN_TOKENS > 3
    assert default_min_tokens("cosine") == default_min_tokens("entities") == 1
    target = write_conll(tmp_path / "steps.conll", biology(60, seed=1) + ["Mix well .", "Spin down briefly ."] * 10)
    long_lines = chat(6, seed=30) + football(6, seed=31)
    pool = write_lines(tmp_path / "pool.txt", ["Mix briefly .", "Spin down ."] + long_lines + ["Mix ."])
    out = tmp_path / "SELECTED.txt"
    base = ["select", "--pool", str(pool), "--target", str(target), "--method", "ppl", "--top", "4",
            "--out", str(out), "--cache", str(tmp_path / "c")]
    assert main([*base, "--quiet", "--min-tokens", "1"]) == 0
    assert {"Mix briefly .", "Spin down .", "Mix ."} <= set(out.read_text(encoding="utf-8").splitlines())
    assert main([*base, "--quiet"]) == 0  # the default
    kept = out.read_text(encoding="utf-8").splitlines()
    assert len(kept) == 4 and set(kept) <= set(long_lines)
    assert all(len(line.split()) >= PER_TOKEN_MIN_TOKENS for line in kept)
    capsys.readouterr()
    assert main([*base, "--min-tokens", "4"]) == 0
    kept = out.read_text(encoding="utf-8").splitlines()
    assert len(kept) == 4 and all(len(line.split()) >= 4 for line in kept) and set(kept) <= set(long_lines)
    assert "3 scored pool sentences have fewer than 4 tokens (excluded as too short)" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "abc", "2.5", "10001"])
def test_cli_bad_min_tokens_is_a_one_line_usage_error(tmp_path, bio_target, capsys, value):
    code = main(["select", "--pool", str(bio_target), "--target", str(bio_target), "--method", "ppl", "--top", "3",
                 "--out", str(tmp_path / "o.txt.gz"), f"--min-tokens={value}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "Traceback" not in err and len(err.splitlines()) == 1
    assert err.startswith("simcore: error: select: argument --min-tokens")
