"""Every stored result is keyed by everything that decides it.

Each case computes a result for one input on a store that already holds the result for a variant of
it (the same tokens with other tags, other tag names, another language, another option) and compares
it with what a fresh store gives for that input: a store that returned the first input's result
would differ. The versions of the models that decide a result enter its key too.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.measures.options import MeasureOptions
from simcore.selection.driver import score_pool
from simcore.selection.options import SelectionOptions
from simcore.utils.errors import SimcoreError
from simcore.utils.store import ArtefactStore

from .selection.conftest import DRUGS, GENES, biology, football, mixed_pool

ENTITIES = {"pool_sample": 1000, "tagger_steps": 60, "batch": 37, "ner_processes": 1}


def _tagged(path, lines, tag_of):
    blocks = ["\n".join(f"{t}\t{tag_of(t)}" for t in line.split()) for line in lines]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


def _bio_tag(token: str) -> str:
    return "B-GENE" if token in GENES else "B-DRUG" if token in DRUGS else "O"


def _entity_result(pool, target, store) -> tuple:
    scores = score_pool(Corpus.from_path(pool), target, SelectionOptions(method="entities", **ENTITIES), store)
    details = scores.meta["details"]
    return details["tagger_kind"], tuple(details["labels"]), details["tagger"], tuple(scores.scores())


def _fresh_and_shared(tmp_path, first, second, result):
    """(second's result on a store that holds first's, second's result on a fresh store)."""
    shared = ArtefactStore(tmp_path / "shared")
    result(first, shared)
    return result(second, shared), result(second, ArtefactStore(tmp_path / "fresh"))


def test_entities_selection_is_keyed_by_the_targets_tags(tmp_path):
    pool, _ = mixed_pool(tmp_path, biology(20, seed=1), football(20, seed=2))
    lines = biology(120, seed=3)
    tagged = _tagged(tmp_path / "a" / "tgt.conll", lines, _bio_tag)
    untagged = _tagged(tmp_path / "b" / "tgt.conll", lines, lambda t: "O")  # same tokens, every tag O
    shared, fresh = _fresh_and_shared(tmp_path, Corpus.from_path(tagged), Corpus.from_path(untagged),
                                      lambda t, s: _entity_result(pool, t, s))
    assert fresh[0] == "generic" and shared == fresh


def _hub_folder(folder, names):
    """A `save_to_disk`-style folder: one Arrow stream of token lists and integer tags, and the tag
    names in dataset_info.json beside it."""
    import pyarrow as pa

    folder.mkdir(parents=True)
    rows = [line.split() for line in biology(120, seed=4)]
    tags = [[1 if t in GENES else 2 if t in DRUGS else 0 for t in row] for row in rows]
    table = pa.table({"tokens": rows, "ner_tags": tags})
    with pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb") as sink, \
            pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    info = {"features": {"tokens": {"feature": {"dtype": "string"}},
                         "ner_tags": {"feature": {"names": names}}}}
    (folder / "dataset_info.json").write_text(json.dumps(info), encoding="utf-8")
    return folder


def test_entities_selection_is_keyed_by_the_tag_names_of_a_hub_folder(tmp_path):
    pool, _ = mixed_pool(tmp_path, biology(20, seed=1), football(20, seed=2))
    first = _hub_folder(tmp_path / "a" / "tgt", ["O", "B-GENE", "B-DRUG"])
    second = _hub_folder(tmp_path / "b" / "tgt", ["O", "B-PROT", "B-CHEM"])  # the same bytes but the names
    shared, fresh = _fresh_and_shared(tmp_path, Corpus.from_path(first), Corpus.from_path(second),
                                      lambda t, s: _entity_result(pool, t, s))
    assert fresh[1] == ("CHEM", "PROT") and shared == fresh


def test_a_hub_folder_with_control_character_tag_names_is_refused_on_a_store_that_holds_its_twin(tmp_path):
    pool, _ = mixed_pool(tmp_path, biology(20, seed=1), football(20, seed=2))
    good = _hub_folder(tmp_path / "a" / "tgt", ["O", "B-GENE", "B-DRUG"])
    bad = _hub_folder(tmp_path / "b" / "tgt", ["O", "B-GENE", "B-DR\x07UG"])
    shared = ArtefactStore(tmp_path / "shared")
    _entity_result(pool, Corpus.from_path(good), shared)
    for store in (ArtefactStore(tmp_path / "fresh"), shared):
        with pytest.raises(SimcoreError, match="control character"):
            _entity_result(pool, Corpus.from_path(bad), store)


ENGLISH = ["The government presented a new budget in London on Monday .",
           "The finance minister said taxes would not rise next year .",
           "Thousands of people protested in Manchester against the city 's plans .",
           "The central bank kept its interest rate unchanged on Thursday ."]


def _tvcc(folder, language, store, options=None):
    """TVcC of an English news source for a pre-tokenized target read as ``language``."""
    source = folder / "news.txt"
    if not source.exists():
        folder.mkdir(parents=True, exist_ok=True)
        source.write_text("\n".join(ENGLISH * 5) + "\n", encoding="utf-8")
        _tagged(folder / "tgt.conll", [ENGLISH[0], ENGLISH[2], "Prices rose in the new shops ."], lambda t: "O")
    bench = Workbench(store, options=options) if options else Workbench(store)
    target = Corpus.from_path(folder / "tgt.conll", language=language)
    table = bench.matrix([Corpus.from_path(source)], [target], ["tvcc"], sample_tokens=200)
    return float(table["value"].iloc[0])


def test_tvcc_is_keyed_by_the_targets_language(tmp_path):
    english = _tvcc(tmp_path / "c", "en", ArtefactStore(tmp_path / "shared"))
    shared = _tvcc(tmp_path / "c", "de", ArtefactStore(tmp_path / "shared"))
    fresh = _tvcc(tmp_path / "c", "de", ArtefactStore(tmp_path / "fresh"))
    assert math.isfinite(fresh) and shared == fresh and english != fresh


@pytest.mark.parametrize("option,first,second", [("tvcc_pos", ("NOUN", "VERB", "ADJ"), ("NOUN",))])
def test_each_measure_option_enters_the_cell_key(tmp_path, option, first, second):
    shared = ArtefactStore(tmp_path / "shared")
    _tvcc(tmp_path / "c", "en", shared, MeasureOptions(**{option: first}))
    again = _tvcc(tmp_path / "c", "en", shared, MeasureOptions(**{option: second}))
    fresh = _tvcc(tmp_path / "c", "en", ArtefactStore(tmp_path / "fresh"), MeasureOptions(**{option: second}))
    assert again == fresh


@pytest.mark.parametrize("option,first,second", [("order", 2, 4), ("target_tokens", None, 60)])
def test_each_selection_option_enters_the_scores_key(tmp_path, option, first, second):
    pool, _ = mixed_pool(tmp_path, biology(30, seed=5), football(30, seed=6))
    target = Corpus.from_path(_tagged(tmp_path / "t.conll", biology(40, seed=7), lambda t: "O"))

    def result(value, store):
        options = SelectionOptions(method="ppl", batch=37, **{option: value})
        return tuple(score_pool(Corpus.from_path(pool), target, options, store).scores())

    shared, fresh = _fresh_and_shared(tmp_path, first, second, result)
    assert np.allclose(shared, fresh, equal_nan=True)
    assert not np.allclose(result(first, ArtefactStore(tmp_path / "fresh")), fresh, equal_nan=True)


def test_the_models_versions_enter_the_keys_of_what_they_decide(tmp_path, monkeypatch):
    """An upgraded spaCy (or its English pipeline, or gensim) must not read back results it did not make."""
    from simcore.corpora.tokenize import TokenizerOptions
    from simcore.models.tagging import _part_key
    from simcore.selection.methods.factory import input_identity
    from simcore.utils import versions

    store = ArtefactStore(tmp_path / "s")
    bench = Workbench(store)
    folder = tmp_path / "c"
    _tvcc(folder, "en", store)
    source = bench.source(Corpus.from_path(folder / "news.txt"), 200, 1)
    target = bench.target(Corpus.from_path(folder / "tgt.conll"))
    options = SelectionOptions(method="entities")
    before = ([bench.cell_key(source, target, m) for m in ("tvcc", "wvv", "tvc")], input_identity(options),
              _part_key("f", ("NOUN",), TokenizerOptions(), 0))
    real = versions.package_versions.__wrapped__
    monkeypatch.setattr(versions, "package_versions", lambda *names: tuple(v + ".1" for v in real(*names)))
    for module in ("simcore.matrix.corpus_cache", "simcore.models.tagging", "simcore.selection.methods.factory"):
        monkeypatch.setattr(f"{module}.package_versions", versions.package_versions, raising=False)
    after = ([bench.cell_key(source, target, m) for m in ("tvcc", "wvv", "tvc")], input_identity(options),
             _part_key("f", ("NOUN",), TokenizerOptions(), 0))
    assert before[0][0] != after[0][0] and before[0][1] != after[0][1]
    assert before[0][2] == after[0][2]  # TVC is computed by simcore alone
    assert before[1] != after[1] and before[2] != after[2]
