"""Matching the names in an NER results table to the corpus names of a similarity matrix.

Results often name a target after its file ("dev", "test") or spell a corpus differently
("news-ner" for "news_ner"). ``suggest`` proposes matches (difflib on normalised names); the page lets
the user confirm or change them and keeps the mapping; ``apply_mapping`` renames the results' rows.
"""

from __future__ import annotations

import difflib
import re

import pandas as pd

LEAVE_OUT = "(no match: leave out)"
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def normalise(name: str) -> str:
    return _NOT_ALNUM.sub("", str(name).lower())


def suggest(names: list[str], choices: list[str], cutoff: float = 0.6) -> dict[str, str | None]:
    """For each name not among ``choices``: the closest choice (same letters and digits first), or None."""
    by_norm: dict[str, str] = {}
    for choice in choices:
        by_norm.setdefault(normalise(choice), choice)
    out: dict[str, str | None] = {}
    for name in names:
        if name in choices:
            continue
        key = normalise(name)
        if key in by_norm:
            out[name] = by_norm[key]
            continue
        close = difflib.get_close_matches(key, list(by_norm), n=1, cutoff=cutoff)
        if not close:  # a name that is part of a corpus name ("conll" in "conll2003_test")
            close = [k for k in by_norm if key and (key in k or k in key)][:1]
        out[name] = by_norm[close[0]] if close else None
    return out


def apply_mapping(results: pd.DataFrame, mapping: dict[str, dict[str, str | None]]) -> pd.DataFrame:
    """The results with target/source names replaced as mapped (a name mapped to None is left as it is)."""
    out = results.copy()
    for column, names in mapping.items():
        if column in out:
            table = {k: v for k, v in names.items() if v}
            out[column] = out[column].map(lambda v, t=table: t.get(str(v), v))
    return out
