"""Adding corpora, matrices and NER results to the session's state (no widgets here)."""

from __future__ import annotations

import dataclasses
import io
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from simcore.corpora.corpus import Corpus, corpus_name, display_name, save_upload
from simcore.corpora.formats import format_of
from simcore.corpora.lang.detect import known_languages, language_name
from simcore.corpora.listing import corpus_files
from simcore.corpora.remote import is_url
from simcore.matrix.corpus_cache import corpora_in
from simcore.measures.lookup import all_measures
from simcore.reporting.export import unescape_formula
from simcore.utils.errors import SimcoreError

from .paths import SAMPLE_DATA, TABLE3, UPLOAD_DECOMPRESSED_LIMIT, resolve_server_path, resolve_server_url
from .resources import get_store, get_workbench
from .state import AppState, LoadedCorpus, NamedMatrix, unique_name

ROLES = ("source", "target")
UPLOAD_TYPES = ["txt", "text", "tok", "raw", "jsonl", "ndjson", "json", "csv", "conll", "conllu", "bio", "iob",
                "iob2", "bioes", "ner", "tsv", "gz", "bz2", "xz", "zst", "zstd", "parquet", "pq", "arrow"]
FORMAT_CHOICES = {"detect from the file name": None, "plain text": "text", "JSONL": "jsonl", "CSV": "csv",
                  "CoNLL / BIO": "conll"}


def _bucket(state: AppState, role: str) -> dict[str, LoadedCorpus]:
    if role not in ROLES:
        raise SimcoreError(f"unknown role {role!r}")
    return state.sources if role == "source" else state.targets


def _check(corpus: Corpus) -> None:
    """Read the corpus once (tokenizing it into the store) so that a bad file fails here, with its message."""
    get_workbench().tokenize(corpus)


def add_corpus(state: AppState, role: str, corpus: Corpus, origin: str, replace: bool = False) -> str:
    bucket = _bucket(state, role)
    _check(corpus)
    name = corpus.name if replace else unique_name(corpus.name, bucket)
    if name != corpus.name:
        corpus = Corpus.from_path(corpus.path, name=name, fmt=corpus.fmt, text_field=corpus.text_field,
                                  encoding=corpus.encoding, max_decompressed_bytes=corpus.max_decompressed_bytes)
    bucket[name] = LoadedCorpus(corpus, origin)
    return name


def add_upload(state: AppState, role: str, filename: str, data: bytes, fmt: str | None = None,
               text_field: str = "text") -> str:
    """Store uploaded bytes by hash and add them as a corpus named after the (cleaned) file name."""
    if not data:
        raise SimcoreError(f"{display_name(filename)}: the uploaded file is empty")
    path = save_upload(data, filename, get_store())
    corpus = Corpus.from_path(path, name=display_name(filename), fmt=fmt, text_field=text_field or "text",
                              max_decompressed_bytes=UPLOAD_DECOMPRESSED_LIMIT)
    return add_corpus(state, role, corpus, f"upload: {display_name(filename)}")


# File names that say nothing about the text (split names, placeholders): an upload named so is asked for a name.
VAGUE_NAMES = {"test", "dev", "train", "valid", "validation", "eval", "data", "corpus", "sample", "samples", "text",
               "texts", "input", "file", "upload", "target", "source", "all", "full", "out", "output", "new", "tmp",
               "temp", "untitled", "export", "download", "file1", "file2", "data1", "data2", "test1", "test2", "doc"}
_COPY_SUFFIX = re.compile(r"\s*\(\d+\)$")


def says_little(name: str) -> bool:
    """True for a corpus name like ``test`` or ``dev (2)``, which tells nothing about the text."""
    return _COPY_SUFFIX.sub("", name).strip().lower() in VAGUE_NAMES


def suggest_name(role: str, name: str) -> str:
    """A placeholder showing the kind of name that helps, from the vague one."""
    base = _COPY_SUFFIX.sub("", name).strip()
    if role == "target":
        return f"e.g. forum posts ({base} split)"
    return "e.g. clinical notes 2019"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 22nd."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def human_size(size: int) -> str:
    """``512 bytes``, ``14.2 kB``, ``3.1 MB``."""
    if size < 1000:
        return f"{size} bytes"
    return f"{size / 1e3:.1f} kB" if size < 1e6 else f"{size / 1e6:.1f} MB"


def upload_hint(position: int, size: int, first_line: str | None, width: int = 80,
                quote: Callable[[str], str] = str) -> str:
    """What tells two uploads of one file name apart: ``uploaded 2nd · 14.2 kB · starts “EU rejects …”``
    (``quote`` makes the file's own text inert where it is shown, e.g. in Markdown)."""
    parts = [f"uploaded {ordinal(position)}", human_size(size)]
    if first_line:
        line = " ".join(first_line.split())
        parts.append(f"starts “{quote(line if len(line) <= width else line[:width - 1] + '…')}”")
    return " · ".join(parts)


def add_server_path(state: AppState, role: str, text: str, fmt: str | None = None, text_field: str = "text",
                    per_file: bool = False) -> list[str]:
    """A server file, or a directory as one corpus (its files together) or one corpus per file: the
    files the CLI and the library would read (:func:`simcore.corpora.listing.corpus_files`).

    Returns the names added; a file that cannot be read costs only itself (its message is raised after
    the others were added, as one SimcoreError listing the failures).
    """
    if is_url(text):
        return _add_server_url(state, role, text, fmt, text_field, per_file)
    path = resolve_server_path(text)
    if path.is_file():
        return [add_corpus(state, role, Corpus.from_path(path, name=server_name(path), fmt=fmt,
                                                         text_field=text_field or "text"), f"server path: {path}")]
    if not per_file:
        corpus = Corpus(name=path.name, path=path, fmt=fmt, text_field=text_field or "text")
        return [add_corpus(state, role, corpus, f"server path: {path}")]
    files = corpus_files(path, path.name)
    return _add_each(state, role, [(lambda f=f: Corpus.from_path(f, name=server_name(f), fmt=fmt,
                                                                  text_field=text_field or "text"),
                                    f"server path: {f}") for f in files])


def server_name(path: Path) -> str:
    """A server file's corpus name: its own (``news_2019``), or with its folder's in front when its own says
    little (``conll2003/test.conll`` is ``conll2003 test``, not ``test``, ``test (2)``, ``test (3)``)."""
    name = corpus_name(path)
    folder = path.parent.name
    if says_little(name) and folder and not says_little(folder):
        return f"{folder} {name}"
    return name


def _add_each(state: AppState, role: str, corpora: list[tuple[Callable[[], Corpus], str]]) -> list[str]:
    """Add one corpus per (make, origin); one that cannot be read costs only itself: the others are
    added and the failures said as a warning, or raised as one SimcoreError when none could be added."""
    added, failed = [], []
    for make, origin in corpora:
        try:
            added.append(add_corpus(state, role, make(), origin))
        except SimcoreError as exc:
            failed.append(str(exc))
    if failed and not added:
        raise SimcoreError("; ".join(failed))
    if failed:
        state.say("warning", "Not added: " + "; ".join(failed))
    return added


def _add_server_url(state: AppState, role: str, text: str, fmt: str | None, text_field: str,
                    per_file: bool) -> list[str]:
    """An object, a folder or a glob under one of the server's remote locations (listed once, streamed)."""
    url = resolve_server_url(text)
    corpus = Corpus.from_path(url, fmt=fmt, text_field=text_field or "text")
    if not per_file or len(corpus.files) == 1:
        return [add_corpus(state, role, corpus, f"server URL: {corpus.path}")]
    return _add_each(state, role, [(lambda f=f: Corpus(name=corpus_name(f), path=f, fmt=fmt,
                                                       text_field=text_field or "text", files=(f,)),
                                    f"server URL: {f}") for f in corpus.files])


def remove(state: AppState, role: str, name: str) -> None:
    _bucket(state, role).pop(name, None)


def rename(state: AppState, role: str, old: str, new: str) -> str:
    """Give a loaded corpus another name (kept matrices keep the names they were computed with)."""
    bucket = _bucket(state, role)
    new = " ".join(new.split())
    if not new:
        raise SimcoreError("a corpus name cannot be empty")
    if old not in bucket:
        raise SimcoreError(f"{old} is not loaded any more")
    if new == old:
        return old
    if new in bucket:
        raise SimcoreError(f"there is already a {role} called {new}")
    loaded = bucket[old]
    c = loaded.corpus
    corpus = dataclasses.replace(c, name=new)  # every reading option kept, its language too
    items = [(new, LoadedCorpus(corpus, loaded.origin)) if k == old else (k, v) for k, v in bucket.items()]
    bucket.clear()
    bucket.update(items)
    return new


def set_language(state: AppState, role: str, name: str, language: str | None) -> str:
    """Read a loaded corpus as ``language`` (an ISO code) instead of the one detected from its text
    (``None``: detect again); the language's name, for the page's message."""
    bucket = _bucket(state, role)
    if name not in bucket:
        raise SimcoreError(f"{name} is not loaded any more")
    loaded = bucket[name]
    corpus = dataclasses.replace(loaded.corpus, language=language, _guess=[])
    bucket[name] = LoadedCorpus(corpus, loaded.origin)
    return language_name(corpus.language_guess().language)


def language_choices() -> dict[str, str]:
    """Every language a corpus can be read as, code -> 'German (de)', by name."""
    return dict(sorted(((code, language_name(code)) for code in known_languages() if code != "und"),
                       key=lambda item: item[1].lower()))


def load_sample(state: AppState) -> None:
    """The bundled sources and targets (replacing earlier sample corpora of the same names)."""
    for role, folder in (("source", SAMPLE_DATA / "sources"), ("target", SAMPLE_DATA / "targets")):
        for corpus in corpora_in(folder):
            add_corpus(state, role, corpus, "sample", replace=True)


def read_table(data: bytes, name: str) -> pd.DataFrame:
    """A CSV table from uploaded bytes (parsed as text only), or a SimcoreError."""
    if not data.strip():
        raise SimcoreError(f"{name} is empty")
    try:
        return pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        raise SimcoreError(f"{name} is not a readable CSV table ({exc})") from None


def guess_results_columns(table: pd.DataFrame) -> dict[str, str | None]:
    """Which columns hold F1, the baseline and the improvement, guessed from their names."""
    cols = [str(c).strip().lower() for c in table.columns]

    def first(*names: str) -> str | None:
        return next((n for n in names if n in cols), None)

    f1 = first("f1", "lm_f1", "wv_f1") or next((c for c in cols if "f1" in c), None)
    improvement = first("improvement", "delta", "lm_delta" if f1 == "lm_f1" else "", "wv_delta" if f1 == "wv_f1" else "")
    return {"f1": f1, "baseline": first("baseline", "no_pretraining"), "improvement": improvement}


def set_results(state: AppState, table: pd.DataFrame, label: str) -> None:
    table = table.rename(columns={c: str(c).strip().lower() for c in table.columns})
    if not {"target", "source"} <= set(table.columns):
        raise SimcoreError(f"{label}: an NER results table needs target and source columns "
                           f"(it has {', '.join(map(str, table.columns))})")
    state.results = table.reset_index(drop=True)
    state.results_label = label
    state.results_columns = guess_results_columns(table)
    state.extra.pop("results_base", None)
    state.extra["results_version"] = state.extra.get("results_version", 0) + 1


def add_matrix_table(state: AppState, table: pd.DataFrame, label: str, origin: str) -> str:
    """Keep a matrix read from a table under ``label`` (made unique); returns the name it got.

    simcore's own exports open too: the ranking CSV keeps its similarity values (its combined
    'recommended' ranking is left out, it is no measure); the recommendation CSV is refused by name.
    """
    lower = {str(col).strip().lower() for col in table.columns}
    if "recommended" in lower and "source" not in lower:
        raise SimcoreError(f"{label} is simcore's recommendation table (one row per target), not a similarity "
                           "matrix: open the matrix CSV (Open results: Download this matrix) or the ranking CSV")
    from simcore.analysis.tables import to_long  # scipy loads with it: not on every page's first import

    long = to_long(table)
    if long.empty:
        raise SimcoreError(f"{label}: the table has no rows")
    for column in ("source", "target"):  # simcore's CSVs quote names a spreadsheet would run
        long[column] = long[column].map(unescape_formula)
    known = set(all_measures())
    unknown = sorted(set(long["measure"]) - known)
    if unknown:
        long = long[long["measure"].isin(known)].reset_index(drop=True)
        if long.empty:
            raise SimcoreError(f"{label} holds no similarity measure simcore knows (it has {', '.join(unknown)}; "
                               f"known: {', '.join(all_measures())})")
        state.say("info", f"{label}: left out {', '.join(unknown)}, which "
                          f"{'is' if len(unknown) == 1 else 'are'} not a similarity measure"
                          + (" (the ranking's combined order, recomputed on the Ranking page)"
                             if "recommended" in unknown else "") + ".")
    options = {}
    if "options" in long and long["options"].notna().any():
        options = {"options (first row)": str(long["options"].dropna().iloc[0])}
    return state.add_matrix(NamedMatrix(label, long, origin, options, raw=table))


TABLE3_NAME = "Table 3 of Dai et al. (2019)"


def load_table3(state: AppState) -> None:
    """Table 3 of Dai et al. (2019) as a kept matrix (shown now); its F1 as the NER results when none are loaded."""
    table = pd.read_csv(TABLE3)
    if TABLE3_NAME in state.matrices:
        state.active = TABLE3_NAME
        state.shown.clear()
        state.matrices_version += 1
    else:
        add_matrix_table(state, table, TABLE3_NAME, "published values")
    if state.results is None:
        set_results(state, table, TABLE3_NAME)
        state.say("success", f"Opened {TABLE3_NAME}: its similarity values and its F1 scores.")
    elif state.results_label != TABLE3_NAME:
        state.say("info", f"Opened {TABLE3_NAME}'s similarity values. Your NER results "
                          f"({state.results_label}) were kept; use Table 3's F1 with the button below.")


def use_table3_results(state: AppState) -> None:
    set_results(state, pd.read_csv(TABLE3), TABLE3_NAME)


def corpus_choices(roots: list[Path] | None = None) -> list[str]:
    """Server paths offered as corpora: directories and files in a readable format (no README.md, no images)."""
    from .paths import browse

    return [p for p in browse(roots) if Path(p).is_dir() or format_of(Path(p).name) is not None]
