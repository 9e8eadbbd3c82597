import math

import pytest

from simcore.corpus import Corpus
from simcore.errors import SimcoreError
from simcore.matrix import Workbench, corpora_in

from .conftest import SAMPLE_DATA


def test_sample_matrix_shows_tenor_over_field(store):
    """The bundled demo makes the paper's point: for forum posts about medications, informal
    sources beat clinical notes that share the subject."""
    bench = Workbench(store)
    sources = corpora_in(SAMPLE_DATA / "sources")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "med_forum_posts.conll")
    table = bench.matrix(sources, [target], ["ppl", "jsd", "tvc", "ttr"])
    assert table["error"].isna().all()
    value = table.set_index(["source", "measure"])["value"]
    for informal in ("product_reviews", "tweets"):
        assert value[(informal, "ppl")] < value[("clinical_notes", "ppl")]
        assert value[(informal, "jsd")] < value[("clinical_notes", "jsd")]
    sizes = set(table["sample_tokens"])
    assert len(sizes) == 1, "sources are compared at the same size"


def test_cells_are_stored_and_new_targets_score_only_new_cells(tmp_path, store):
    bench = Workbench(store)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    first = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    second = Corpus.from_path(SAMPLE_DATA / "targets" / "lab_protocol_ner.conll")
    bench.matrix([source], [first], ["tvc", "jsd"])
    cells_before = len(list((store.root / "cell").iterdir()))
    again = Workbench(store).matrix([source], [first, second], ["tvc", "jsd"])
    assert len(list((store.root / "cell").iterdir())) == cells_before + 2
    assert len(again) == 4


def test_samples_give_a_standard_deviation(store):
    bench = Workbench(store)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    table = bench.matrix([source], [target], ["tvc"], samples=3, sample_tokens=3000)
    row = table.iloc[0]
    assert row["n_samples"] == 3 and row["std"] > 0 and 3000 <= row["sample_tokens"] < 3200


def test_a_failing_measure_is_reported_and_the_others_still_run(tmp_path, store, monkeypatch):
    monkeypatch.setenv("SIMCORE_KENLM_BIN", str(tmp_path / "nowhere"))
    monkeypatch.setattr("simcore.kenlm_tools._PROJECT_BIN", tmp_path / "nowhere")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    bench = Workbench(store)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    table = bench.matrix([source], [target], ["ppl", "tvc"]).set_index("measure")
    assert math.isnan(table.loc["ppl", "value"]) and "lmplz" in table.loc["ppl", "error"]
    assert table.loc["tvc", "value"] > 0


def test_bad_requests(tmp_path, store):
    with pytest.raises(SimcoreError, match="not a directory"):
        corpora_in(tmp_path / "none")
    with pytest.raises(SimcoreError, match="unknown measure"):
        Workbench(store).matrix([Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")],
                                [Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")], "tvc,nope")
