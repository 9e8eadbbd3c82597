"""One tokenizer and normalisation for both sides of every comparison.

Raw text is split the way NER data sets are tokenized (Penn-Treebank-like): abbreviations such
as ``U.S.`` and ``e.g.``, numbers such as ``3.5`` and ``1,000``, and hyphenated words stay whole;
clitics (``n't``, ``'s``, ``'re`` ...) and punctuation are split off. Pre-tokenized input (CoNLL)
keeps its tokens and only goes through :func:`normalise`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..utils.errors import InvalidArgument

_CLITIC_NT = re.compile(r"(?i)\b(\w+?)(n't)\b")
_CLITIC_APOS = re.compile(r"(?i)(\w)('(?:s|re|ve|ll|d|m))\b")

_TOKEN = re.compile(
    r"""
    (?:https?://|www\.)[^\s<>"]+[^\s<>".,;:!?)\]]     # URLs
  | [\w.+-]+@[\w-]+(?:\.[\w-]+)+                      # e-mail addresses
  | <unk>                                             # placeholder used by tokenized corpora
  | (?:[A-Za-z]\.){2,}                                # U.S.  e.g.  i.e.
  | (?:Mr|Mrs|Ms|Dr|Prof|St|Sr|Jr|Inc|Corp|Ltd|Co|vs|etc|al|Fig|No|Jan|Feb|Mar|Apr|Jun|Jul
       |Aug|Sep|Sept|Oct|Nov|Dec)\.(?=\s|$)           # common abbreviations
  | \d+(?:[.,:/]\d+)+                                 # 3.5  1,000  12:30  1/2
  | (?i:n't)|'(?i:s|re|ve|ll|d|m)\b                   # clitics split off below
  | \w+(?:[-'&]\w+)*                                  # words, well-known, o'clock, AT&T
  | \.\.\.|--|[^\w\s]                                 # punctuation, one mark at a time
    """,
    re.VERBOSE,
)

TOKEN_CUTS = ("", "rejoined", "characters", "syllables")

# KenLM reserves these words; a corpus that contains them literally would break lmplz.
_RESERVED = {"<s>": "[s]", "</s>": "[/s]", "<unk>": "[unk]"}


@dataclass(frozen=True)
class TokenizerOptions:
    """How raw text becomes tokens; part of every fingerprint."""

    lowercase: bool = True
    # Cut words of scripts written without spaces into characters: how a source is tokenized for a
    # target whose own tokens are characters (simcore.corpora.lang.char_tokens), so both sides match.
    chars: bool = False
    # How a target's own rows cut both sides in a script written with spaces
    # (simcore.corpora.lang.cut): "" (as written), "rejoined" (a character-tagged target's
    # characters rejoined at its space rows),
    # "characters" (every token cut into characters) or "syllables" (words joined by "_" split).
    cut: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.lowercase, bool):
            raise InvalidArgument(f"TokenizerOptions.lowercase must be True or False, not {self.lowercase!r}"[:200])
        if not isinstance(self.chars, bool):
            raise InvalidArgument(f"TokenizerOptions.chars must be True or False, not {self.chars!r}"[:200])
        if self.cut not in TOKEN_CUTS:
            raise InvalidArgument(
                f"TokenizerOptions.cut must be one of {TOKEN_CUTS}, not {self.cut!r}"[:200])

    def as_dict(self) -> dict[str, object]:
        """The options in fingerprints: ``chars`` and ``cut`` only when set, so earlier fingerprints
        stay valid."""
        return {"lowercase": self.lowercase, **({"chars": True} if self.chars else {}),
                **({"cut": self.cut} if self.cut else {})}


def split_text(text: str) -> list[str]:
    """Split raw text into Penn-Treebank-like tokens (case kept)."""
    if "'" in text:  # both clitic patterns need one: most lines skip two regular-expression passes
        text = _CLITIC_NT.sub(r"\1 \2", text)
        text = _CLITIC_APOS.sub(r"\1 \2", text)
    return _TOKEN.findall(text)


def normalise(token: str, options: TokenizerOptions) -> str:
    """Normalise one token: lower-case (by default), no inner whitespace, no KenLM specials."""
    if options.lowercase:
        token = token.lower()
    if any(c.isspace() for c in token):
        token = "_".join(token.split())
    return _RESERVED.get(token, token)


def normalise_all(tokens: list[str], options: TokenizerOptions) -> list[str]:
    """:func:`normalise` for a list, fast: lower-case in one pass, then the rare rewrites."""
    if options.lowercase:
        tokens = [t.lower() for t in tokens]
    joined = " ".join(tokens)  # one check for the whole list: no reserved word, no space, all printable
    if "<" not in joined and joined.isprintable() and joined.count(" ") == len(tokens) - 1:
        return tokens if options.lowercase else list(tokens)
    return [normalise(t, options) if t in _RESERVED or not t.isprintable() or " " in t else t for t in tokens]


def tokenize(text: str, options: TokenizerOptions = TokenizerOptions()) -> list[str]:
    """Split and normalise raw text."""
    return normalise_all(split_text(text), options)
