"""What the column readers (CoNLL, CoNLL-U) share: their limits and what counts as an invisible token."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

MAX_CONLL_SENTENCE = 10_000  # tokens; more means the blank lines between sentences are missing
MAX_SKIPPED_SHARE = 0.1      # more lines skipped than this share means the file is not of the format
MAX_SKIPPED_FLOOR = 10       # ... unless they are this few
_INVISIBLE = {"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn"}
_VISIBLE_ASCII = re.compile(r"[!-~]")
ANY_ID = re.compile(r"^\d+(?:-\d+|\.\d+)?$")  # a CoNLL-U word (1), multiword token (1-2) or empty node (1.1)


def invisible(token: str) -> bool:
    """True when a token has no visible character (spaces, zero-width and control characters)."""
    if _VISIBLE_ASCII.search(token):
        return False  # the common case, without looking up each character's category
    return all(unicodedata.category(c) in _INVISIBLE for c in token)


def looks_like_conllu(lines: Iterable[str]) -> bool:
    """True when most non-comment lines are tab-separated with a word ID (``1``, ``1-2``, ``1.1``) first.

    At least three such lines and nine in ten of the lines that are not comments: a CoNLL file whose
    tokens happen to be numbers does not qualify.
    """
    words = other = 0
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) >= 3 and ANY_ID.match(fields[0]):
            words += 1
        else:
            other += 1
    return words >= 3 and words >= 0.9 * (words + other)
