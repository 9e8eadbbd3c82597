"""The sizes sources are compared at: hand-worked ladders, and the matrix's ladder cells against cells
scored directly at that size."""

from __future__ import annotations

import json

from simcore.corpora.corpus import Corpus
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.ladder import LADDER, pair_size, pair_sizes, rungs, table_size
from simcore.matrix.rows import decode_replicates
from simcore.matrix.workbench import Workbench

from .conftest import SAMPLE_DATA


def test_the_table_is_at_the_smallest_sources_size_and_capped():
    assert table_size([616_670, 434_232, 1_376_529]) == 434_232
    assert table_size([20_000_000, 50_000_000]) == 10_000_000


def test_pairs_meet_at_the_largest_rung_both_reach():
    steps = rungs([8_419, 12_000, 616_670, 1_376_529], 8_419)
    assert steps[:3] == [8_419, 30_000, 100_000] and steps[-1] == 10_000_000  # 10k is not 3x the table's size
    assert pair_size(8_419, 616_670, steps, 10_000_000) == 8_419  # the small one whole
    assert pair_size(12_000, 616_670, steps, 10_000_000) == 8_419
    assert pair_size(616_670, 1_376_529, steps, 10_000_000) == 300_000
    assert rungs([2_000, 50_000], 2_000)[:2] == [2_000, 10_000]
    assert pair_size(50_000_000, 40_000_000, rungs([40_000_000], 10_000_000), 10_000_000) == 10_000_000


def test_what_each_source_needs_besides_the_table_sample():
    # the five shared sources: the table at wikitext's 434,232; 1M is not 3x that, so every pair meets there
    sizes = {"wiki": 434_232, "news": 616_670, "clinical": 1_102_035, "biomed": 1_376_529, "yelp": 1_696_614}
    assert pair_sizes(sizes, table_size(list(sizes.values()))) == dict.fromkeys(sizes, [])
    # beside a 10k-token source, the large ones meet at their common rungs
    sizes["small"] = 10_000
    assert pair_sizes(sizes, 10_000) == {"wiki": [300_000], "news": [300_000], "clinical": [300_000, 1_000_000],
                                         "biomed": [300_000, 1_000_000], "yelp": [300_000, 1_000_000], "small": []}
    # a size the user chose: no ladder, but a larger source also meets a smaller one at its whole size
    assert pair_sizes({"small": 5_000, "big": 50_000}, 20_000, ladder=False) == {"small": [], "big": [5_000]}
    assert LADDER[0] == 10_000 and all(b / a <= 3.4 for a, b in zip(LADDER, LADDER[1:]))


def test_ladder_cells_are_the_cells_scored_at_that_size(store, tmp_path):
    bench = Workbench(store)
    lines = (SAMPLE_DATA / "sources" / "news.txt").read_text().splitlines()
    (tmp_path / "tiny.txt").write_text("\n".join(lines[:60]) + "\n")  # a small source: the others meet above it
    sources = corpora_in(SAMPLE_DATA / "sources") + [Corpus.from_path(tmp_path / "tiny.txt")]
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    table = bench.matrix(sources, [target], ["tvc", "ttr"])
    assert table[table.measure == "ttr"]["ladder"].isna().all()  # TTR compares nothing: no ladder
    rows = table[(table.measure == "tvc") & table.ladder.notna()]
    assert len(rows) > 0
    prepared = bench.target(target)
    for row in rows.itertuples():
        corpus = next(c for c in sources if c.name == row.source)
        for size, cell in json.loads(row.ladder).items():
            direct = bench.cell(bench.source(corpus, int(size), 1), prepared, "tvc")
            assert cell["value"] == direct.value
            assert (decode_replicates(cell["replicates"]) == decode_replicates(
                " ".join(f"{v:.6g}" for v in direct.replicates))).all()
