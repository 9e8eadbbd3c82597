"""Writing a selection: kept text in pool order, every score in a CSV with formulas escaped."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from simcore.corpora.corpus import Corpus
from simcore.selection.driver import select
from simcore.selection.output import write_selection
from simcore.utils.errors import SimcoreError

from .conftest import biology, football, options, write_lines


def test_outputs_and_formula_escaping(tmp_path, store, bio_target):
    bio, sport = biology(10, seed=14), football(10, seed=15)
    pool_lines = bio[:5] + ["=HYPERLINK(\"http://x\") Expression of TP53 was increased ."] + sport + bio[5:]
    pool = write_lines(tmp_path / "pool.txt", pool_lines)
    out, table = tmp_path / "SELECTED.txt.gz", tmp_path / "SCORES.csv"
    result = select(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store_for(tmp_path),
                    fraction=0.5, out=out, scores_csv=table)
    with gzip.open(out, "rt", encoding="utf-8") as f:
        selected = f.read().splitlines()
    assert len(selected) == result.cutoff.n_kept == 11
    positions = [pool_lines.index(s) for s in selected]
    assert positions == sorted(positions), "kept sentences stay in pool order, as original text"
    with open(table, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["index"]) for r in rows] == list(range(len(pool_lines)))
    assert sum(r["kept"] == "True" for r in rows) == 11
    assert {r["text"] for r in rows if r["kept"] == "True"} <= {("'" + s if s.startswith("=") else s) for s in selected}
    assert rows[5]["text"].startswith("'=HYPERLINK"), "a formula is escaped in the CSV"
    assert float(rows[0]["score"]) == pytest.approx(result.scores.scores()[0], rel=1e-6)
    assert "kept 11 of 21" in result.summary()


def store_for(tmp_path: Path):
    from simcore.utils.store import ArtefactStore

    return ArtefactStore(tmp_path / "store2")




def test_writing_another_pools_selection_is_refused(tmp_path, store, bio_target):
    """The scores are per pool sentence: a pool with fewer or more sentences than they hold is an error."""
    lines = biology(10, seed=16)
    pool = write_lines(tmp_path / "pool.txt", lines)
    result = select(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store, top=3)
    out = tmp_path / "kept.txt"
    for other, message in ((lines[:4], "has 4 sentences but these scores are for 10"),
                           (lines + lines[:2], "has more sentences than the 10 these scores are for")):
        other_pool = Corpus.from_path(write_lines(tmp_path / f"other{len(other)}.txt", other))
        with pytest.raises(SimcoreError, match=message):
            write_selection(other_pool, result.scores, result.cutoff, out)
        assert not out.exists(), "nothing is written from the wrong pool"
    write_selection(Corpus.from_path(pool), result.scores, result.cutoff, out)
    assert len(out.read_text().splitlines()) == 3
