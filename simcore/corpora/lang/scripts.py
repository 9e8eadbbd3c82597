"""The writing system of a text, from the Unicode blocks of its letters.

Python's :mod:`unicodedata` has no Script property, so letters are placed by the code-point
ranges of the Unicode blocks of each script (letters only: digits, punctuation and symbols are
shared by every script and say nothing). Han and kana are counted together so that Japanese,
which mixes both, is not read as Chinese: a text is ``"Japanese"`` once kana are at least
:data:`KANA_SHARE` of its Han and kana letters.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections import Counter
from collections.abc import Iterable

UNKNOWN = "Unknown"  # no letter of a known script
JAPANESE = "Japanese"

# (first, last, script): Unicode blocks, sorted by first code point.
_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "Latin"),
    (0x0370, 0x03FF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"),
    (0x0530, 0x058F, "Armenian"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"),
    (0x0700, 0x074F, "Syriac"),
    (0x0750, 0x077F, "Arabic"),
    (0x0780, 0x07BF, "Thaana"),
    (0x0870, 0x08FF, "Arabic"),
    (0x0900, 0x097F, "Devanagari"),
    (0x0980, 0x09FF, "Bengali"),
    (0x0A00, 0x0A7F, "Gurmukhi"),
    (0x0A80, 0x0AFF, "Gujarati"),
    (0x0B00, 0x0B7F, "Oriya"),
    (0x0B80, 0x0BFF, "Tamil"),
    (0x0C00, 0x0C7F, "Telugu"),
    (0x0C80, 0x0CFF, "Kannada"),
    (0x0D00, 0x0D7F, "Malayalam"),
    (0x0D80, 0x0DFF, "Sinhala"),
    (0x0E00, 0x0E7F, "Thai"),
    (0x0E80, 0x0EFF, "Lao"),
    (0x0F00, 0x0FFF, "Tibetan"),
    (0x1000, 0x109F, "Myanmar"),
    (0x10A0, 0x10FF, "Georgian"),
    (0x1100, 0x11FF, "Hangul"),
    (0x1200, 0x139F, "Ethiopic"),
    (0x1780, 0x17FF, "Khmer"),
    (0x19E0, 0x19FF, "Khmer"),
    (0x1C90, 0x1CBF, "Georgian"),
    (0x1D00, 0x1DBF, "Latin"),
    (0x1E00, 0x1EFF, "Latin"),
    (0x1F00, 0x1FFF, "Greek"),
    (0x2C00, 0x2C5F, "Glagolitic"),
    (0x2C60, 0x2C7F, "Latin"),
    (0x2D00, 0x2D2F, "Georgian"),
    (0x2DE0, 0x2DFF, "Cyrillic"),
    (0x2E80, 0x2FDF, "Han"),
    (0x3005, 0x3007, "Han"),  # 々 〆 〇
    (0x3021, 0x3029, "Han"),
    (0x3038, 0x303B, "Han"),
    (0x3041, 0x309F, "Hiragana"),
    (0x30A0, 0x30FF, "Katakana"),
    (0x3130, 0x318F, "Hangul"),
    (0x31F0, 0x31FF, "Katakana"),
    (0x3400, 0x4DBF, "Han"),
    (0x4E00, 0x9FFF, "Han"),
    (0xA640, 0xA69F, "Cyrillic"),
    (0xA720, 0xA7FF, "Latin"),
    (0xA960, 0xA97F, "Hangul"),
    (0xA9E0, 0xA9FF, "Myanmar"),
    (0xAA60, 0xAA7F, "Myanmar"),
    (0xAB30, 0xAB6F, "Latin"),
    (0xAC00, 0xD7FF, "Hangul"),
    (0xF900, 0xFAFF, "Han"),
    (0xFB00, 0xFB06, "Latin"),
    (0xFB1D, 0xFB4F, "Hebrew"),
    (0xFB50, 0xFDFF, "Arabic"),
    (0xFE70, 0xFEFF, "Arabic"),
    (0xFF21, 0xFF5A, "Latin"),  # full-width A-Z a-z
    (0xFF66, 0xFF9F, "Katakana"),  # half-width
    (0xFFA0, 0xFFDC, "Hangul"),
    (0x1B000, 0x1B16F, "Hiragana"),  # kana supplement and extensions (mixed; counted as kana)
    (0x20000, 0x323AF, "Han"),
)
_FIRSTS = [r[0] for r in _RANGES]

# Scripts written without spaces between words: they need a dictionary segmenter.
NO_SPACE_SCRIPTS = frozenset({"Han", JAPANESE, "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar"})

KANA_SHARE = 0.1  # kana at least this share of Han + kana letters: Japanese (Chinese text has a stray の at most)


def char_script(char: str) -> str:
    """The script of one letter or combining mark (``"Unknown"`` for other characters or blocks not listed)."""
    if unicodedata.category(char)[0] not in "LM":
        return UNKNOWN
    code = ord(char)
    i = bisect.bisect_right(_FIRSTS, code) - 1
    if i >= 0 and code <= _RANGES[i][1]:
        return _RANGES[i][2]
    return UNKNOWN


def script_counts(text: str) -> Counter[str]:
    """How many letters of each script ``text`` has (combining marks and other characters not counted)."""
    counts: Counter[str] = Counter()
    # each distinct character looked up once, in the order first seen: the same counts, same order
    for char, n in Counter(text).items():
        if char.isalpha():
            counts[char_script(char)] += n
    counts.pop(UNKNOWN, None)
    return counts


def dominant_script(counts: Counter[str]) -> tuple[str, float]:
    """The script most letters are in, and its share of the letters; Han and kana together make
    ``"Japanese"`` when kana are at least :data:`KANA_SHARE` of them, else ``"Han"``."""
    total = sum(counts.values())
    if not total:
        return UNKNOWN, 0.0
    grouped = Counter(counts)
    kana = grouped.pop("Hiragana", 0) + grouped.pop("Katakana", 0)
    han = grouped.pop("Han", 0)
    if han + kana:
        grouped[JAPANESE if kana >= KANA_SHARE * (han + kana) else "Han"] = han + kana
    script, n = max(grouped.items(), key=lambda item: (item[1], item[0]))
    return script, n / total


def script_of(text: str) -> str:
    """The dominant script of a text (``"Unknown"`` when it has no letter)."""
    return dominant_script(script_counts(text))[0]


def script_of_tokens(sentences: Iterable[Iterable[str]]) -> str:
    """The dominant script of token lists (sentences of tokens)."""
    counts: Counter[str] = Counter()
    for tokens in sentences:
        for token in tokens:
            counts.update(script_counts(token))
    return dominant_script(counts)[0]
