"""Facts about a corpus's files kept by their content (issue 37: a server's first visit of the
Corpora page detected 28 languages and hashed every file again): the files' hash is read once
while they are unchanged, and the language guess is stored by that hash."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from simcore.corpora import corpus as corpus_module
from simcore.corpora.corpus import Corpus, keep_facts_in
from simcore.corpora.lang.detect import detect_language
from simcore.corpora.tokenize import TokenizerOptions
from simcore.utils.store import ArtefactStore, digest

GERMAN = "Der Hund läuft schnell über die Straße und die Kinder spielen im Garten.\n" * 40


@pytest.fixture
def facts(tmp_path: Path):
    store = ArtefactStore(tmp_path / "store")
    keep_facts_in(store)
    corpus_module._CONTENT.clear()
    yield store
    keep_facts_in(None)
    corpus_module._CONTENT.clear()


@pytest.fixture
def counted(monkeypatch) -> list[str]:
    """The corpora whose files were read to be hashed."""
    seen: list[str] = []
    real = Corpus._hash_files

    def spy(self: Corpus) -> str:
        seen.append(self.name)
        return real(self)

    monkeypatch.setattr(Corpus, "_hash_files", spy)
    return seen


def test_an_unchanged_file_is_hashed_once_and_its_hash_read_back_by_a_new_process(
        tmp_path, facts, counted, monkeypatch):
    monkeypatch.setattr(corpus_module, "SETTLED_S", 0.0)  # the file counts as settled at once
    path = tmp_path / "news.txt"
    path.write_text("The cat sat on the mat .\nA dog barked .\n", encoding="utf-8")
    options = TokenizerOptions()
    by_hand = hashlib.sha256(path.read_bytes() + b"\0text").hexdigest()  # bytes, then the format
    expected = digest(by_hand, "text", None, options.as_dict())  # as before: English adds nothing
    assert Corpus.from_path(path).raw_fingerprint(options) == expected
    assert Corpus.from_path(path).raw_fingerprint(options) == expected
    assert counted == ["news"], "the second corpus object read no byte"
    corpus_module._CONTENT.clear()  # a new server process: only the store remembers
    assert Corpus.from_path(path).raw_fingerprint(options) == expected and counted == ["news"]
    path.write_text("Another text entirely .\n", encoding="utf-8")  # changed: hashed again
    again = Corpus.from_path(path).raw_fingerprint(options)
    assert counted == ["news", "news"]
    assert again == digest(hashlib.sha256(path.read_bytes() + b"\0text").hexdigest(), "text", None,
                           options.as_dict())


def test_a_file_rewritten_within_its_times_grain_is_not_taken_for_the_old_one(tmp_path, facts):
    """Same size, same inode, its times set back: a hash kept for a file changed a moment ago
    would be wrong, so a file that recent is hashed on every ask."""
    path = tmp_path / "a.txt"
    path.write_text("first text here\n", encoding="utf-8")
    info = path.stat()
    first = Corpus.from_path(path).raw_fingerprint(TokenizerOptions())
    with open(path, "r+", encoding="utf-8") as f:  # same inode, same size
        f.write("other text here\n")
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    second = Corpus.from_path(path).raw_fingerprint(TokenizerOptions())
    assert second != first
    assert second == digest(hashlib.sha256(b"other text here\n\0text").hexdigest(), "text", None,
                            TokenizerOptions().as_dict())


def test_the_language_guess_is_stored_by_content_and_not_detected_again(tmp_path, facts,
                                                                        monkeypatch):
    monkeypatch.setattr(corpus_module, "SETTLED_S", 0.0)
    path = tmp_path / "zeitung.txt"
    path.write_text(GERMAN, encoding="utf-8")
    lines = GERMAN.splitlines(keepends=True)  # a plain-text unit keeps its line's end
    by_hand = detect_language(lines[:1000])  # the detector on the file's first units
    guess = Corpus.from_path(path).language_guess()
    assert guess == by_hand and guess.language == "de"

    def refuse(*args, **kwargs):
        raise AssertionError("detected again")

    monkeypatch.setattr(corpus_module, "detect_language", refuse)
    corpus_module._CONTENT.clear()  # a new process
    assert Corpus.from_path(path).language_guess() == by_hand  # read back, every field equal
    # a copy under another name and place has the same content: the same guess, read back
    copy = tmp_path / "sub" / "copy.txt"
    copy.parent.mkdir()
    copy.write_text(GERMAN, encoding="utf-8")
    assert Corpus.from_path(copy).language_guess() == by_hand
    # a given language is part of the key: not the detected guess
    monkeypatch.setattr(corpus_module, "detect_language", detect_language)
    assert Corpus.from_path(path, language="fr").language_guess().language == "fr"


def test_without_a_store_nothing_is_written(tmp_path, monkeypatch):
    keep_facts_in(None)
    monkeypatch.setattr(corpus_module, "SETTLED_S", 0.0)
    path = tmp_path / "t.txt"
    path.write_text(GERMAN, encoding="utf-8")
    assert Corpus.from_path(path).language_guess().language == "de"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]
    corpus_module._CONTENT.clear()


def test_a_store_that_cannot_keep_a_fact_costs_only_the_keeping(tmp_path, facts, monkeypatch):
    """A full or read-only store: the guess and the fingerprint are found as without a store."""
    from simcore.utils.errors import StoreError

    def full(*args, **kwargs):
        raise StoreError("no space left on the store's disk")

    monkeypatch.setattr(corpus_module, "SETTLED_S", 0.0)
    monkeypatch.setattr(facts, "put_json", full)
    path = tmp_path / "t.txt"
    path.write_text(GERMAN, encoding="utf-8")
    corpus = Corpus.from_path(path)
    assert corpus.language_guess() == detect_language(GERMAN.splitlines(keepends=True)[:1000])
    by_hand = hashlib.sha256(path.read_bytes() + b"\0text").hexdigest()
    assert corpus.content_digest() == by_hand
