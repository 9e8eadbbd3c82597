"""simcore.corpora.listing: one answer to "which files make a corpus", the same in the CLI's folder of
corpora, the library's Corpus and the dashboard's server folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from simcore.corpora import listing
from simcore.corpora.corpus import Corpus
from simcore.corpora.listing import corpus_entries, corpus_files
from simcore.matrix.corpus_cache import corpora_in
from simcore.utils.errors import CorpusError, SimcoreError


@pytest.fixture
def folders(tmp_path: Path) -> Path:
    """sources/clinic: two text files (one nested), a hidden file, a hidden folder, a `datasets` metadata
    file and an empty-named dot file; sources/news.txt; sources/.cache (hidden, not a corpus)."""
    root = tmp_path / "sources"
    clinic = root / "clinic"
    (clinic / "notes").mkdir(parents=True)
    (clinic / ".git").mkdir()
    (clinic / "a.txt").write_text("the patient has a fever\n")
    (clinic / "notes" / "b.txt").write_text("the patient has a cough\n")
    (clinic / ".hidden.txt").write_text("not a corpus file\n")
    (clinic / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (clinic / "dataset_info.json").write_text('{"features": {}}\n')
    (root / "news.txt").write_text("the market rose\n")
    (root / ".cache").mkdir()
    (root / ".cache" / "x.txt").write_text("cached\n")
    return root


def test_the_files_of_a_corpus_are_listed_by_hand(folders: Path):
    clinic = folders / "clinic"
    assert corpus_files(clinic, "clinic") == [clinic / "a.txt", clinic / "notes" / "b.txt"]
    assert corpus_files(folders / "news.txt", "news") == [folders / "news.txt"]
    assert corpus_entries(folders) == [clinic, folders / "news.txt"]


def test_the_cli_the_library_and_the_dashboard_read_the_same_files(folders: Path, app_environment,
                                                                   monkeypatch):
    from dashboard.loading import add_server_path
    from dashboard.state import AppState

    expected = [folders / "clinic" / "a.txt", folders / "clinic" / "notes" / "b.txt"]
    by_cli = {c.name: list(c.files) for c in corpora_in(folders)}  # `simcore matrix --sources DIR`
    assert by_cli == {"clinic": expected, "news": [folders / "news.txt"]}
    assert list(Corpus.from_path(folders / "clinic").files) == expected  # the library
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", str(folders))
    state = AppState()
    assert add_server_path(state, "source", "clinic") == ["clinic"]  # the dashboard: one corpus
    assert list(state.sources["clinic"].corpus.files) == expected
    assert add_server_path(state, "target", "clinic", per_file=True) == ["a", "b"]  # or one per file
    assert [list(state.targets[n].corpus.files) for n in ("a", "b")] == [[f] for f in expected]


def test_the_file_limit_holds_everywhere(folders: Path, app_environment, monkeypatch):
    """The dashboard's folder listing had no limit of its own (issue 39)."""
    from dashboard.loading import add_server_path
    from dashboard.state import AppState

    monkeypatch.setattr(listing, "MAX_FILES", 1)
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", str(folders))
    with pytest.raises(CorpusError, match="more than 1 files"):
        corpus_files(folders / "clinic", "clinic")
    with pytest.raises(SimcoreError, match="more than 1 files"):
        add_server_path(AppState(), "source", "clinic", per_file=True)
    assert corpora_in(folders)[0].problem.endswith("give the folder of one corpus")  # costs only its cells


def test_a_folder_with_no_files_or_no_corpora_says_so(tmp_path: Path):
    (tmp_path / "empty" / ".hidden").mkdir(parents=True)
    with pytest.raises(CorpusError, match="holds no files"):
        corpus_files(tmp_path / "empty", "empty")
    with pytest.raises(CorpusError, match="holds no corpora"):
        corpus_entries(tmp_path / "empty")
