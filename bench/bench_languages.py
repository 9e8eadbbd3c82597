"""Does simcore pick the register-matched same-language source for NER data in other languages?

Evidence for issues 27 and 36, in nine languages and five kinds of tokenization: Korean (KLUE-NER,
one Hangul character a row with a row for each space), Vietnamese (PhoNER_COVID19 at word level,
syllables joined by '_', and at syllable level), Arabic (ANERcorp, clitics attached, right to left),
Dutch and Spanish (CoNLL-2002 as published: -DOCSTART- lines, a POS column), Chinese (Weibo NER, one
character a row), Japanese (Stockmark Wikipedia NER, one character a row), German (GermEval 2014,
numbered rows) and Thai (ThaiNER 1.3, words with a row for each space).

The data is built OUTSIDE the repository by bench/build_language_data.py from public GitHub
snapshots (fetched with the session's ``fetch`` tool); its SOURCES table names every corpus's
repository, path and licence, and docs/languages.md repeats it. For each language folder under
--data (default /work/extdata):

    <lang>/sources/NAME.txt.gz          same-language sources of different registers + an English one
    <lang>/targets/NAME/test.{conll,tsv}
    <lang>/expected.json                {"english": SOURCE, "matched": {TARGET: SOURCE, ...}}

it runs `simcore matrix` (the CLI, as a user would) with the language-model measures, then `simcore
recommend --pretraining lm`, and prints per language: each target, how its rows cut it (the matrix
CSV's target_cut), the recommended source, the level, whether it is the register-matched
same-language source, whether the English source won (it must never win for a non-English target),
and each source's TVC and PPL (and TVcC where it was computed); at the end a Markdown table with the
matched source's TVC for every target.

Sources are compared at simcore's default size (the smallest source's) unless --sample-tokens is
given. TVcC is tried first; if the matrix fails with it, the run is repeated without it and the
table says so.

Usage:
    .venv/bin/python bench/build_language_data.py   # once: /work/extdata from the snapshots
    .venv/bin/python bench/bench_languages.py [--data /work/extdata]
        [--langs ko,vi,ar,nl,es,zh,ja,de,th]
        [--measures ppl,jsd,tvc,tvcc] [--sample-tokens N] [--bootstrap 50] [--jobs 2]
        [--work DIR] [--cache DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

csv.field_size_limit(sys.maxsize)


def run_simcore(args: list[str]) -> subprocess.CompletedProcess:
    """Run the simcore CLI of this checkout (python -m simcore) and capture its output."""
    return subprocess.run([sys.executable, "-m", "simcore", *args], capture_output=True, text=True)


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def language_columns(rows: list[dict]) -> list[str]:
    """Columns that name a corpus's language or script (added by the per-language work of issue 27)."""
    if not rows:
        return []
    keys = ("language", "script", "lang_", "cut")
    return [c for c in rows[0] if any(k in c.lower() for k in keys)]


def cut_of(options: str) -> str:
    """How a target's rows cut both sides, from a row's options (chars / cut), as the Corpora page
    says it."""
    found = json.loads(options) if options else {}
    if found.get("chars"):
        return "characters"
    return {"rejoined": "words rejoined from characters", "characters": "characters",
            "syllables": "syllables split at '_'"}.get(found.get("cut", ""), "words")


def fmt(value: str | None, digits: int = 3) -> str:
    if value in (None, ""):
        return "-"
    try:
        v = float(value)
    except ValueError:
        return value
    return f"{v:.{digits}f}" if abs(v) < 100 else f"{v:,.0f}"


def matrix_for_language(lang_dir: Path, work: Path, measures: str, sample_tokens: int,
                        bootstrap: int, jobs: int, cache: Path) -> tuple[Path | None, str, str, float]:
    """Compute the matrix; returns (csv path or None, measures used, message, seconds)."""
    out = work / f"{lang_dir.name}_matrix.csv"
    tried = [measures]
    if "tvcc" in measures.split(","):
        tried.append(",".join(m for m in measures.split(",") if m != "tvcc"))
    message = ""
    for ms in tried:
        t0 = time.perf_counter()
        proc = run_simcore(["matrix", "--sources", str(lang_dir / "sources"),
                            "--targets", str(lang_dir / "targets"), "--out", str(out),
                            "--measures", ms,
                            *(["--sample-tokens", str(sample_tokens)] if sample_tokens else []),
                            "--bootstrap", str(bootstrap), "--jobs", str(jobs),
                            "--cache", str(cache), "--quiet"])
        seconds = time.perf_counter() - t0
        if proc.returncode == 0 and out.exists():
            return out, ms, message, seconds
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        message += f"matrix with {ms} failed (exit {proc.returncode}): {last}. "
    return None, "", message, 0.0


def recommend(matrix: Path, work: Path, lang: str) -> dict[str, dict]:
    out = work / f"{lang}_recommendation.csv"
    proc = run_simcore(["recommend", "--matrix", str(matrix), "--pretraining", "lm", "--out", str(out)])
    if proc.returncode != 0 or not out.exists():
        print(f"  recommend failed: {proc.stderr.strip()[-300:]}")
        return {}
    return {r["target"]: r for r in read_rows(out)}


def print_language(lang_dir: Path, rows: list[dict], recs: dict[str, dict], expected: dict,
                   measures_used: str) -> list[dict]:
    """Print the language's table; return one summary dict per target."""
    english = expected.get("english", "")
    matched = expected.get("matched", {})
    sources = sorted({r["source"] for r in rows})
    targets = sorted({r["target"] for r in rows})
    value = {(r["source"], r["target"], r["measure"]): r for r in rows}
    shown = [m for m in ("tvc", "tvcc", "ppl", "jsd") if m in measures_used.split(",")]

    lang_cols = language_columns(rows)
    if lang_cols:
        print("  language columns: " + ", ".join(lang_cols))
        seen = set()
        for r in rows:
            key = (r["source"], r["target"])
            if key[0] in seen and key[1] in seen:
                continue
            seen.update(key)
            print("    " + f"{r['source']} / {r['target']}: "
                  + ", ".join(f"{c}={r.get(c, '')}" for c in lang_cols))
    else:
        print("  (the matrix CSV has no language/script columns)")

    header = ["target", "recommended", "level", "conf", "matched", "matched won", "English won"]
    print("  " + " | ".join(header))
    summary = []
    for t in targets:
        rec = recs.get(t, {})
        chosen = rec.get("recommended", "")
        firsts = chosen.split("|") if chosen else []
        m = matched.get(t, "")
        cut_row = next((r for r in rows if r["target"] == t and r.get("options")), {})
        tvc_row = value.get((m, t, "tvc"), {})
        summary.append(dict(target=t, recommended=chosen, level=rec.get("level", ""),
                            matched=m, matched_won=bool(m) and firsts[:1] == [m],
                            english_won=english in firsts, cut=cut_of(cut_row.get("options", "")),
                            matched_tvc=fmt(tvc_row.get("value")),
                            tokens=tvc_row.get("sample_tokens", "")))
        s = summary[-1]
        print("  " + " | ".join([t, chosen or "-", s["level"] or "-", fmt(rec.get("confidence"), 2),

                                m or "-", "yes" if s["matched_won"] else "NO",

                                "YES (wrong)" if s["english_won"] else "no"]))
    print("  per source (" + ", ".join(m.upper() for m in shown) + "; '*' = matched source, "
          "'en' = English source):")
    for t in targets:
        print(f"    {t}:")
        for s in sources:
            mark = "*" if s == matched.get(t) else ("en" if s == english else " ")
            cells = []
            for m in shown:
                r = value.get((s, t, m))
                if r is None:
                    cells.append(f"{m}=-")
                elif r.get("error"):
                    cells.append(f"{m}=err")
                else:
                    cells.append(f"{m}={fmt(r.get('value'))}")
            oov = value.get((s, t, "ppl"), {}).get("oov_rate", "")
            size = value.get((s, t, shown[0]), {}).get("sample_tokens", "") if shown else ""
            print(f"      {mark:>2} {s:<28} " + "  ".join(cells)
                  + f"  oov={fmt(oov, 2)}  sample_tokens={size}")
    return summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("/work/extdata"))
    ap.add_argument("--langs", default="", help="comma-separated language folders (default: all)")
    ap.add_argument("--measures", default="ppl,jsd,tvc,tvcc")
    ap.add_argument("--sample-tokens", type=int, default=0,
                    help="0: simcore's default (the smallest source)")
    ap.add_argument("--bootstrap", type=int, default=50)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", type=Path, default=None, help="where the matrices go (default: a temp dir)")
    ap.add_argument("--cache", type=Path, default=None, help="simcore store (default: under --work)")
    args = ap.parse_args()

    if not args.data.is_dir():
        print(f"no data at {args.data}: build it with bench/build_language_data.py")
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_languages_"))
    work.mkdir(parents=True, exist_ok=True)
    cache = args.cache or work / "cache"
    wanted = [x for x in args.langs.split(",") if x]
    langs = sorted(d for d in args.data.iterdir()
                   if (d / "sources").is_dir() and (d / "targets").is_dir() and (not wanted or d.name in wanted))
    print(f"data {args.data}, measures {args.measures}, --sample-tokens {args.sample_tokens}, "
          f"--bootstrap {args.bootstrap}, --jobs {args.jobs}, matrices in {work}")
    overall = []
    for lang_dir in langs:
        exp_path = lang_dir / "expected.json"
        expected = json.loads(exp_path.read_text(encoding="utf-8")) if exp_path.exists() else {}
        print(f"\n== {lang_dir.name}")
        matrix, used, message, seconds = matrix_for_language(
            lang_dir, work, args.measures, args.sample_tokens, args.bootstrap, args.jobs, cache)
        if message:
            print("  " + message.strip())
        if matrix is None:
            continue
        print(f"  matrix ({used}) in {seconds:.1f} s")
        rows = read_rows(matrix)
        recs = recommend(matrix, work, lang_dir.name)
        for s in print_language(lang_dir, rows, recs, expected, used):
            overall.append(dict(lang=lang_dir.name, **s))

    print("\n== summary (Markdown)")
    print("| lang | target | cut | matched source | TVC of matched | tokens/source | recommended "
          "| level "
          "| matched first | English won |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in overall:
        print(f"| {s['lang']} | {s['target']} | {s['cut']} | {s['matched']} | {s['matched_tvc']} "
              f"| {s['tokens']} "
              f"| {s['recommended']} | {s['level']} | {'yes' if s['matched_won'] else 'no'} "
              f"| {'YES' if s['english_won'] else 'no'} |")
    n = len(overall)
    print(f"matched same-language source first: {sum(s['matched_won'] for s in overall)}/{n}; "
          f"English source recommended for a non-English target: {sum(s['english_won'] for s in overall)}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
