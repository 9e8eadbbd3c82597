"""Raw text into words, per language, and character tokens for targets tokenized that way.

- English, and text of unknown language in Latin script: :func:`simcore.corpora.tokenize.split_text`, so
  English results stay exactly what they were.
- Scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar): ICU's word
  BreakIterator (PyICU over the system's libicu). One maintained library covers all six with
  dictionaries and rules kept by the Unicode consortium (CJ dictionary for Chinese and Japanese,
  Thai/Lao/Khmer/Burmese dictionaries), with no model download at run time. spaCy's own classes
  would need three more segmenters (jieba or spacy-pkuseg, SudachiPy with its dictionary, PyThaiNLP)
  and still none for Lao, Khmer or Myanmar. ICU's Chinese dictionary cuts compounds finer than some
  NER data sets do (中华人民共和国 -> 中华 / 人民 / 共和国); a target pre-tokenized into characters is
  matched by :func:`char_tokens` instead.
- Every other language: spaCy's rule-based tokenizer for it (``spacy.blank(code).tokenizer``: its
  punctuation and exception rules, and no cut inside a word at combining marks as ``\\w`` regexes
  make in Devanagari, Bengali, Tamil...), or spaCy's multi-language one (``xx``) where spaCy has no
  class for the language or its class needs a package not installed.

Each :class:`Segmenter` is a small picklable value; the ICU iterators and spaCy tokenizers behind it
are built once per process (ICU's per thread: an iterator holds its text).
"""

from __future__ import annotations

import functools
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..tokenize import split_text
from .detect import SCRIPT_DECIDES, UNDETERMINED, spacy_code
from .scripts import NO_SPACE_SCRIPTS, char_script

REGEX = "en-regex"
NO_SPACE_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "km", "my"})
_NO_SPACE_LETTERS = NO_SPACE_SCRIPTS | {"Hiragana", "Katakana"}
# Korean's and Vietnamese's default spaCy tokenizers need mecab-ko and pyvi; their rule-based ones need nothing.
_SPACY_CONFIG: dict[str, dict[str, Any]] = {
    "ko": {"nlp": {"tokenizer": {"@tokenizers": "spacy.Tokenizer.v1"}}},
    "vi": {"nlp": {"tokenizer": {"@tokenizers": "spacy.Tokenizer.v1"}}},
}
CHAR_SHARE = 0.95  # single-character tokens among a no-space target's tokens for it to count as character-tokenized
MIN_CHAR_TOKENS = 20  # fewer no-space-script tokens than this: say False rather than guess


@dataclass(frozen=True)
class Segmenter:
    """How raw text becomes tokens for one language. ``name`` is a stable id for fingerprints
    (``"en-regex"``, ``"icu-zh"``, ``"spacy-de"``, ``"spacy-xx"``)."""

    name: str
    version: str = ""  # of the library behind it (ICU, spaCy); empty for the English regex

    @property
    def kind(self) -> str:
        return self.name.split("-", 1)[0]

    @property
    def code(self) -> str:
        return self.name.split("-", 1)[1]

    def split(self, text: str) -> list[str]:
        """The tokens of ``text`` (case kept; no whitespace or empty tokens; punctuation kept)."""
        if self.name == REGEX:
            return split_text(text)
        if self.kind == "icu":
            return _icu_split(text, self.code)
        return [t.text for t in _spacy_tokenizer(self.code)(text) if not t.is_space and t.text.strip()]

    def fingerprint(self) -> dict[str, str]:
        """What to add to a corpus's fingerprint: nothing for the English regex (fingerprints made
        before languages existed stay valid), else the segmenter and its library's version."""
        return {} if self.name == REGEX else {"segmenter": self.name, "segmenter_version": self.version}


def segmenter_for(language: str, script: str) -> Segmenter:
    """The segmenter for a corpus of ``language`` (a validated code, or ``"und"``) written in ``script``
    (:func:`~simcore.corpora.lang.scripts.script_of`): ICU for scripts or languages written without
    spaces, the English regex for English and unknown Latin-script text, spaCy's tokenizer otherwise."""
    language = language.lower()
    if script in NO_SPACE_SCRIPTS or language in NO_SPACE_LANGUAGES:
        code = language if language != UNDETERMINED else SCRIPT_DECIDES.get(script, "zh")
        return Segmenter(f"icu-{code}", _icu_version())
    if language == "en" or (language == UNDETERMINED and script in ("Latin", "Unknown")):
        return Segmenter(REGEX)
    code = spacy_code(language) if language != UNDETERMINED else "xx"
    try:
        _spacy_tokenizer(code)
    except (ImportError, ValueError, OSError, KeyError):  # no spaCy class, or one needing a package not here
        code = "xx"
    import spacy

    return Segmenter(f"spacy-{code}", spacy.__version__)


# -- ICU ---------------------------------------------------------------------------------------

_local = threading.local()


def _icu_version() -> str:
    import icu

    return str(icu.ICU_VERSION)


def _break_iterator(kind: str, locale: str) -> Any:
    """A word or character BreakIterator for ``locale``, one per thread (it holds the text it walks)."""
    cache = _local.__dict__.setdefault("iterators", {})
    key = (kind, locale)
    if key not in cache:
        import icu

        make = icu.BreakIterator.createWordInstance if kind == "word" else icu.BreakIterator.createCharacterInstance
        cache[key] = make(icu.Locale(locale))
    return cache[key]


def _pieces(text: str, iterator: Any) -> list[str]:
    # ICU counts UTF-16 code units; its UnicodeString indexes alike, so slice that, not the str.
    import icu

    ustr = icu.UnicodeString(text)
    iterator.setText(ustr)
    out, start = [], iterator.first()
    for end in iterator:
        out.append(str(ustr[start:end]))
        start = end
    return out


def _icu_split(text: str, locale: str) -> list[str]:
    return [p for p in _pieces(text, _break_iterator("word", locale)) if p.strip()]


def graphemes(token: str) -> list[str]:
    """The user-perceived characters of ``token`` (a Thai consonant keeps its vowel and tone marks)."""
    return [p for p in _pieces(token, _break_iterator("char", "root")) if p.strip()]


# -- spaCy -------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=16)
def _spacy_tokenizer(code: str) -> Any:
    import spacy

    return spacy.blank(code, config=_SPACY_CONFIG.get(code, {})).tokenizer


# -- characters --------------------------------------------------------------------------------

def _no_space(token: str) -> bool:
    return any(char_script(c) in _NO_SPACE_LETTERS for c in token)


def char_tokens(tokens: list[str]) -> list[str]:
    """``tokens`` with every token holding a letter of a script written without spaces cut into its
    characters (graphemes); other tokens (Latin words, numbers, punctuation) kept. Used on a source
    when its target is tokenized into characters, so both sides are cut alike."""
    out: list[str] = []
    for token in tokens:
        if _no_space(token):
            out.extend(graphemes(token) if _has_marks(token) else [c for c in token if not c.isspace()])
        else:
            out.append(token)
    return out


def _has_marks(token: str) -> bool:
    # Han and kana are one code point per character; only scripts with marks need ICU's graphemes.
    return any(unicodedata.category(c)[0] == "M" or char_script(c) not in ("Han", "Hiragana", "Katakana")
               for c in token if not c.isspace())


def is_char_tokenized(sentences: Iterable[list[str]], limit: int = 50_000) -> bool:
    """True when pre-tokenized sentences are mostly in a script written without spaces and their
    tokens in that script are (at least CHAR_SHARE) single characters; looks at up to ``limit`` tokens."""
    letters = no_space = single = seen = 0
    for tokens in sentences:
        for token in tokens:
            seen += 1
            if any(c.isalpha() for c in token):
                letters += 1
                if _no_space(token):
                    no_space += 1
                    single += len(token) == 1 or (_has_marks(token) and len(graphemes(token)) == 1)
        if seen >= limit:
            break
    if no_space < MIN_CHAR_TOKENS or no_space < letters / 2:
        return False
    return single >= CHAR_SHARE * no_space


def segmentation_fingerprint(segmenter: Segmenter, chars: bool = False) -> dict[str, Any]:
    """The whole tokenization choice as fingerprint entries: the segmenter's, plus ``"chars": True``
    when tokens are cut into characters. Empty for English as before."""
    return {**segmenter.fingerprint(), **({"chars": True} if chars else {})}
