"""How a language's content words (for TVcC) are told from its function words.

Best first: a part-of-speech tagger, where a pinned spaCy pipeline for the language installs from
PyPI (only English's, en_core_web_sm, today); else spaCy's stop-word list for the language (a
content word is a word with a letter that is neither a stop word nor a number word); else nothing,
and TVcC is not computed for that language, with the reason. The English tagger is never used on
another language.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any, Literal

from .detect import spacy_code

# Languages with a pinned POS-tagging pipeline (installed by scripts/install.sh), by ISO code.
TAGGER_PIPELINES = {"en": "en_core_web_sm"}

Kind = Literal["tagger", "stop-words"]


@dataclass(frozen=True)
class ContentWordMethod:
    """How content words are decided for ``language``: ``kind`` is ``"tagger"``, ``"stop-words"`` or
    None (TVcC cannot be computed); ``name`` a stable id (``"en_core_web_sm"``, ``"spacy-stop-words-de"``);
    ``reason`` one line for notes and empty cells."""

    language: str
    kind: Kind | None
    name: str
    reason: str

    def fingerprint(self) -> dict[str, str]:
        """What to add to fingerprints and store keys: nothing for English's tagger (as before), else the method."""
        if self.kind == "tagger" and self.language == "en":
            return {}
        return {"content_words": self.name or f"none-{self.language}"}

    def is_content(self, token: str) -> bool:
        """For the stop-word method: a token with a letter that is not a stop word or a number word."""
        if self.kind != "stop-words":
            raise ValueError(f"{self.name or self.language}: only the stop-word method decides one token alone")
        stop, like_num = _stop_words(spacy_code(self.language))
        if not any(c.isalpha() for c in token):
            return False  # punctuation, digits, symbols
        low = token.lower()
        return low not in stop and not (like_num is not None and like_num(low))


@functools.lru_cache(maxsize=32)
def _stop_words(code: str) -> tuple[frozenset[str], Any]:
    """spaCy's stop words for ``code`` and its ``like_num`` (None where it has none); ImportError when
    spaCy has no list for the language."""
    from spacy.attrs import LIKE_NUM

    stop = importlib.import_module(f"spacy.lang.{code}.stop_words").STOP_WORDS
    try:
        like_num = importlib.import_module(f"spacy.lang.{code}.lex_attrs").LEX_ATTRS.get(LIKE_NUM)
    except ImportError:
        like_num = None
    return frozenset(w.lower() for w in stop), like_num


def content_words_method(language: str) -> ContentWordMethod:
    """How content words are decided for ``language`` (a validated ISO code, or ``"und"``)."""
    language = language.lower()
    if language in TAGGER_PIPELINES:
        pipeline = TAGGER_PIPELINES[language]
        return ContentWordMethod(language, "tagger", pipeline, f"content words from the POS tagger {pipeline}")
    code = spacy_code(language)
    if code.isalpha() and code.isascii() and code not in ("xx", "und"):  # a code, never a path
        try:
            stop, _ = _stop_words(code)
        except ImportError:
            pass
        else:
            if stop:
                return ContentWordMethod(language, "stop-words", f"spacy-stop-words-{code}",
                                         f"content words: not in spaCy's {code} stop-word list "
                                         f"({len(stop)} words), not punctuation or numbers")
    known = "its language is not known ('und')" if language == "und" else language
    return ContentWordMethod(language, None, "", f"no tagger or stop-word list for {known}")
