"""Corpora: a named corpus on disk, read through the format readers, tokenized once, sampled.

A :class:`Corpus` names raw input (a file or a directory of files). Tokenizing it writes a
:class:`TokenizedCorpus` to the artefact store: one unit per line, tokens separated by spaces,
plus the length of each line. Everything downstream (KenLM, word2vec, counts, samples) streams
that file, so a corpus of hundreds of millions of tokens is never held in memory as strings.

The readers of each format are this package's other modules (one per format; they see a corpus
through :class:`~simcore.corpora.options.ReadOptions`); the one-pass sample of a big source, which
tokenizes only what it keeps, is :func:`simcore.corpora.sampling.sample_source`.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import itertools
import os
import re
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..utils.errors import CorpusError, InvalidArgument, SimcoreError
from ..utils.store import ArtefactStore, digest
from .columnar import MissingColumn, columnar_units
from .compression import COMPRESSIONS
from .conll import conll_sentences as _conll_sentences
from .conllu import conllu_units as _conllu_units
from .corpus_counts import COUNTS_VERSION, corpus_counts
from .csv import csv_units as _csv_units
from .formats import COLUMNAR, FORMATS, SUFFIX_FORMAT, format_of, split_suffixes
from .hub_ner import bad_label_name
from .jsonl import jsonl_units as _jsonl_units
from .lang.content import content_words_method
from .lang.cut import (
    CHARACTERS,
    REJOINED,
    SYLLABLES,
    WORDS,
    all_char_tokens,
    describe_cut,
    is_space_token,
    rejoin,
    split_joined,
)
from .lang.detect import LanguageGuess, detect_language, language_name, validate_language
from .lang.segment import REGEX, Segmenter, char_tokens, segmenter_for
from .listing import corpus_files, refuse_system_path
from .notes import ReadNotes
from .remote import RemoteFile, content_sha256, file_identity, location
from .tagged import file_tagged_sentences
from .text import guard as _guard
from .text import open_text as _open_text
from .text import sniff_format as _sniff_format
from .text import text_units as _text_units
from .tokenize import TokenizerOptions, normalise_all, split_text

Progress = Callable[[str, float], None]

__all__ = ["COMPRESSIONS", "FORMATS", "Corpus", "ReadNotes", "TokenizedCorpus", "check_encoding", "corpus_name",
           "display_name", "format_of", "join_parts", "join_sample", "part_corpus", "refuse_system_path",
           "sample_corpus", "sample_part", "sample_units", "save_upload", "split_suffixes", "tokenize_corpus",
           "tokenize_part"]

_CHUNK_LINES = 20_000


def _noop_progress(message: str, fraction: float) -> None:
    pass


def check_encoding(name: str) -> str:
    """``name`` if Python knows it as a text encoding, else an InvalidArgument saying so."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument(f"{name!r} is not an encoding name; use e.g. utf-8, latin-1 or utf-16")
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise InvalidArgument(f"unknown encoding {name!r}; use e.g. utf-8, latin-1 or utf-16") from None
    if not getattr(info, "_is_text_encoding", True):
        raise InvalidArgument(f"{name!r} is not a text encoding; use e.g. utf-8, latin-1 or utf-16")
    return name


def corpus_name(path: Path) -> str:
    """A corpus's default name: its file's or directory's name without format and compression suffixes."""
    stem = path.name
    for suffix in (*COMPRESSIONS, *SUFFIX_FORMAT):
        if stem.lower().endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
    return stem


@dataclass(frozen=True)
class Corpus:
    """A named corpus on disk: one file, or a directory whose files together form it.

    ``fmt`` forces a format for every file; by default each file's suffix decides, and files
    with an unknown suffix are sniffed (CoNLL when most lines are ``token<TAB>tag``).
    """

    name: str
    path: Path | RemoteFile  # a URL (s3://, https://, hf://, ...) becomes a RemoteFile
    fmt: str | None = None
    text_field: str = "text"
    encoding: str | None = None
    max_bytes: int | None = None
    max_decompressed_bytes: int | None = None
    files: tuple[Path | RemoteFile, ...] = field(default=(), compare=False)
    labels: tuple[str, ...] | None = None  # names of integer NER tags (Hub-style rows); default: the data set's own
    tokens_field: str = "tokens"           # Hub-style NER rows: the token list ...
    tags_field: str = "ner_tags"           # ... and its tags
    language: str | None = None            # ISO code (de, zh, ...): overrides detection from the text

    problem: str | None = field(default=None, compare=False)
    _guess: list[LanguageGuess] = field(default_factory=list, compare=False, repr=False)  # found once, then kept

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise InvalidArgument(f"a corpus name must be text, not {type(self.name).__name__}")
        if not isinstance(self.path, (str, os.PathLike, RemoteFile)) or not str(self.path) or "\0" in str(self.path):
            raise InvalidArgument(f"{self.name}: the corpus path must be a file or directory path, not {self.path!r}")
        object.__setattr__(self, "path", location(self.path))
        if self.fmt is not None and (not isinstance(self.fmt, str) or self.fmt not in FORMATS):
            raise CorpusError(f"unknown format {self.fmt!r}; use one of {', '.join(FORMATS)}")
        if not isinstance(self.text_field, str):
            raise InvalidArgument(f"{self.name}: text_field must be text (a JSONL field or CSV column name)")
        for label, value in (("tokens_field", self.tokens_field), ("tags_field", self.tags_field)):
            if not isinstance(value, str) or not value:
                raise InvalidArgument(f"{self.name}: {label} must be a column name")
        if self.labels is not None:
            if isinstance(self.labels, str) or any(bad_label_name(n) for n in self.labels):
                why = "" if isinstance(self.labels, str) else next(bad_label_name(n) for n in self.labels)
                raise InvalidArgument(f"{self.name}: labels must be a list of tag names{f' ({why})' if why else ''}")
            object.__setattr__(self, "labels", tuple(self.labels))
        if self.encoding is not None:
            check_encoding(self.encoding)
        if self.language is not None:
            object.__setattr__(self, "language", validate_language(self.language))
        for label, limit in (("max_bytes", self.max_bytes), ("max_decompressed_bytes", self.max_decompressed_bytes)):
            if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
                raise InvalidArgument(f"{self.name}: {label} must be a positive whole number of bytes")
        if self.problem is None and not self.files:
            object.__setattr__(self, "files", tuple(self._list_files()))

    @classmethod
    def unreadable(cls, name: str, path: Path | RemoteFile | str, problem: str) -> Corpus:
        """A corpus that could not even be listed: kept (so its cells can say why) but never read."""
        return cls(name=name, path=path, problem=problem)

    def check_readable(self) -> None:
        """Raise the CorpusError found when the corpus was listed, if any."""
        if self.problem is not None:
            raise CorpusError(self.problem)

    @classmethod
    def from_path(cls, path: Path | RemoteFile | str, name: str | None = None, storage_options: Any = None,
                  **options: Any) -> Corpus:
        """A corpus named after the file's or directory's stem; a URL is opened with ``storage_options``
        (fsspec's, e.g. an endpoint or credentials; by default fsspec's own look-up: environment, config files)."""
        if not isinstance(path, (str, os.PathLike, RemoteFile)):
            raise InvalidArgument(f"a corpus path must be a file or directory path, not {type(path).__name__}")
        path = location(path, storage_options)
        return cls(name=corpus_name(path) if name is None else name, path=path, **options)

    def _list_files(self) -> list[Path | RemoteFile]:
        return corpus_files(self.path, self.name, self.max_bytes)  # the one rule (simcore.corpora.listing)

    @property
    def size_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.files)

    def raw_fingerprint(self, options: TokenizerOptions) -> str:
        """Hash of the files' bytes and every option that shapes the tokens."""
        self.check_readable()
        if not isinstance(options, TokenizerOptions):
            raise InvalidArgument(f"options must be TokenizerOptions, not {type(options).__name__}")
        hub_fields = [self.labels, self.tokens_field, self.tags_field]
        hub = [] if hub_fields == [None, "tokens", "ner_tags"] else hub_fields  # older keys kept
        return digest(self.content_digest(), self.text_field, self.encoding, options.as_dict(),
                      *hub, *self.segmentation_key())

    def content_digest(self) -> str:
        """Hash of the files' bytes and formats (what :meth:`raw_fingerprint` reads). Local files
        are hashed once while their inode, size and times stay as they were (kept in this process
        and, with :func:`keep_facts_in`, in the store): a page that asks again reads no byte."""
        self.check_readable()
        key = _stat_key(self)
        found = _CONTENT.get(key) if key is not None else None
        if found is None and key is not None:
            record = _read_fact(FACT_CONTENT, digest(FACT_CONTENT, key))
            found = record.get("sha256") if record is not None else None
            if not isinstance(found, str) or len(found) != 64:
                found = None
        if found is None:
            found = self._hash_files()
            if key is not None and _settled(key):
                _keep_fact(FACT_CONTENT, digest(FACT_CONTENT, key), {"sha256": found})
        if key is not None and _settled(key):
            if len(_CONTENT) >= 100_000:
                _CONTENT.clear()
            _CONTENT[key] = found
        return found

    def _hash_files(self) -> str:
        h = hashlib.sha256()
        for f in self.files:
            try:
                remote = file_identity(f)  # a remote object: its URL, size and version, not its bytes
                if remote is not None:
                    h.update(remote.encode())
                elif isinstance(f, RemoteFile):
                    h.update(content_sha256(f, self.name).encode())
                else:
                    with open(f, "rb") as handle:
                        for chunk in iter(lambda: handle.read(1 << 20), b""):
                            h.update(chunk)
            except OSError as exc:
                raise CorpusError(f"{self.name}: cannot read {f.name} ({exc.strerror or exc})") from exc
            h.update(b"\0" + (self.fmt or format_of(f.name) or "?").encode())
        return h.hexdigest()

    def units(self, progress: Progress = _noop_progress, notes: ReadNotes | None = None,
              keep_spaces: bool = False) -> Iterator[str | list[str]]:
        """Each unit of text: a raw string, or a token list for pre-tokenized input.

        Lines skipped or repaired on the way are counted in ``notes`` when given. With
        ``keep_spaces``, a character-tagged CoNLL file's space rows come as ``" "`` tokens
        (:mod:`.lang.cut`), else are skipped.
        """
        self.check_readable()
        total = max(1, self.size_bytes)
        done = 0
        missing: list[str] = []
        for f in self.files:
            try:
                for unit, position in _read_file(f, self, notes, keep_spaces):
                    yield unit
                    if position is not None:
                        progress(f"reading {self.name}", min(1.0, (done + position) / total))
            except MissingColumn as exc:  # one shard of many without the column: said and counted, not fatal
                if len(self.files) == 1:
                    raise
                missing.append(str(exc))
                if notes is not None:
                    notes.note("skipped", str(exc).removeprefix(f"{self.name}: "), "shard without the text column")
            done += f.stat().st_size
        if missing and len(missing) == len(self.files):
            raise CorpusError(missing[0])

    def tagged_sentences(self, notes: ReadNotes | None = None) -> Iterator[tuple[list[str], list[str]]]:
        """(tokens, IOB2 tags) for each tagged sentence (CoNLL, CoNLL-U, Hub-style NER rows); raw text has none.

        Rows and tokens skipped, tags rewritten from another scheme and the scheme found go into ``notes``.
        """
        self.check_readable()
        for f in self.files:
            yield from file_tagged_sentences(f, self.file_format(f), self, notes)

    def token_units(self, options: TokenizerOptions = TokenizerOptions(),
                    progress: Progress = _noop_progress, notes: ReadNotes | None = None) -> Iterator[list[str]]:
        """Normalised tokens of every non-empty unit: raw text cut by the corpus's language's segmenter,
        pre-tokenized input kept; with ``options.chars``, words of scripts without spaces as characters."""
        tokens_of = unit_tokenizer(self.segmenter(), options)
        for unit in self.units(progress, notes, keep_spaces=options.cut == REJOINED):
            tokens = tokens_of(unit)
            if tokens:
                yield tokens

    def language_guess(self) -> LanguageGuess:
        """The corpus's language and script: ``language`` when given, else detected from its first units
        (a bounded read, whatever the corpus's size); found once per corpus object."""
        if not self._guess:
            self.check_readable()
            self._guess.append(self._stored_guess() or self._detect())
        return self._guess[0]

    def _guess_key(self) -> str | None:
        """The language guess's key in the store: the files' content and what shapes their units."""
        if not _FACTS or _stat_key(self) is None:
            return None
        return digest(FACT_LANGUAGE, GUESS_VERSION, self.content_digest(), self.text_field,
                      self.encoding, self.labels, self.tokens_field, self.tags_field, self.language)

    def _stored_guess(self) -> LanguageGuess | None:
        key = self._guess_key()
        record = _read_fact(FACT_LANGUAGE, key) if key is not None else None
        try:
            return None if record is None else LanguageGuess(
                str(record["language"]), str(record["script"]), float(record["confidence"]),
                record["method"])
        except (KeyError, TypeError, ValueError):
            return None

    def _detect(self) -> LanguageGuess:
        guess = detect_language(itertools.islice(self.units(), DETECT_UNITS), given=self.language)
        key = self._guess_key()
        if key is not None:
            _keep_fact(FACT_LANGUAGE, key, {**guess.as_dict(), "confidence": guess.confidence})
        return guess

    def segmenter(self) -> Segmenter:
        """How this corpus's raw text is cut into words (see :mod:`simcore.corpora.lang.segment`)."""
        guess = self.language_guess()
        return segmenter_for(guess.language, guess.script)

    def language_note(self, cut: str | None = None) -> str:
        """'German (de), Latin script, detected (py3langid, 99% sure); words cut by spacy-de': what the
        corpus is read as, for the CLI's notes and the Corpora page. A target's ``cut`` other than
        ``"words"`` (:mod:`.lang.cut`) is said instead of the words' cut."""
        guess = self.language_guess()
        how = {"given": "given", "script": "told by its script",
               "detector": f"detected (py3langid, {guess.confidence:.0%} sure)"}.get(guess.method, guess.method)
        content = content_words_method(guess.working_language)
        tvcc = f"TVcC's {content.reason}" if content.kind else f"TVcC not computed: {content.reason}"
        words = (f"words cut by {self.segmenter().name}" if cut in (None, WORDS)
                 else f"{describe_cut(cut)} (segmenter: {self.segmenter().name})")
        return f"{language_name(guess.language)}, {guess.script} script, {how}; {words}; {tvcc}"

    def segmentation_key(self) -> list[dict[str, str]]:
        """What the segmenter adds to fingerprints: nothing for the English regex (keys made before
        languages existed stay valid), else its name and its library's version."""
        found = self.segmenter().fingerprint()
        return [found] if found else []

    def file_format(self, f: Path | RemoteFile) -> str:
        """The format one of the corpus's files is read as: the given one, its suffix's, or sniffed."""
        return self.fmt or format_of(f.name) or _sniff_format(f, self)


# Facts found about a corpus's files, kept by their content (Corpus.content_digest): the
# files' hash by their inode, size and times, and the language guess by that hash.
FACT_CONTENT, FACT_LANGUAGE = "corpus-content", "language-guess"
GUESS_VERSION = 1  # raised when detection changes: guesses stored before are found again no more
SETTLED_S = 2.0  # a file changed less than this long ago may change again within its times' grain
_CONTENT: dict[tuple[Any, ...], str] = {}  # stat identities -> content digest, this process
_FACTS: list[ArtefactStore] = []  # the store facts are kept in (keep_facts_in), if any


def keep_facts_in(store: ArtefactStore | None) -> None:
    """Keep the facts found about corpus files (their content hash, their language) in ``store``,
    where this and later processes read them back; None keeps them in this process only. The
    dashboard's server sets its store, so that its first visit of a page detects nothing again."""
    _FACTS[:] = [] if store is None else [store]


def _read_fact(kind: str, key: str) -> dict[str, Any] | None:
    """A fact kept in the store, or None (none kept, no store, or a store that cannot be read)."""
    try:
        record = _FACTS[0].get_json(kind, key) if _FACTS else None
    except (SimcoreError, OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _keep_fact(kind: str, key: str, record: dict[str, Any]) -> None:
    """Keep a fact in the store when there is one; a store that cannot take it (full, read-only)
    only means it is found again next time."""
    if _FACTS:
        with contextlib.suppress(SimcoreError, OSError):
            _FACTS[0].put_json(kind, key, record, log=False)


def _stat_key(corpus: Corpus) -> tuple[Any, ...] | None:
    """The files' paths, inodes, sizes, times and formats; None for a remote file or one gone."""
    out: list[Any] = []
    for f in corpus.files:
        if isinstance(f, RemoteFile):
            return None
        try:
            info = os.stat(f)
        except OSError:
            return None
        out.append((str(f), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
                    info.st_ctime_ns, corpus.fmt or format_of(f.name) or "?"))
    return tuple(out)


def _settled(key: tuple[Any, ...]) -> bool:
    """Whether every file was last changed long enough ago that a change now gives it new times
    (a file rewritten within a timestamp's grain can keep its size and times)."""
    now = time.time_ns()
    return all(now - max(entry[4], entry[5]) > SETTLED_S * 1e9 for entry in key)


DETECT_UNITS = 1_000  # units read to tell a corpus's language (detect_language reads at most 20,000 characters)


def unit_tokenizer(segmenter: Segmenter, options: TokenizerOptions) -> Callable[[str | list[str] | tuple[str, ...]], list[str]]:
    """The tokens of one unit: raw text cut by ``segmenter``, a token list kept; normalised; with
    ``options.chars``, words of scripts written without spaces cut into characters."""
    split = split_text if segmenter.name == REGEX else segmenter.split

    def tokens_of(unit: str | list[str] | tuple[str, ...]) -> list[str]:
        if isinstance(unit, str):
            tokens = split(unit)
        else:
            tokens = list(unit)
            if options.cut == REJOINED and any(is_space_token(t) for t in tokens):
                tokens = rejoin(tokens, split)
        if options.cut == SYLLABLES:
            tokens = split_joined(tokens)
        tokens = normalise_all(tokens, options)
        if options.cut == CHARACTERS:
            return all_char_tokens(tokens)
        return char_tokens(tokens) if options.chars else tokens

    return tokens_of


def _read_file(path: Path, corpus: Corpus, notes: ReadNotes | None = None,
               keep_spaces: bool = False) -> Iterator[tuple[str | list[str], int | None]]:
    fmt = corpus.file_format(path)
    if fmt in COLUMNAR:
        for unit in columnar_units(path, fmt, corpus, notes):
            yield unit, None
        return
    text, raw = _open_text(path, corpus)
    with text:
        if fmt == "conll":
            units: Iterator[Any] = (
                tokens for tokens, _ in _conll_sentences(text, path.name, with_tags=False, corpus=corpus,
                                                        notes=notes, keep_spaces=keep_spaces)
            )
        else:
            units = {"text": _text_units, "jsonl": _jsonl_units, "csv": _csv_units,
                     "conllu": _conllu_units}[fmt](text, path.name, corpus, notes)
        for number, unit in enumerate(_guard(units, corpus, path), 1):
            yield unit, (raw.tell() if number % _CHUNK_LINES == 0 else None)


@dataclass(frozen=True)
class TokenizedCorpus:
    """A corpus after tokenization (or a sample of one), as stored in the artefact store."""

    name: str
    path: Path
    fingerprint: str
    n_tokens: int
    n_units: int
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def read_notes(self) -> ReadNotes:
        """Lines the reader skipped or repaired while tokenizing (none for samples)."""
        return ReadNotes.from_dict(self.meta.get("read_notes"))

    @property
    def tokens_file(self) -> Path:
        return self.path / "tokens.txt"

    def lengths(self) -> np.ndarray:
        return np.load(self.path / "lengths.npy")

    def sentences(self) -> Iterator[list[str]]:
        with open(self.tokens_file, encoding="utf-8") as f:
            for line in f:
                yield line.split()

    def line_chunks(self, lines_per_chunk: int = _CHUNK_LINES) -> Iterator[list[str]]:
        """Lines (token strings joined by spaces) in chunks, for vectorised counting."""
        with open(self.tokens_file, encoding="utf-8") as f:
            chunk: list[str] = []
            for line in f:
                chunk.append(line)
                if len(chunk) >= lines_per_chunk:
                    yield chunk
                    chunk = []
            if chunk:
                yield chunk


def from_artefact(name: str, path: Path, store: ArtefactStore) -> TokenizedCorpus:
    """The tokenized corpus stored at ``path`` (a tokens, sample or part artefact)."""
    meta = store.meta(path)
    return TokenizedCorpus(
        name=name, path=path, fingerprint=meta["fingerprint"], n_tokens=meta["n_tokens"],
        n_units=meta["n_units"], meta=meta,
    )


def _counted(corpus: Corpus, out: Path) -> dict[str, Any]:
    """``{"counts": ...}``: the statistics of the token file just written (:func:`.corpus_counts.corpus_counts`),
    kept with the tokens so that showing them reads them (the file is still in the page cache);
    nothing when the tags cannot be read again (a bad row, a remote file gone), which then fail, or
    not, where the statistics are asked for: the tokens are kept either way."""
    try:
        return {"counts": {"version": COUNTS_VERSION, **corpus_counts(out / "tokens.txt", corpus.tagged_sentences)}}
    except (SimcoreError, OSError):
        return {}


def write_tokens(lines: Iterable[list[str]], out: Path) -> tuple[str, int, int]:
    """Write token lines; return (sha256 of the text, tokens, units)."""
    h = hashlib.sha256()
    lengths = array("i")  # 4 bytes a unit, not a Python int each
    with open(out / "tokens.txt", "w", encoding="utf-8") as f:
        buffer: list[str] = []
        for tokens in lines:
            line = " ".join(tokens)
            buffer.append(line)
            lengths.append(len(tokens))
            if len(buffer) >= _CHUNK_LINES:
                text = "\n".join(buffer) + "\n"
                f.write(text)
                h.update(text.encode("utf-8"))
                buffer = []
        if buffer:
            text = "\n".join(buffer) + "\n"
            f.write(text)
            h.update(text.encode("utf-8"))
    counts = np.frombuffer(lengths, dtype=np.int32) if len(lengths) else np.zeros(0, dtype=np.int32)
    np.save(out / "lengths.npy", counts)
    return h.hexdigest(), int(counts.sum(dtype=np.int64)), len(counts)


def tokenize_corpus(
    corpus: Corpus,
    store: ArtefactStore,
    options: TokenizerOptions = TokenizerOptions(),
    progress: Progress = _noop_progress,
    raw_key: str | None = None,
) -> TokenizedCorpus:
    """Tokenize a corpus once; later calls (any process) reuse the stored result.

    ``raw_key`` is the corpus's :meth:`Corpus.raw_fingerprint` when the caller already has it.
    """
    if not isinstance(corpus, Corpus):
        raise InvalidArgument(f"tokenize_corpus needs a Corpus, not {type(corpus).__name__}")
    if not isinstance(store, ArtefactStore):
        raise InvalidArgument(f"tokenize_corpus needs an ArtefactStore, not {type(store).__name__}")
    key = raw_key or corpus.raw_fingerprint(options)

    def build(out: Path) -> dict[str, Any]:
        notes = ReadNotes()
        text_hash, n_tokens, n_units = write_tokens(corpus.token_units(options, progress, notes), out)
        if n_tokens == 0:
            raise CorpusError(f"{corpus.name}: no words found in {corpus.path.name}")
        return {
            "fingerprint": digest("tokens", text_hash, options.as_dict()),
            "n_tokens": n_tokens,
            "n_units": n_units,
            "options": options.as_dict(),
            "read_notes": notes.as_dict(),
            **_counted(corpus, out),
        }

    path = store.build("tokens", key, build)
    return from_artefact(corpus.name, path, store)


def _selected_units(tokens_file: Path, keep: np.ndarray) -> Iterator[list[str]]:
    """The units (lines) of a stored token file where ``keep`` is true, in file order."""
    with open(tokens_file, encoding="utf-8") as f:
        for selected, line in zip(keep, f):
            if selected:
                yield line.split()


_MAX_DRAW = 2**63 - 1  # sample_corpus's sizes, indices and seeds: numpy's 64-bit integers


def sample_corpus(
    tokenized: TokenizedCorpus,
    n_tokens: int,
    index: int,
    store: ArtefactStore,
    seed: int = 13,
) -> TokenizedCorpus:
    """Sub-corpus ``index`` of about ``n_tokens`` tokens: random units, original order.

    Units are drawn from the whole corpus with a fixed seed (never its first N tokens, which
    would be topically narrow for corpora stored by document). When the corpus has no more than
    ``n_tokens`` tokens, the sample is the corpus itself.
    """
    if not isinstance(tokenized, TokenizedCorpus):
        raise InvalidArgument(f"sample_corpus needs a TokenizedCorpus (from tokenize_corpus), "
                              f"not {type(tokenized).__name__}")
    for label, value, low in (("n_tokens", n_tokens, 1), ("index", index, 0), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= _MAX_DRAW:
            raise InvalidArgument(f"{label} must be a whole number from {low} to {_MAX_DRAW:,}, not {value!r}"[:200])
    if not isinstance(store, ArtefactStore):
        raise InvalidArgument(f"store must be an ArtefactStore, not {type(store).__name__}")
    n_tokens, index, seed = int(n_tokens), int(index), int(seed)
    if n_tokens >= tokenized.n_tokens:
        return tokenized
    key = sample_fingerprint(tokenized, n_tokens, index, seed)

    def build(out: Path) -> dict[str, Any]:
        keep = sample_units(tokenized.lengths(), n_tokens, index, seed)
        _, count, units = write_tokens(_selected_units(tokenized.tokens_file, keep), out)
        return _sample_record(tokenized, key, count, units, n_tokens, index, seed)

    path = store.build("sample", key, build)
    return from_artefact(tokenized.name, path, store)


def sample_fingerprint(tokenized: TokenizedCorpus, n_tokens: int, index: int,
                       seed: int = 13) -> str:
    """The fingerprint (and store key) of :func:`sample_corpus`'s sample, known without drawing it:
    the corpus's own when it has no more than ``n_tokens`` tokens."""
    if n_tokens >= tokenized.n_tokens:
        return tokenized.fingerprint
    return digest("sample", tokenized.fingerprint, int(n_tokens), int(index), int(seed))


def sample_drawn(tokenized: TokenizedCorpus, n_tokens: int, index: int, store: ArtefactStore,
                 seed: int = 13) -> bool:
    """Whether :func:`sample_corpus` would find its sample in the store (or the corpus is the
    sample)."""
    key = sample_fingerprint(tokenized, n_tokens, index, seed)
    return n_tokens >= tokenized.n_tokens or store.get("sample", key) is not None


def _sample_record(tokenized: TokenizedCorpus, key: str, count: int, units: int, n_tokens: int, index: int,
                   seed: int) -> dict[str, Any]:
    """The manifest record of a sub-corpus, however its tokens were written (one process or joined parts)."""
    return {
        "fingerprint": key,
        "n_tokens": count,
        "n_units": units,
        "parent": tokenized.fingerprint,
        "options": tokenized.meta.get("options", {}),
        "sample": {"n_tokens": n_tokens, "index": index, "seed": seed},
    }


def sample_units(lengths: np.ndarray, n_tokens: int, index: int, seed: int) -> np.ndarray:
    """Which units sub-corpus ``index`` keeps (a boolean mask): a seeded permutation of all units,
    taken until it holds ``n_tokens`` tokens. It depends only on the lengths, never on who reads them."""
    order = np.random.default_rng([seed, index]).permutation(len(lengths))
    cumulative = np.cumsum(lengths[order])
    take = int(np.searchsorted(cumulative, n_tokens)) + 1
    keep = np.zeros(len(lengths), dtype=bool)
    keep[order[:take]] = True
    return keep


# Sharded corpora: each file of a corpus is tokenized (and sampled) on its own, possibly in other
# processes or on other machines, and the parts are joined into exactly the artefacts that
# tokenize_corpus and sample_corpus make of the whole (same bytes, same fingerprints, same keys).


def part_corpus(corpus: Corpus, file: Path) -> Corpus:
    """One file of a corpus as a corpus of its own, read with the same options."""
    return replace(corpus, path=file, files=(file,), _guess=list(corpus._guess) or [corpus.language_guess()])


def tokenize_part(corpus: Corpus, file: Path, store: ArtefactStore,
                  options: TokenizerOptions = TokenizerOptions(),
                  progress: Progress = _noop_progress) -> TokenizedCorpus:
    """One file (shard) of ``corpus`` tokenized and stored under its own fingerprint; it may hold no words."""
    part = part_corpus(corpus, file)

    def build(out: Path) -> dict[str, Any]:
        notes = ReadNotes()
        text_hash, n_tokens, n_units = write_tokens(part.token_units(options, progress, notes), out)
        return {"fingerprint": digest("tokens", text_hash, options.as_dict()), "n_tokens": n_tokens,
                "n_units": n_units, "options": options.as_dict(), "read_notes": notes.as_dict()}

    return from_artefact(corpus.name, store.build("tokens-part", part.raw_fingerprint(options), build), store)


def _concatenate(parts: Iterable[TokenizedCorpus], out: Path) -> tuple[str, int, int]:
    """Join the parts' token files and lengths; return (sha256 of the text, tokens, units)."""
    h = hashlib.sha256()
    with open(out / "tokens.txt", "wb") as f:
        lengths = []
        for part in parts:
            with open(part.tokens_file, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    h.update(chunk)
                    f.write(chunk)
            lengths.append(part.lengths())
    counts = np.concatenate(lengths).astype(np.int32) if lengths else np.zeros(0, dtype=np.int32)
    np.save(out / "lengths.npy", counts)
    return h.hexdigest(), int(counts.sum(dtype=np.int64)), len(counts)


def join_parts(corpus: Corpus, parts: list[TokenizedCorpus], store: ArtefactStore,
               options: TokenizerOptions = TokenizerOptions(), raw_key: str | None = None) -> TokenizedCorpus:
    """The tokenized corpus from its files' parts, in file order: what :func:`tokenize_corpus` makes."""
    key = raw_key or corpus.raw_fingerprint(options)

    def build(out: Path) -> dict[str, Any]:
        text_hash, n_tokens, n_units = _concatenate(parts, out)
        if n_tokens == 0:
            raise CorpusError(f"{corpus.name}: no words found in {corpus.path.name}")
        notes = ReadNotes()
        for part in parts:
            found = part.read_notes
            notes.skipped += found.skipped
            notes.repaired += found.repaired
            notes.examples = (notes.examples + found.examples)[:5]
        return {"fingerprint": digest("tokens", text_hash, options.as_dict()), "n_tokens": n_tokens,
                "n_units": n_units, "options": options.as_dict(), "read_notes": notes.as_dict(),
                **_counted(corpus, out)}

    return from_artefact(corpus.name, store.build("tokens", key, build), store)


def sample_part(part: TokenizedCorpus, position: int, rows: np.ndarray, key: str,
                store: ArtefactStore) -> TokenizedCorpus:
    """The units ``rows`` (indices) of the part at ``position``, for the sample ``key`` of the whole corpus."""
    part_key = digest(key, position, part.fingerprint)

    def build(out: Path) -> dict[str, Any]:
        wanted = np.zeros(part.n_units, dtype=bool)
        wanted[rows] = True
        _, count, units = write_tokens(_selected_units(part.tokens_file, wanted), out)
        return {"fingerprint": part_key, "n_tokens": count, "n_units": units}

    return from_artefact(part.name, store.build("sample-part", part_key, build), store)


def join_sample(tokenized: TokenizedCorpus, parts: list[TokenizedCorpus], n_tokens: int, index: int,
                store: ArtefactStore, seed: int = 13) -> TokenizedCorpus:
    """Sub-corpus ``index`` from its parts (see :func:`sample_part`): what :func:`sample_corpus` makes."""
    if n_tokens >= tokenized.n_tokens:
        return tokenized
    key = digest("sample", tokenized.fingerprint, n_tokens, index, seed)

    def build(out: Path) -> dict[str, Any]:
        _, count, units = _concatenate(parts, out)
        return _sample_record(tokenized, key, count, units, n_tokens, index, seed)

    return from_artefact(tokenized.name, store.build("sample", key, build), store)


def save_upload(data: bytes, filename: str, store: ArtefactStore) -> Path:
    """Keep uploaded bytes in the store, named by their hash (never by the upload's name).

    The suffixes that matter (format, compression) are taken from a fixed list, so the
    uploaded name cannot choose a path or an extension of its own.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidArgument(f"the upload must be bytes, not {type(data).__name__}")
    if not isinstance(filename, str):
        raise InvalidArgument(f"the upload's file name must be text, not {type(filename).__name__}")
    if not isinstance(store, ArtefactStore):
        raise InvalidArgument(f"store must be an ArtefactStore, not {type(store).__name__}")
    data = bytes(data)
    fmt_suffix, compression = split_suffixes(filename)
    suffix = (fmt_suffix if fmt_suffix in SUFFIX_FORMAT else ".txt") + (compression or "")
    key = hashlib.sha256(data).hexdigest()

    def build(out: Path) -> dict[str, Any]:
        (out / f"upload{suffix}").write_bytes(data)
        return {"suffix": suffix}

    path = store.build("upload", digest(key, suffix), build)
    return path / f"upload{suffix}"


def display_name(filename: str) -> str:
    """A safe, short display name from an uploaded file's name."""
    base = os.path.basename(filename.replace("\\", "/"))
    for suffix in (*COMPRESSIONS, *SUFFIX_FORMAT):
        if base.lower().endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
    cleaned = re.sub(r"[^\w.\- ]", "_", base).strip(". ") or "upload"
    return cleaned[:60]
