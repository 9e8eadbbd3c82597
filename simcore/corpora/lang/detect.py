"""Which language a corpus is in: a user's word for it, its script, or py3langid on a bounded sample.

Detector: py3langid (a maintained fork of langid.py: a naive Bayes model over byte n-grams for about
140 languages, shipped inside the wheel, so it works offline with no download at run time; numpy only;
loads in under a second and classifies a 20,000-character sample in milliseconds). fastText-based
detectors need a model file fetched at run time; lingua is far larger. langid's model is least
sure exactly where the script already decides (Han without kana is Chinese, kana is Japanese, Thai,
Hangul, Lao, Khmer and Myanmar letters each have one main language), so there the script decides.

Only the first :data:`SAMPLE_UNITS` units, at most :data:`SAMPLE_CHARS` characters, are read, so a
corpus of any size costs the same.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ...utils.errors import InvalidArgument
from .scripts import UNKNOWN, dominant_script, script_counts

UNDETERMINED = "und"  # ISO 639-2 for "undetermined"
SAMPLE_UNITS = 1_000
SAMPLE_CHARS = 20_000
MIN_CONFIDENCE = 0.5  # py3langid's normalised probability below which its answer is not taken

# Scripts that name their language whatever the detector says.
SCRIPT_DECIDES = {"Han": "zh", "Japanese": "ja", "Hiragana": "ja", "Katakana": "ja", "Hangul": "ko",
                  "Thai": "th", "Lao": "lo", "Khmer": "km", "Myanmar": "my"}
# Scripts with one main language, used when the detector is unsure.
SCRIPT_FALLBACK = {"Greek": "el", "Hebrew": "he", "Armenian": "hy", "Georgian": "ka", "Tamil": "ta",
                   "Telugu": "te", "Kannada": "kn", "Malayalam": "ml", "Gujarati": "gu", "Gurmukhi": "pa",
                   "Oriya": "or", "Sinhala": "si", "Thaana": "dv", "Tibetan": "bo"}
# py3langid labels that are not a language, or that spaCy and ISO 639-1 spell otherwise.
_DETECTOR_ALIASES = {"zxx": UNDETERMINED, "wuu": "zh", "yue": "zh"}

Method = Literal["given", "detector", "script"]

# Codes spaCy spells otherwise than the detector (its Norwegian Bokmål and Kurmanji Kurdish classes).
_SPACY_CODES = {"no": "nb", "ku": "kmr"}


def spacy_code(language: str) -> str:
    """The name of spaCy's language class (``spacy.lang.<code>``) for an ISO code."""
    return _SPACY_CODES.get(language, language)


@dataclass(frozen=True)
class LanguageGuess:
    """A corpus's language (ISO 639-1 code where there is one, else ISO 639-3; ``"und"`` when not
    known), its dominant script, how sure that is (0-1) and what decided it."""

    language: str
    script: str
    confidence: float
    method: Method

    def as_dict(self) -> dict[str, Any]:
        return {"language": self.language, "script": self.script,
                "confidence": round(self.confidence, 3), "method": self.method}

    @property
    def working_language(self) -> str:
        """The language the corpus is processed as: an undetermined Latin-script (or letterless) text
        as English, the way it is segmented (English was simcore's only language before), else its own."""
        if self.language == UNDETERMINED and self.script in ("Latin", "Unknown"):
            return "en"
        return self.language


@functools.lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@functools.lru_cache(maxsize=1)
def known_languages() -> frozenset[str]:
    """Every code :func:`validate_language` accepts: the detector's languages, spaCy's, and ``"und"``."""
    import pkgutil

    import spacy.lang

    spacy_codes = {m.name for m in pkgutil.iter_modules(spacy.lang.__path__) if m.ispkg and m.name != "xx"}
    detector = {_DETECTOR_ALIASES.get(c, c) for c in _identifier().labels}
    return frozenset(spacy_codes | detector | set(SCRIPT_DECIDES.values()) | set(SCRIPT_FALLBACK.values())
                     | {UNDETERMINED})


def validate_language(language: str) -> str:
    """A user's language code, lower-cased and without its region (``pt-BR`` -> ``pt``); one-line
    InvalidArgument when it is not a code simcore knows."""
    if not isinstance(language, str) or not language.strip():
        raise InvalidArgument(f"a language is an ISO 639 code such as 'de' or 'zh', not {language!r}"[:200])
    code = language.strip().replace("_", "-").split("-")[0].lower()
    if code not in known_languages():
        raise InvalidArgument(f"unknown language {language.strip()[:40]!r}: give an ISO 639 code such as "
                              "'en', 'de', 'es', 'nl', 'zh', 'ja', 'th', 'ar' or 'hi' (or 'und' for unknown)")
    return code


def _sample(units: Iterable[str | list[str]]) -> str:
    """The first units, joined (token lists with spaces), up to SAMPLE_CHARS characters."""
    pieces, size = [], 0
    for unit in itertools.islice(units, SAMPLE_UNITS):
        text = unit if isinstance(unit, str) else " ".join(unit)
        pieces.append(text[:SAMPLE_CHARS - size])
        size += len(pieces[-1]) + 1
        if size >= SAMPLE_CHARS:
            break
    return "\n".join(pieces)


def detect_language(units: Iterable[str | list[str]], given: str | None = None) -> LanguageGuess:
    """The language and script of a corpus from its first units (raw lines or token lists).

    ``given`` (a user's ``--language``) is validated and wins, with confidence 1. Otherwise a script
    that names its language decides (confidence: that script's share of the letters); otherwise
    py3langid does, when at least MIN_CONFIDENCE sure; else a one-language script (Greek, Hebrew,
    Tamil...) decides, or the language is ``"und"``."""
    text = _sample(units)
    counts: Counter[str] = script_counts(text)
    script, share = dominant_script(counts)
    if given is not None:
        return LanguageGuess(validate_language(given), script, 1.0, "given")
    if script == UNKNOWN:
        return LanguageGuess(UNDETERMINED, script, 0.0, "script")
    if script in SCRIPT_DECIDES:
        return LanguageGuess(SCRIPT_DECIDES[script], script, share, "script")
    label, confidence = _identifier().classify(text)
    language = _DETECTOR_ALIASES.get(label, label)
    if confidence >= MIN_CONFIDENCE and language != UNDETERMINED:
        return LanguageGuess(language, script, float(confidence), "detector")
    if script in SCRIPT_FALLBACK:
        return LanguageGuess(SCRIPT_FALLBACK[script], script, share, "script")
    return LanguageGuess(UNDETERMINED, script, float(confidence), "detector")


@functools.lru_cache(maxsize=256)
def language_name(code: str) -> str:
    """'German (de)': a language code with its English name from ICU's locale data (the code alone
    where ICU has no name for it, and 'undetermined' for ``"und"``)."""
    if code == UNDETERMINED:
        return "undetermined language (und)"
    try:
        import icu

        name = str(icu.Locale(code).getDisplayLanguage(icu.Locale("en")))
    except Exception:  # noqa: BLE001 - a name is a courtesy; the code is the fact
        name = ""
    return f"{name} ({code})" if name and name != code else code


def known_language(code: object) -> bool:
    """Whether a table's language cell names a language (not empty, missing or undetermined)."""
    return isinstance(code, str) and code != "" and code != UNDETERMINED


def across_languages(source: object, target: object) -> bool:
    """Whether a cell compares a source and a target known to be in different languages."""
    return known_language(source) and known_language(target) and source != target
