"""Speed of the language layer (simcore.corpora.lang), printed as a table.

For each segmenter, the time to split LINES lines of a short sentence written for this bench
(repeated; the segmenters keep no cache across lines that would flatter repeats beyond spaCy's
own token cache), in lines and tokens per second, next to the English regex; and the time of
detect_language on a corpus of any size (it reads a bounded sample).

Usage: .venv/bin/python bench/bench_lang.py [--lines 20000]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simcore.corpora.lang.detect import detect_language  # noqa: E402
from simcore.corpora.lang.segment import char_tokens, segmenter_for  # noqa: E402

SENTENCES = {
    ("en", "Latin"): "Angela Merkel visited Paris on Monday and met the French president at 3.30 p.m.",
    ("de", "Latin"): "Angela Merkel besuchte am Montag Paris und traf dort den französischen Präsidenten.",
    ("hi", "Devanagari"): "हमने कल बगीचे में काम किया और शाम को दिल्ली के बाज़ार गए।",
    ("zh", "Han"): "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    ("ja", "Japanese"): "東京都は日本の首都です。昨日は友達と新宿で映画を見ました。",
    ("th", "Thai"): "ภาษาไทยเป็นภาษาที่สวยงามและมีประวัติศาสตร์ยาวนาน",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=20_000)
    n = parser.parse_args().lines
    print(f"{'segmenter':<14} {'lines/s':>10} {'tokens/s':>10} {'tokens/line':>11}")
    for (language, script), sentence in SENTENCES.items():
        seg = segmenter_for(language, script)
        seg.split(sentence)  # load outside the clock
        lines = [f"{i} {sentence}" for i in range(n)]  # distinct lines
        start = time.perf_counter()
        tokens = sum(len(seg.split(line)) for line in lines)
        took = time.perf_counter() - start
        print(f"{seg.name:<14} {n / took:>10,.0f} {tokens / took:>10,.0f} {tokens / n:>11.1f}")
    lines = [SENTENCES[("zh", "Han")].split("，")] * n
    start = time.perf_counter()
    tokens = sum(len(char_tokens(t)) for t in lines)
    took = time.perf_counter() - start
    print(f"{'char_tokens zh':<14} {n / took:>10,.0f} {tokens / took:>10,.0f} {tokens / n:>11.1f}")
    detect_language(["warm up the model"])
    for size in (1_000, 10_000_000):
        units = itertools.repeat(SENTENCES[("de", "Latin")], size)
        start = time.perf_counter()
        guess = detect_language(units)
        print(f"detect_language on {size:,} units: {time.perf_counter() - start:.3f} s ({guess.language})")


if __name__ == "__main__":
    main()
