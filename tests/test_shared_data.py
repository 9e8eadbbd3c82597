"""Integration on the real corpora in ../shared/data (skipped when absent): what the paper
leads us to expect of PPL, TVC and JSD."""

import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.workbench import Workbench

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def real_matrix(tmp_path_factory):
    from .conftest import SHARED_DATA

    if not (SHARED_DATA / "sources").is_dir():
        pytest.skip("../shared/data is not present")
    from simcore.utils.store import ArtefactStore

    store = ArtefactStore(tmp_path_factory.mktemp("store"))
    sources = corpora_in(SHARED_DATA / "sources")
    targets = [Corpus.from_path(SHARED_DATA / "targets" / name, name=name) for name in ("craft", "jnlpba", "conll2003")]
    table = Workbench(store).matrix(sources, targets, ["ppl", "tvc", "jsd"])
    return table.set_index(["target", "measure", "source"])["value"].sort_index()


def best(values, target, measure, lowest):
    series = values.loc[(target, measure)]
    return series.idxmin() if lowest else series.idxmax()


@pytest.mark.parametrize("target", ["craft", "jnlpba"])
def test_medline_is_most_similar_to_biomedical_targets(real_matrix, target):
    assert best(real_matrix, target, "ppl", lowest=True) == "biomed_ohsumed_medline"
    assert best(real_matrix, target, "jsd", lowest=True) == "biomed_ohsumed_medline"


def test_general_domain_beats_clinical_for_conll2003(real_matrix):
    ppl = real_matrix.loc[("conll2003", "ppl")]
    assert ppl["news_1bwb"] < ppl["clinical_mtsamples"]
    assert ppl["encyclopedia_wikitext2"] < ppl["clinical_mtsamples"]
    assert best(real_matrix, "conll2003", "ppl", lowest=True) in {"news_1bwb", "encyclopedia_wikitext2"}
    tvc = real_matrix.loc[("conll2003", "tvc")]
    assert tvc["news_1bwb"] > tvc["clinical_mtsamples"]
