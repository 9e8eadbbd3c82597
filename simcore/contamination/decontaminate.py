"""A source without the units that hold the target's sentences: ``simcore decontaminate``.

The source is streamed line by line (plain text, JSONL, compressed or not, local or at a URL, one
file or a folder of them): a line whose unit (the line, or the JSONL record's text) shares an
n-gram with the target (:mod:`simcore.contamination.ngrams`, the overlap the matrix reports) is left out, every
other line is written byte for byte, so the clean copy differs only by the dropped units (a
compressed file is written compressed the same way: its decompressed bytes are the original's).
Memory is the target's hashes and one batch of lines, whatever the source's size. Units are never
edited (DESIGN.md: whole units only).
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from ..corpora.compression import open_binary
from ..corpora.corpus import Corpus, unit_tokenizer
from ..corpora.formats import split_suffixes
from ..corpora.tokenize import TokenizerOptions
from ..utils.errors import CorpusError, InvalidArgument
from ..utils.output_paths import refuse_overwriting_inputs
from ..utils.store import ArtefactStore, digest
from .ngrams import BATCH_UNITS, Scanner, TargetIndex, target_sentences
from .scan import OverlapOptions

Progress = Callable[[str, float], None]
LINE_FORMATS = ("text", "jsonl")
_WRITERS: dict[str, Callable[..., IO[bytes]]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


@dataclass
class Decontamination:
    """What a run dropped and kept."""

    units: int = 0
    units_dropped: int = 0
    tokens_dropped: int = 0  # simcore's tokens of the dropped units
    files: int = 0
    n: int = 0
    unit: str = "words"

    def summary(self, source: str, target: str, out: str) -> str:
        share = self.units_dropped / self.units if self.units else 0.0
        return (f"{source}: dropped {self.units_dropped:,} of {self.units:,} units ({share:.2%}), "
                f"{self.tokens_dropped:,} tokens, sharing a {self.n}-{self.unit.rstrip('s')} n-gram with "
                f"{target}; wrote {out}")


def decontaminate(source: Corpus, target: Corpus, out: Path | str, *, tokenizer: TokenizerOptions = TokenizerOptions(),
                  overlap: OverlapOptions = OverlapOptions(), test_only: bool = False, chars: bool | None = None,
                  progress: Progress = lambda m, f: None) -> Decontamination:
    """Write ``source`` to ``out`` without the units that overlap ``target`` (its test split only with
    ``test_only``). ``out`` is a file for a one-file source, a folder for a folder (same names inside).
    ``chars``: the target is cut into characters (found from the target when None)."""
    for label, value in (("source", source), ("target", target)):
        if not isinstance(value, Corpus):
            raise InvalidArgument(f"the {label} must be a Corpus, not {type(value).__name__}")
    source.check_readable()
    target.check_readable()
    out = Path(out)
    refuse_overwriting_inputs({"--out": out}, {"--source": [str(f) for f in source.files if isinstance(f, Path)],
                                               "--target": [str(f) for f in target.files if isinstance(f, Path)]})
    for f in source.files:
        fmt = source.file_format(f)
        if fmt not in LINE_FORMATS:
            raise CorpusError(f"{source.name}: {f.name} is {fmt}; decontaminate writes sources of one unit a line "
                              "(plain text or JSONL, compressed or not): convert it to one of those first")
    if chars is None:
        from ..corpora.lang.scripts import NO_SPACE_SCRIPTS
        from ..corpora.lang.segment import is_char_tokenized

        chars = (target.language_guess().script in NO_SPACE_SCRIPTS
                 and is_char_tokenized(t for t, _ in target_sentences(target, tokenizer)))
    if chars:
        tokenizer = replace(tokenizer, chars=True)
    n, min_words = overlap.n_for(chars)
    sentences = [(t, test) for t, test in target_sentences(target, tokenizer) if test or not test_only]
    if not sentences:
        raise CorpusError(f"{target.name}: no {'test ' if test_only else ''}sentences to decontaminate against"
                          + (" (no file of the target is named test)" if test_only else ""))
    index = TargetIndex.build(target.name, sentences, n, min_words)
    scanner = Scanner([index], unit_tokenizer(source.segmenter(), tokenizer))
    report = Decontamination(n=n, unit="characters" if chars else "words")
    many = len(source.files) > 1 or (isinstance(source.path, Path) and source.path.is_dir())
    if many:
        out.mkdir(parents=True, exist_ok=True)
    total = max(1, len(source.files))
    for number, f in enumerate(source.files):
        if many:
            relative = Path(f.relative_to(source.path)) if isinstance(f, Path) and isinstance(source.path, Path) \
                else Path(f.name)
            target_path = out / relative
            target_path.parent.mkdir(parents=True, exist_ok=True)
        else:
            target_path = out
        progress(f"decontaminating {source.name}: {f.name}", number / total)
        _file(source, f, target_path, scanner, report)
        report.files += 1
    progress("done", 1.0)
    return report


def _unit_of(line: bytes, fmt: str, text_field: str, encoding: str) -> str | list[str] | None:
    """The unit a line holds (None: a blank line, or a JSONL line without text: kept as it is)."""
    text = line.decode(encoding, "replace")
    if fmt == "text":
        return text if text.strip() else None
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    value = record.get(text_field)
    if isinstance(value, str) and value.strip():
        return value
    tokens = record.get("tokens")
    if isinstance(tokens, list) and tokens and all(isinstance(t, str) for t in tokens):
        return tokens
    return None


def _file(source: Corpus, f: Any, out: Path, scanner: Scanner, report: Decontamination) -> None:
    fmt = source.file_format(f)
    encoding = source.encoding or "utf-8"
    _, compression = split_suffixes(out.name)
    opener = _WRITERS.get(compression or "", open)
    stream, raw = open_binary(f, source)
    partial = out.with_name(f".{out.name}.partial")
    try:
        with stream, raw, opener(partial, "wb") as sink:
            batch: list[tuple[bytes, Any]] = []
            for line in stream:
                batch.append((line, _unit_of(line, fmt, source.text_field, encoding)))
                if len(batch) >= BATCH_UNITS:
                    _write(batch, sink, scanner, report)
                    batch = []
            _write(batch, sink, scanner, report)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)


def _write(batch: list[tuple[bytes, Any]], sink: IO[bytes], scanner: Scanner, report: Decontamination) -> None:
    """Test a batch of lines at once (the cheap test, then the exact one), write those that do not overlap."""
    units = [(i, u) for i, (_, u) in enumerate(batch) if u is not None]
    dropped: set[int] = set()
    for k, tokens in scanner.scan([u for _, u in units]).items():
        dropped.add(units[k][0])
        report.tokens_dropped += tokens
    report.units += len(units)
    report.units_dropped += len(dropped)
    sink.write(b"".join(line for i, (line, _) in enumerate(batch) if i not in dropped))


def stored_copy(source: Corpus, target: Corpus, store: ArtefactStore, *, tokenizer: TokenizerOptions = TokenizerOptions(),
                overlap: OverlapOptions = OverlapOptions(), test_only: bool = False,
                progress: Progress = lambda m, f: None) -> tuple[Path, dict[str, Any]]:
    """The clean copy kept in the artefact store (for the dashboard): its path and what was dropped.

    Keyed by both corpora's contents and the options; named ``clean`` plus the source's own suffixes
    (never by an uploaded name), or a folder ``clean`` holding the source folder's files.
    """
    key = digest("decontaminated", source.raw_fingerprint(tokenizer), target.raw_fingerprint(tokenizer),
                 overlap.ngram, overlap.char_ngram, test_only)
    many = len(source.files) > 1 or (isinstance(source.path, Path) and source.path.is_dir())
    fmt_suffix, compression = split_suffixes(source.files[0].name)
    name = "clean" if many else f"clean{fmt_suffix or '.txt'}{compression or ''}"

    def build(folder: Path) -> dict[str, Any]:
        report = decontaminate(source, target, folder / name, tokenizer=tokenizer, overlap=overlap,
                               test_only=test_only, progress=progress)
        return {"report": report.__dict__, "name": name}

    path = store.build("decontaminated", key, build)
    return path / name, store.meta(path).get("report", {})
