"""JSONL decoding and the streaming pass's other per-unit costs, before and after, printed as a table.

A local ``.jsonl`` of ``--mb`` megabytes (records ``{"id": n, "text": unit, "source": ...}``, units drawn
from the five sources in ../shared/data as bench_scale.py draws them) and a ``.txt`` of the same units.
Per stage, in this one process: wall and CPU seconds, MB/s and million words per CPU second.

- decoders alone, line by line: ``json.loads`` (what simcore used), ``orjson.loads``, simcore's
  :func:`~simcore.corpora.jsonl.decode_record` (orjson, json for what orjson would read differently);
  and ``pyarrow.json.read_json`` on the whole file, for reference (it gives columns, not records);
- simcore's JSONL reader (:func:`~simcore.corpora.jsonl.jsonl_units`) with json.loads (before) and now;
- the streaming pass (:func:`~simcore.corpora.sampling.read_candidates`, 10M-token target) over the
  JSONL with json.loads (before) and now, and over the ``.txt`` (no decoding at all);
- tokenizing and counting (simcore's tokenizer and a Counter) over the first ``--count-tokens`` words.

Usage: nice .venv/bin/python bench/bench_decode.py [--mb 200]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from bench_core import SHARED, shuffled_units  # noqa: E402

OUT = ROOT / "bench" / "out"


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def build(mb: int, folder: Path) -> tuple[Path, Path, int]:
    """The JSONL and text files of about ``mb`` MB of JSONL, and their whitespace words."""
    jsonl, text = folder / "records.jsonl", folder / "records.txt"
    words_file = folder / "words"
    if words_file.exists():
        return jsonl, text, int(words_file.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    units, rng = shuffled_units(1)
    names = ("news", "wiki", "reviews", "clinical", "biomed")
    size = words = i = 0
    with open(jsonl, "w", encoding="utf-8") as j, open(text, "w", encoding="utf-8") as t:
        while size < mb * 1_000_000:
            unit = units[i] if i < len(units) else rng.choice(units)
            line = json.dumps({"id": i, "text": unit, "source": names[i % 5]}, ensure_ascii=False) + "\n"
            j.write(line)
            t.write(unit + "\n")
            size += len(line.encode("utf-8"))
            words += len(unit.split())
            i += 1
    words_file.write_text(str(words))
    return jsonl, text, words


def timed(work: Callable[[], object]) -> tuple[float, float, object]:
    t, c = time.perf_counter(), cpu_s()
    result = work()
    return time.perf_counter() - t, cpu_s() - c, result


def per_line(decode: Callable[[str], object], path: Path) -> Callable[[], int]:
    def work() -> int:
        n = 0
        with open(path, encoding="utf-8") as f:
            for line in f:
                decode(line)
                n += 1
        return n
    return work


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the JSONL file in MB (default 200)")
    parser.add_argument("--count-tokens", type=int, default=5_000_000)
    parser.add_argument("--no-pass", action="store_true", help="skip the streaming passes (the slowest stages)")
    args = parser.parse_args()
    if not (SHARED / "sources").is_dir():
        raise SystemExit("../shared/data is not present")

    import orjson
    import pyarrow.json as pj

    from simcore.corpora import jsonl as jsonl_module
    from simcore.corpora.corpus import Corpus, unit_tokenizer
    from simcore.corpora.sampling import read_candidates
    from simcore.corpora.tokenize import TokenizerOptions

    jsonl, text, words = build(args.mb, OUT / f"decode_{args.mb}MB")
    mb = jsonl.stat().st_size / 1e6
    text_mb = text.stat().st_size / 1e6
    corpus = Corpus.from_path(jsonl, name="records")
    text_corpus = Corpus.from_path(text, name="records")
    before = mock.patch.object(jsonl_module, "decode_record", lambda line, field: json.loads(line))

    def reader() -> int:
        with open(jsonl, encoding="utf-8") as f:
            return sum(1 for _ in jsonl_module.jsonl_units(f, jsonl.name, corpus))

    def reader_before() -> int:
        with before:
            return reader()

    def one_pass(c: Corpus) -> Callable[[], object]:
        return lambda: read_candidates(c, 10_000_000, 1, 13)

    def pass_before() -> object:
        with before:
            return one_pass(corpus)()

    def count() -> int:
        tokens_of = unit_tokenizer(text_corpus.segmenter(), TokenizerOptions())
        counts: Counter[str] = Counter()
        n = 0
        with open(text, encoding="utf-8") as f:
            for line in f:
                tokens = tokens_of(line)
                counts.update(tokens)
                n += len(line.split())
                if n >= args.count_tokens:
                    break
        return n

    stages: list[tuple[str, float, Callable[[], object]]] = [
        ("read lines only (floor)", mb, per_line(lambda line: None, jsonl)),
        ("json.loads per line (before)", mb, per_line(json.loads, jsonl)),
        ("orjson.loads per line", mb, per_line(orjson.loads, jsonl)),
        ("decode_record per line (now)", mb, per_line(lambda line: jsonl_module.decode_record(line, "text"), jsonl)),
        ("pyarrow.json.read_json, whole file", mb,
         lambda: pj.read_json(jsonl, read_options=pj.ReadOptions(block_size=16 << 20)).num_rows),
        ("jsonl_units, json.loads (before)", mb, reader_before),
        ("jsonl_units (now)", mb, reader),
    ]
    if not args.no_pass:
        stages += [("streaming pass, JSONL, json.loads (before)", mb, pass_before),
                    ("streaming pass, JSONL (now)", mb, one_pass(corpus)),
                    ("streaming pass, .txt (no decoding)", text_mb, one_pass(text_corpus))]
    rows = []
    check = {}
    for label, size, work in stages:
        print(f"running: {label}", file=sys.stderr)
        wall, cpu, result = timed(work)
        if label.startswith("streaming pass"):
            check[label] = hashlib.sha256(json.dumps([result.words, [sorted(h) for h in result.heaps]]).encode()).hexdigest()
        rows.append([label, f"{size:,.0f}", f"{wall:.1f}", f"{cpu:.1f}", f"{size / cpu:,.1f}",
                     f"{words / cpu / 1e6:.2f}"])
    wall, cpu, n = timed(count)
    rows.append([f"tokenize + count ({n:,} words)", f"{text_mb * n / words:,.0f}", f"{wall:.1f}", f"{cpu:.1f}",
                 f"{text_mb * n / words / cpu:,.1f}", f"{n / cpu / 1e6:.2f}"])
    print(f"{jsonl.name}: {mb:,.0f} MB, {words:,} whitespace words; the same units as .txt: {text_mb:,.0f} MB\n")
    header = ["stage", "MB", "wall s", "CPU s", "MB/CPU s", "M words/CPU s"]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for r in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)))
    if check:
        same = len(set(check.values())) == 1
        print(f"\nthe same kept units and word count from every pass: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
