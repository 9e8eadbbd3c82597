"""How a target's own rows decide the cut of both sides, in every script.

NER data sets are tokenized in ways raw text never is. Sources are raw text, cut into words by their
language's segmenter; a target whose tokens are not such words would be compared with words it can
never match. The target's rows say which of these it is:

- ``"words"``: tokens are words (CoNLL-2003, CoNLL-2002, GermEval, ANERcorp ...): nothing changes.
- ``"chars"``: tokens are characters of a script written without spaces (Chinese, Japanese NER
  data): sources are cut into characters too (:func:`~.segment.char_tokens`; found by
  :func:`~.segment.is_char_tokenized`).
- ``"rejoined"``: tokens are single characters of a text written with spaces, and the file keeps a
  row for each space (KLUE-NER: one Hangul syllable a row, a ``" "<TAB>O`` row between words). The
  characters are rejoined into the text its space rows mark and cut by the language's segmenter, as
  the sources are: both sides are words.
- ``"characters"``: the same without space rows (nothing says where words end): every token of both
  sides is cut into its characters (:func:`all_char_tokens`).
- ``"syllables"``: words join syllables with ``_`` (VLSP / VnCoreNLP Vietnamese, ``Hà_Nội``), while
  raw Vietnamese, written with a space between syllables, is cut into syllables: every joined token
  of both sides is split at its underscores (:func:`split_joined`), since no Vietnamese word
  segmenter is installed to join the sources' syllables the same way.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..tokenize import TokenizerOptions
from .segment import graphemes

WORDS, CHARS, REJOINED, CHARACTERS, SYLLABLES = (
    "words",
    "chars",
    "rejoined",
    "characters",
    "syllables",
)
CUTS = (WORDS, CHARS, REJOINED, CHARACTERS, SYLLABLES)

SINGLE_SHARE = (
    0.95  # single characters among a target's letter tokens for it to be tagged a character a row
)
MIN_TOKENS = 20  # fewer letter tokens than this: say "words" rather than guess
SPACE_ROWS = (
    0.02  # space rows per character row from which the file marks its spaces (Korean: ~0.25)
)
JOINED_SHARE = (
    0.05  # tokens that join letters with "_" for a target's words to count as joined syllables
)
LIMIT = 50_000  # tokens looked at

_JOINED = re.compile(
    r"^[^\W\d_]+(?:_[^\W\d_]+)+$"
)  # letters, "_", letters: Hà_Nội, thành_phố_Hồ_Chí_Minh

_DESCRIPTIONS = {
    WORDS: "words: the target's tokens as written; its sources cut into words",
    CHARS: "characters: the target is tagged one character a row; its sources are cut into "
           "characters",
    REJOINED: (
        "words: the target is tagged one character a row with a row for each space; its characters "
        "are "
        "rejoined into the words its spaces mark and cut as its sources are"
    ),
    CHARACTERS: (
        "characters: the target is tagged one character a row, with no row for spaces; every token "
        "of it and of its sources is cut into characters"
    ),
    SYLLABLES: (
        "syllables: the target's words join syllables with '_' (Hà_Nội); they are split into "
        "syllables, as its sources (written with a space between syllables) are cut"
    ),
}


def describe_cut(cut: str) -> str:
    """One line for notes, the matrix CSV's ``target_cut`` and the Corpora page."""
    return _DESCRIPTIONS[cut]


def short_cut(cut: str) -> str:
    """The cut in a word or two, for a table's cell."""
    return {
        WORDS: "words",
        CHARS: "characters",
        REJOINED: "words rejoined from characters",
        CHARACTERS: "characters",
        SYLLABLES: "syllables split at '_'",
    }[cut]


def is_space_token(token: str) -> bool:
    """A token that stands for a space of the text (a character-tagged file's space row)."""
    return bool(token) and token.isspace()


def detect_cut(sentences: Iterable[list[str]], language: str, limit: int = LIMIT) -> str:
    """The cut a pre-tokenized target (read with its space rows kept) asks for, in a script "
    "written with
    spaces: ``"rejoined"``, ``"characters"``, ``"syllables"`` or ``"words"`` (see the module's
    text).
    ``language`` is the target's working language: English targets are always ``"words"``."""
    if language == "en":
        return WORDS
    letters = single = spaces = joined = seen = 0
    for tokens in sentences:
        for token in tokens:
            seen += 1
            if is_space_token(token):
                spaces += 1
            elif any(c.isalpha() for c in token):
                letters += 1
                single += len(token) == 1 or len(graphemes(token)) == 1
                joined += "_" in token and bool(_JOINED.match(token))
        if seen >= limit:
            break
    if letters < MIN_TOKENS:
        return WORDS
    if single >= SINGLE_SHARE * letters:
        return REJOINED if spaces >= SPACE_ROWS * (seen - spaces) else CHARACTERS
    if joined >= JOINED_SHARE * letters:
        return SYLLABLES
    return WORDS


def rejoin(tokens: list[str], split: Callable[[str], list[str]]) -> list[str]:
    """Characters with space tokens between words, as the words ``split`` cuts their text into."""
    return split("".join(" " if is_space_token(t) else t for t in tokens))


def split_joined(tokens: list[str]) -> list[str]:
    """Tokens with every ``_``-joined word (``Hà_Nội``) split into its syllables; others kept."""
    out: list[str] = []
    for token in tokens:
        if "_" in token and _JOINED.match(token):
            out.extend(token.split("_"))
        else:
            out.append(token)
    return out


def all_char_tokens(tokens: list[str]) -> list[str]:
    """Every token cut into its user-perceived characters (Hangul syllables, a letter with its "
    "marks,
    digits and punctuation one a token), as a target tagged one character a row is."""
    out: list[str] = []
    for token in tokens:
        if len(token) == 1:
            out.append(token)
        elif any(unicodedata.category(c)[0] == "M" or "\u1100" <= c <= "\u11ff" for c in token):
            out.extend(graphemes(token))
        else:
            out.extend(c for c in token if not c.isspace())
    return out


def cut_of_tokenizer(tokenizer: TokenizerOptions) -> str:
    """The cut a workbench's tokenizer options make (``"words"`` for the usual ones)."""
    return CHARS if tokenizer.chars else (tokenizer.cut or WORDS)


def tokenizer_for_cut(tokenizer: TokenizerOptions, cut: str) -> TokenizerOptions:
    """``tokenizer`` cutting both sides as ``cut`` says."""
    if cut == CHARS:
        return replace(tokenizer, chars=True)
    return replace(tokenizer, cut="" if cut == WORDS else cut)
