"""The NER probe: entity F1 against seqeval, splits and vectors, and a tiny end-to-end probe."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.analysis.correlation import correlate, read_results
from simcore.analysis.regret import regret
from simcore.analysis.tables import read_matrix
from simcore.cli.main import main
from simcore.corpora.corpus import Corpus
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.workbench import Workbench
from simcore.measures.options import MeasureOptions
from simcore.measures.wvv import source_vectors_path
from simcore.probe.config import ProbeCaps
from simcore.probe.data import TargetSplits, cap_sentences, read_split, stored_split
from simcore.probe.run import BASELINE, COLUMNS, probe
from simcore.probe.scoring import entity_score, spans
from simcore.probe.vectors import spacy_vectors
from simcore.utils.errors import SimcoreError
from simcore.utils.store import ArtefactStore

seqeval_metrics = pytest.importorskip("seqeval.metrics")

# --- entity-level F1 -------------------------------------------------------------------------

GOLD = [
    ["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "I-ORG", "I-ORG"],
    ["O", "B-MISC", "O", "O", "B-PER"],
    ["B-LOC", "I-LOC", "I-LOC", "O"],
]
PRED = [
    ["B-PER", "I-PER", "O", "B-ORG", "O", "B-ORG", "I-ORG", "O"],  # right PER; LOC typed ORG; ORG cut short
    ["O", "I-MISC", "O", "O", "B-PER"],                            # I- after O starts a chunk (conlleval)
    ["B-LOC", "I-LOC", "I-PER", "O"],                              # a type change ends the chunk
]


def test_spans_by_hand() -> None:
    assert spans(GOLD[0]) == [(0, 2, "PER"), (3, 4, "LOC"), (5, 8, "ORG")]
    assert spans(PRED[1]) == [(1, 2, "MISC"), (4, 5, "PER")]
    assert spans(PRED[2]) == [(0, 2, "LOC"), (2, 3, "PER")]
    assert spans(["S-X", "B-Y", "E-Y", "U-Z"]) == [(0, 1, "X"), (1, 3, "Y"), (3, 4, "Z")]


def test_f1_on_a_fixed_prediction_equals_seqeval_and_hand_count() -> None:
    score = entity_score(GOLD, PRED)
    # by hand: gold 3 + 2 + 1 chunks, predicted 3 + 2 + 2; correct: PER in the first, both in the second
    assert (score.correct, score.predicted, score.gold) == (3, 7, 6)
    assert score.f1 == pytest.approx(100 * 6 / 13)  # 2PR/(P+R) with P = 3/7, R = 1/2
    assert score.f1 == pytest.approx(100 * seqeval_metrics.f1_score(GOLD, PRED))
    assert score.precision == pytest.approx(100 * seqeval_metrics.precision_score(GOLD, PRED))
    assert score.recall == pytest.approx(100 * seqeval_metrics.recall_score(GOLD, PRED))


TAGS = st.sampled_from(["O", "O", "B-A", "I-A", "B-B", "I-B", "E-A", "S-B"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=5).flatmap(
    lambda lengths: st.tuples(*[st.tuples(st.lists(TAGS, min_size=n, max_size=n),
                                          st.lists(TAGS, min_size=n, max_size=n)) for n in lengths])))
def test_f1_equals_seqeval_on_random_tags(pairs: tuple) -> None:
    gold = [list(g) for g, _ in pairs]
    pred = [list(p) for _, p in pairs]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = seqeval_metrics.f1_score(gold, pred, zero_division=0)
    assert entity_score(gold, pred).f1 == pytest.approx(100 * expected)


# --- a tiny bundled case (written here, not copied from any data set) --------------------------

PEOPLE = ["Anna", "Boris", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hugo"]
PLACES = ["Lisbon", "Oslo", "Quito", "Tunis", "Hanoi", "Perth"]
ORGS = ["Acme", "Globex", "Initech", "Umbrella"]
VERBS = ["visited", "left", "praised", "called"]


def _sentence(rng: random.Random) -> tuple[list[str], list[str]]:
    person, place, org = rng.choice(PEOPLE), rng.choice(PLACES), rng.choice(ORGS)
    if rng.random() < 0.5:
        return ([person, rng.choice(VERBS), place, "for", org, "Corp", "."],
                ["B-PER", "O", "B-LOC", "O", "B-ORG", "I-ORG", "O"])
    return (["Staff", "of", org, "met", person, "Smith", "in", place, "."],
            ["O", "O", "B-ORG", "O", "B-PER", "I-PER", "O", "B-LOC", "O"])


def _write_conll(path: Path, sentences: list[tuple[list[str], list[str]]]) -> None:
    blocks = ["\n".join(f"{t}\t{g}" for t, g in zip(tokens, tags)) for tokens, tags in sentences]
    path.write_text("-DOCSTART-\tO\n\n" + "\n\n".join(blocks) + "\n")


@pytest.fixture
def tiny(tmp_path: Path) -> dict[str, Path]:
    rng = random.Random(5)
    target = tmp_path / "targets" / "tiny_ner"
    target.mkdir(parents=True)
    for split, n in (("train", 60), ("dev", 15), ("test", 25)):
        _write_conll(target / f"{split}.conll", [_sentence(rng) for _ in range(n)])
    sources = tmp_path / "sources"
    sources.mkdir()
    filler = {"news": PEOPLE + PLACES + ORGS + VERBS + ["the", "said", "on", "today"],
              "cooking": ["stir", "the", "onions", "until", "golden", "add", "salt", "and", "pepper", "simmer"],
              "sports": ["the", "striker", "scored", "twice", "before", "half", "time", "Oslo", "fans", "cheered"]}
    for name, words in filler.items():
        lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(150)]
        (sources / f"{name}.txt").write_text("\n".join(lines) + "\n")
    return {"target": target, "targets": tmp_path / "targets", "sources": sources}


SMALL_VECTORS = MeasureOptions(wvv_dims=16, wvv_min_count=1, wvv_epochs=2, wvv_workers=1)
TINY_CAPS = ProbeCaps(train_sentences=40, dev_sentences=None, epochs=3, seconds=60, eval_frequency=10)


def test_target_splits_and_cap(tiny: dict[str, Path], store) -> None:
    splits = TargetSplits.from_directory(tiny["target"])
    assert (splits.name, splits.train.name, splits.dev.name, splits.test.name) == (
        "tiny_ner", "train.conll", "dev.conll", "test.conll")
    train = read_split(splits, "train")
    assert len(train) == 60 and train[0][1][0] in ("B-PER", "O")
    capped = cap_sentences(train, 40, seed=13)
    remaining = iter(train)
    assert len(capped) == 40 and all(any(s == t for t in remaining) for s in capped)  # a subsequence of train
    assert cap_sentences(train, 40, seed=14) != capped and cap_sentences(train, 100, seed=13) == train
    stored = stored_split(splits, "train", 40, 13, store)
    import spacy
    from spacy.tokens import DocBin

    docs = list(DocBin().from_disk(stored.path).get_docs(spacy.blank("en").vocab))
    assert [[t.text for t in d] for d in docs] == [tokens for tokens, _ in capped]
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in docs] == [spans(tags) for _, tags in capped]
    assert stored.entities == sum(len(spans(tags)) for _, tags in capped)


def test_target_without_train_split_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "test.conll").write_text("a\tO\n")
    with pytest.raises(SimcoreError, match="no train file"):
        TargetSplits.from_directory(tmp_path)


def test_spacy_vectors_hold_the_source_word2vec_vectors(tiny: dict[str, Path], store) -> None:
    bench = Workbench(store, options=SMALL_VECTORS)
    source = bench.source(Corpus.from_path(tiny["sources"] / "news.txt"), 10_000, 1)[0]
    table = spacy_vectors(source)
    w2v = source_vectors_path(source)
    words = json.loads((w2v / "words.json").read_text())
    expected = np.load(w2v / "vectors.npy")
    import spacy

    nlp = spacy.load(table.path)
    assert table.words == len(words) and table.dims == 16
    row = words.index("oslo")
    doc = nlp("Oslo OSLO oslo")  # NER text keeps its case; the source was lower-cased
    for token in doc:
        np.testing.assert_allclose(token.vector, expected[row], rtol=1e-6)


def test_probe_writes_a_results_table_that_correlate_and_regret_accept(tiny: dict[str, Path], store,
                                                                        tmp_path: Path, monkeypatch) -> None:
    bench = Workbench(store, options=SMALL_VECTORS)
    sources = corpora_in(tiny["sources"])
    target = TargetSplits.from_directory(tiny["target"])
    runs: list[dict] = []
    table = probe(sources, [target], workbench=bench, caps=TINY_CAPS, seeds=[0, 1], source_tokens=10_000,
                  on_run=runs.append)
    assert list(table.columns) == COLUMNS
    assert sorted(table["source"]) == ["cooking", "news", "sports"]
    assert (table["target"] == "tiny_ner").all() and (table["seeds"] == 2).all()
    assert table["error"].isna().all()
    for row in table.itertuples():
        f1s = [r["f1"] for r in runs if r["source"] == row.source]
        base = [r["f1"] for r in runs if r["source"] == BASELINE]
        assert row.f1 == pytest.approx(np.mean(f1s)) and row.f1_std == pytest.approx(np.std(f1s, ddof=1))
        assert row.baseline == pytest.approx(np.mean(base))
        assert row.improvement == pytest.approx(row.f1 - row.baseline)
        assert 0 <= row.f1 <= 100 and "train_sentences=40" in row.caps and "source_tokens=10000" in row.caps
    assert len(runs) == 8  # baseline + 3 sources, 2 seeds each

    # a second probe reads every run back from the store
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    again = probe(sources, [target], workbench=Workbench(store, options=SMALL_VECTORS), caps=TINY_CAPS,
                  seeds=[0, 1], source_tokens=10_000)
    assert not log.exists() or "probe-run" not in log.read_text()
    pd.testing.assert_frame_equal(again, table)
    assert (table["time_capped"] == 0).all()
    # runs that ended by their epoch cap stand under a larger time cap too; a tiny time cap retrains
    longer = probe(sources, [target], workbench=bench, caps=replace(TINY_CAPS, seconds=600), seeds=[0, 1],
                   source_tokens=10_000)
    assert not log.exists() or "probe-run" not in log.read_text()
    assert list(longer["f1"]) == list(table["f1"])
    cut = probe(sources[:1], [target], workbench=bench, caps=replace(TINY_CAPS, seconds=0.01), seeds=[0],
                source_tokens=10_000)
    assert log.read_text().count("probe-run") == 2  # baseline and one source, seed 0
    assert cut.loc[0, "time_capped"] == 2

    results = tmp_path / "results.csv"
    table.to_csv(results, index=False)
    matrix = bench.matrix(sources, corpora_in(tiny["targets"]), ["tvc"], sample_tokens=10_000)
    matrix_csv = tmp_path / "matrix.csv"
    matrix.to_csv(matrix_csv, index=False)
    corr = correlate(read_matrix(matrix_csv), read_results(results), ["tvc"])
    assert corr.loc[0, "n"] == 3
    assert regret(read_matrix(matrix_csv), read_results(results), ["tvc"])["regret"].notna().all()
    assert main(["correlate", "--matrix", str(matrix_csv), "--results", str(results)]) == 0


def test_probe_cli_one_line_errors(tiny: dict[str, Path], tmp_path: Path, capsys) -> None:
    assert main(["probe", "--sources", str(tiny["sources"]), "--target", str(tmp_path / "nowhere"),
                 "--out", str(tmp_path / "r.csv")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert main(["probe", "--sources", str(tiny["sources"]), "--target", str(tiny["target"]),
                 "--out", str(tmp_path / "r.txt")]) == 2
    assert "give a .csv file name" in capsys.readouterr().err


def test_probe_cli_writes_the_results_csv(tiny: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "out" / "results.csv"
    args = ["probe", "--sources", str(tiny["sources"]), "--target", str(tiny["target"]), "--out", str(out),
            "--max-train-sentences", "30", "--max-epochs", "1", "--cache", str(tmp_path / "store"), "--quiet"]
    assert main(args) == 0
    table = pd.read_csv(out)
    assert list(table.columns) == COLUMNS and len(table) == 3
    assert table["caps"].str.contains("train_sentences=30;").all() and (table["seeds"] == 1).all()
    assert table["f1"].between(0, 100).all() and table["baseline"].nunique() == 1


def test_probe_cli_gpu_without_one_is_a_clear_error(tiny: dict[str, Path], tmp_path: Path, capsys) -> None:
    try:
        import cupy  # noqa: F401
        pytest.skip("cupy is installed here")
    except ImportError:
        pass
    assert main(["probe", "--sources", str(tiny["sources"]), "--target", str(tiny["target"]),
                 "--out", str(tmp_path / "r.csv"), "--gpu"]) == 2
    assert "no usable GPU" in capsys.readouterr().err


def test_shared_targets_are_found_with_their_splits(shared_data: Path) -> None:
    for name in ("conll2003", "craft", "scienceie", "wetlab_wlp"):
        splits = TargetSplits.from_directory(shared_data / "targets" / name)
        assert (splits.train.name, splits.dev.name, splits.test.name) == ("train.conll", "dev.conll", "test.conll")
    with pytest.raises(SimcoreError, match="no train file"):
        TargetSplits.from_directory(shared_data / "targets" / "jnlpba")
    test = read_split(TargetSplits.from_directory(shared_data / "targets" / "scienceie"), "test")
    assert len(test) == 771  # the README's sentence count


def test_probe_one_unreadable_source_costs_only_its_own_rows(tiny: dict[str, Path], tmp_path: Path,
                                                             capsys, monkeypatch) -> None:
    import os

    sources = tmp_path / "mixed"
    sources.mkdir()
    (sources / "news.txt").write_text((tiny["sources"] / "news.txt").read_text())
    (sources / "blank.txt").write_text("")
    os.mkfifo(sources / "pipe.txt")  # listed, never read (reading would hang)
    out, store = tmp_path / "results.csv", tmp_path / "store"
    assert main(["probe", "--sources", str(sources), "--target", str(tiny["target"]), "--out", str(out),
                 "--max-train-sentences", "20", "--max-dev-sentences", "10", "--max-epochs", "1",
                 "--cache", str(store), "--quiet"]) == 2
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("simcore: warning: source")]
    assert len(warnings) == 2 and "Traceback" not in err
    assert "source blank has no results: blank: blank.txt is empty" in warnings[0]
    assert warnings[1].startswith("simcore: warning: source pipe has no results: pipe:")
    assert "2 of 3 sources failed" in err
    table = pd.read_csv(out).set_index("source")
    assert list(table.index) == ["blank", "news", "pipe"] and len(table.columns) == len(COLUMNS) - 1
    assert table.loc["news", "error"] != table.loc["news", "error"]  # NaN: news was probed
    assert 0 <= table.loc["news", "f1"] <= 100 and table.loc["news", "seeds"] == 1
    assert "is empty" in table.loc["blank", "error"] and "regular file" in table.loc["pipe", "error"]
    for bad in ("blank", "pipe"):
        assert np.isnan(table.loc[bad, "f1"]) and table.loc[bad, "seeds"] == 0
        assert table.loc[bad, "baseline"] == table.loc["news", "baseline"]  # the baseline was trained
    # the library says the same, reading every run back from the store (the vectors' size ignores the bad ones)
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    again = probe(corpora_in(sources), [TargetSplits.from_directory(tiny["target"])],
                  workbench=Workbench(ArtefactStore(store), options=MeasureOptions(seed=13)),
                  caps=ProbeCaps(train_sentences=20, dev_sentences=10, epochs=1))
    assert not log.exists() or "probe-run" not in log.read_text()
    assert set(again.attrs["failed_sources"]) == {"blank", "pipe"}
    assert again.set_index("source").loc["news", "f1"] == pytest.approx(table.loc["news", "f1"])
    # every source unreadable: still the baseline (read back), and a row per source saying why
    only_bad = [c for c in corpora_in(sources) if c.name != "news"]
    none = probe(only_bad, [TargetSplits.from_directory(tiny["target"])],
                 workbench=Workbench(ArtefactStore(store), options=MeasureOptions(seed=13)),
                 caps=ProbeCaps(train_sentences=20, dev_sentences=10, epochs=1))
    assert list(none["source"]) == ["blank", "pipe"] and none["error"].notna().all()
    assert (none["baseline"] == table.loc["news", "baseline"]).all() and none["caps"].str.endswith("source_tokens=none").all()


def test_probe_one_unreadable_target_costs_only_its_own_rows(tiny: dict[str, Path], tmp_path: Path, capsys) -> None:
    broken = tmp_path / "targets" / "broken"
    broken.mkdir()
    (broken / "train.conll").write_text("")  # found, but holds no sentence
    (broken / "test.conll").write_text((tiny["target"] / "test.conll").read_text())
    out, store = tmp_path / "results.csv", tmp_path / "store"
    args = ["probe", "--sources", str(tiny["sources"]), "--target", str(broken), "--target", str(tiny["target"]),
            "--out", str(out), "--max-train-sentences", "20", "--max-dev-sentences", "10", "--max-epochs", "1",
            "--cache", str(store), "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "1 of 2 targets failed" in err
    assert "simcore: warning: target broken has no results: broken:" in err
    table = pd.read_csv(out)
    bad, good = table[table["target"] == "broken"], table[table["target"] == "tiny_ner"]
    assert sorted(bad["source"]) == sorted(good["source"]) == ["cooking", "news", "sports"]
    assert bad["error"].str.startswith("target broken:").all() and bad["f1"].isna().all() and (bad["seeds"] == 0).all()
    assert good["error"].isna().all() and good["f1"].between(0, 100).all() and (good["seeds"] == 1).all()
    # the good target's values are those of a probe of it alone (read back from the store)
    alone = probe(corpora_in(tiny["sources"]), [TargetSplits.from_directory(tiny["target"])],
                  workbench=Workbench(ArtefactStore(store), options=MeasureOptions(seed=13)),
                  caps=ProbeCaps(train_sentences=20, dev_sentences=10, epochs=1))
    assert alone.attrs["failed_targets"] == {}
    assert alone.set_index("source")["f1"].to_dict() == pytest.approx(good.set_index("source")["f1"].to_dict())
    # when no target can be probed, that is the run's one-line error
    at = args.index(str(tiny["target"]))
    only = args[:at - 1] + args[at + 1:]  # without the second "--target DIR"
    assert main(only) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "train.conll is empty" in err.splitlines()[-1]


def _hub_split(path: Path, tokens: list[list[str]], tags: list[list[int]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"tokens": tokens, "ner_tags": tags}), path)


def test_the_probe_finds_hub_split_names_shards_and_card_tag_names(tmp_path: Path) -> None:
    folder = tmp_path / "hub_ner"
    (folder / "data").mkdir(parents=True)
    (folder / "README.md").write_text("---\ndataset_info:\n  features:\n  - name: tokens\n    sequence: string\n"
                                      "  - name: ner_tags\n    sequence:\n      class_label:\n        names:\n"
                                      "          '0': O\n          '1': B-PER\n          '2': I-PER\n---\n")
    (folder / "dataset_info.json").write_text("{}")  # metadata, never a split
    _hub_split(folder / "data" / "train-00000-of-00002.parquet", [["Ann", "Lee", "ran"]], [[1, 2, 0]])
    _hub_split(folder / "data" / "train-00001-of-00002.parquet", [["Bo", "sat"]], [[1, 0]])
    _hub_split(folder / "data" / "validation-00000-of-00001.parquet", [["Cy", "ate"]], [[1, 0]])
    _hub_split(folder / "data" / "test-00000-of-00001.parquet", [["Di", "won"]], [[1, 0]])
    splits = TargetSplits.from_directory(folder)
    assert (splits.train.name, splits.dev.name, splits.test.name) == (
        "train-00000-of-00002.parquet", "validation-00000-of-00001.parquet", "test-00000-of-00001.parquet")
    assert read_split(splits, "train") == [(["Ann", "Lee", "ran"], ["B-PER", "I-PER", "O"]),
                                           (["Bo", "sat"], ["B-PER", "O"])]
    assert read_split(splits, "test") == [(["Di", "won"], ["B-PER", "O"])]


def test_the_probe_reads_a_datasets_export_and_conllu_splits(tmp_path: Path) -> None:
    export = tmp_path / "export"
    for split, tokens in (("train", [["Ann", "ran"]]), ("test", [["Bo", "sat"]])):
        (export / split).mkdir(parents=True)
        _hub_split(export / split / "data-00000-of-00001.parquet", tokens, [[1, 0]])
        (export / split / "dataset_info.json").write_text(
            '{"features": {"ner_tags": {"feature": {"names": ["O", "B-PER"]}}}}')
    (export / "dataset_dict.json").write_text('{"splits": ["train", "test"]}')
    splits = TargetSplits.from_directory(export)
    assert splits.train == export / "train" and read_split(splits, "test") == [(["Bo", "sat"], ["B-PER", "O"])]
    ud = tmp_path / "ud"
    ud.mkdir()
    for split in ("train", "test"):  # Universal Dependencies names its files by treebank, then split
        (ud / f"de_gsd-ud-{split}.conllu").write_text("# sent_id = 1\n1\tAnn\t_\t_\t_\t_\t0\troot\t_\tNER=B-PER\n"
                                            "2\tlief\t_\t_\t_\t_\t1\tdep\t_\tNER=O\n\n")
    assert read_split(TargetSplits.from_directory(ud), "train") == [(["Ann", "lief"], ["B-PER", "O"])]


def test_null_hub_rows_of_a_probe_target_are_said(tmp_path):
    """A Hub-style split with null rows: split_notes (printed by the probe commands) counts them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from simcore.probe.data import TargetSplits, read_split, split_notes

    rows = [["EU", "rejects", "German", "call"], None, ["Peter", "Blackburn"], None, ["BRUSSELS"]]
    tags = [[1, 0, 2, 0], None, [3, 4], None, [1]]
    names = '{"features": {"ner_tags": {"feature": {"names": ["O", "B-ORG", "B-MISC", "B-PER", "I-PER"]}}}}'
    folder = tmp_path / "hub"
    folder.mkdir()
    for split in ("train", "test"):
        pq.write_table(pa.table({"tokens": rows, "ner_tags": tags}), folder / f"{split}.parquet")
    (folder / "dataset_info.json").write_text(names)
    splits = TargetSplits.from_directory(folder)
    assert len(read_split(splits, "train")) == 3
    lines = split_notes(splits)
    assert [line.split(":")[0] for line in lines] == ["hub/train", "hub/test"]
    assert all("2 lines skipped" in line for line in lines)
