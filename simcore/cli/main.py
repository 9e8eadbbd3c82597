"""The command line: ``python -m simcore matrix | rank | agreement | correlate | regret | audit``.

Bad input ends with a one-line message on standard error and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd

from ..contamination.ngrams import OVERLAP_CHAR_NGRAM, OVERLAP_NGRAM
from ..contamination.scan import OverlapOptions
from ..contamination.verdict import OVERLAP_THRESHOLD, overlap_notes
from ..corpora.remote import scrub
from ..corpora.tokenize import TokenizerOptions
from ..distributed.prepare import matrix_runner
from ..distributed.shards import add_source_glob_option, with_glob_sources
from ..matrix.corpus_cache import corpora_in
from ..matrix.plan import DEFAULT_MEASURES
from ..matrix.schedule import MAX_JOBS
from ..matrix.workbench import Workbench
from ..measures.lookup import all_measures
from ..measures.options import MeasureOptions
from ..reporting.export import csv_text, write_ranking, write_recommendations
from ..utils.errors import SimcoreError
from ..utils.option_checks import MAX_EMB_SENTENCES, MAX_KL_BUCKETS
from ..utils.store import ArtefactStore
from ..utils.terminal import SafeStream, terminal_text
from . import arguments as opt
from .cluster_options import add_cluster_options, scheduler_address
from .decontaminate_command import add_decontaminate_command
from .probe_command import add_probe_command
from .select_command import add_select_command

MAX_SAMPLES = 100
MAX_SAMPLE_TOKENS = 10_000_000_000
MAX_PPL_ORDER = 6  # KenLM's programs are built for orders up to 6 (KENLM_MAX_ORDER)
MAX_WORKERS = 256
MAX_SEED = 2**32 - 1
MAX_BOOTSTRAP = 100_000


def _print_table(table: pd.DataFrame) -> None:
    with pd.option_context("display.width", 160, "display.max_rows", 500, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


def _labels(text: str) -> tuple[str, ...]:
    """An argparse type: comma-separated tag names, none blank."""
    names = tuple(n.strip() for n in text.split(","))
    if not all(names) or len(names) > 10_000:
        raise argparse.ArgumentTypeError("give the tag names separated by commas, e.g. O,B-PER,I-PER")
    return names


def cmd_matrix(args: argparse.Namespace) -> int:
    out = opt.check_out(args.out, (".csv",))
    opt.no_clobber({"--out": out}, {"--sources": args.sources, "--targets": args.targets},
                   {"--source-glob": args.source_glob})
    options = MeasureOptions(ppl_order=args.ppl_order, seed=args.seed, ppl_per_sentence=args.ppl_per_sentence,
                             bootstrap=args.bootstrap,
                             tvcc_tag_source=args.tvcc_tag_source, kl_buckets=args.kl_buckets,
                             emb_sentences=args.emb_sentences,
                             **({"wvv_workers": args.workers} if args.workers else {}))
    bench = Workbench(ArtefactStore(args.cache), TokenizerOptions(lowercase=not args.keep_case), options)
    bench.overlap_options = OverlapOptions(args.overlap_ngram, args.overlap_char_ngram)
    reader = {"text_field": args.text_field, "encoding": args.encoding, "labels": args.labels,
              "storage_options": args.storage_options}
    sources, targets = corpora_in(args.sources, **reader), corpora_in(args.targets, **reader)
    sources = with_glob_sources(sources, args.source_glob, **reader)
    both = opt.with_languages([*sources, *targets], args.language)
    sources, targets = both[:len(sources)], both[len(sources):]
    opt.check_names([*sources, *targets])
    bar = opt.Bar(not args.quiet)
    try:
        run = matrix_runner(bench, scheduler_address(args), args.local_cluster)
        parallel = {} if scheduler_address(args) or args.local_cluster else {"jobs": args.jobs}
        parallel["compute_noise"] = args.compute_noise
        table = run(sources, targets, args.measures, samples=args.samples,
                    sample_tokens=args.sample_tokens, progress=bar, **parallel)
    finally:
        bar.close()
    opt.write_text(out, csv_text(table))
    failed = table.attrs.get("failed_corpora", {})
    for message in sorted(set(table["error"].dropna()) - set(failed.values())):
        print(terminal_text(f"simcore: warning: {message}"), file=sys.stderr)
    flags = table[table["flag"].fillna("") != ""].groupby("flag", sort=False)["source"].unique()
    for flag, names in flags.items():
        who = names[0] if len(names) == 1 else f"{len(names)} sources ({', '.join(names[:3])}{', …' if len(names) > 3 else ''})"
        print(terminal_text(f"simcore: note: {who}: {flag}"), file=sys.stderr)
    for corpus, is_source in (*((c, True) for c in sources), *((c, False) for c in targets)):
        if corpus.problem is None and f"source {corpus.name}" not in failed and f"target {corpus.name}" not in failed:
            role = "source" if is_source else "target"
            notes = table.attrs.get("read_notes", {}).get(f"{role} {corpus.name}")  # what reading skipped
            if notes:
                print(terminal_text(f"simcore: note: {corpus.name}: {notes}"), file=sys.stderr)
            if not args.quiet:
                cut = None if is_source else table.attrs.get("target_cuts", {}).get(corpus.name)
                note = corpus.language_note(cut).replace(", given;", ", given (--language);")
                print(terminal_text(f"simcore: note: {corpus.name}: {note}"), file=sys.stderr)
    for target, tokens in _cross_language(table):
        print(terminal_text(f"simcore: note: {target}: {tokens}"), file=sys.stderr)
    for line in overlap_notes(table, args.overlap_threshold):
        print(terminal_text(f"simcore: warning: {line}"), file=sys.stderr)
    if not args.quiet:
        wide = table.pivot_table(index=["target", "source"], columns="measure", values="value", aggfunc="first")
        _print_table(wide.reset_index())
        _print_recommendations(table, overlap_threshold=args.overlap_threshold)
    print(terminal_text(f"wrote {len(table)} rows to {out}"), file=sys.stderr)
    if failed:
        listed = "; ".join(f"{who}: {why}" for who, why in sorted(failed.items()))
        print(terminal_text(f"simcore: error: {len(failed)} corpus(es) could not be read, their cells are empty: "
                            f"{listed}"), file=sys.stderr)
        return 2
    return 0


def _cross_language(table: pd.DataFrame) -> list[tuple[str, str]]:
    """Targets with a source in another language, and which (the cells are allowed, and said)."""
    from ..corpora.lang.detect import across_languages, language_name

    if "source_language" not in table or "target_language" not in table:
        return []
    out = []
    pairs = table[["target", "source", "target_language", "source_language"]].drop_duplicates()
    for target, rows in pairs.groupby("target", sort=False):
        other = [(s, a, b) for s, a, b in zip(rows["source"], rows["source_language"], rows["target_language"])
                 if across_languages(a, b)]
        if other:
            listed = ", ".join(f"{s} ({language_name(a)})" for s, a, _ in other)
            out.append((str(target), f"in {language_name(other[0][2])}; compared with sources in another "
                                     f"language: {listed}"))
    return out


MAX_PRINTED_TARGETS = 10  # more targets: the first ones and a summary line, unless --all


def _print_recommendations(long: pd.DataFrame, pretraining: str = "lm", reasons: bool = False,
                           recommendations: list[Any] | None = None, show_all: bool = False,
                           overlap_threshold: float = OVERLAP_THRESHOLD) -> None:
    from ..answer.recommendation import PRETRAINING, PRETRAINING_LABEL, recommend

    if not set(PRETRAINING[pretraining]) & set(long["measure"]):
        return
    print(f"\nRecommendation for {PRETRAINING_LABEL[pretraining]}:")
    _print_headlines(recommend(long, pretraining, overlap_threshold) if recommendations is None else recommendations,
                     reasons, show_all)


def _print_headlines(recommendations: list[Any], reasons: bool, show_all: bool) -> None:
    shown = recommendations if show_all else recommendations[:MAX_PRINTED_TARGETS]
    for rec in shown:
        print(terminal_text(rec.headline() + (f". Why: {rec.reason}" if reasons else "")))
    if len(shown) < len(recommendations):
        levels = pd.Series([rec.level for rec in recommendations]).value_counts()
        counts = ", ".join(f"{n:,} {level}" for level, n in levels.items())
        print(f"... and {len(recommendations) - len(shown):,} more targets ({len(recommendations):,} in all: "
              f"{counts}); --all prints every one, --out FILE writes them")


def cmd_recommend(args: argparse.Namespace) -> int:
    from ..analysis.ranking import rank_sources  # scipy loads only for the commands that need it
    from ..analysis.tables import read_matrix
    from ..answer.recommendation import recommend

    out = opt.check_out(args.out, (".csv", ".json", ".md", ".html")) if args.out is not None else None
    opt.no_clobber({"--out": out}, {"--matrix": args.matrix})
    long = read_matrix(args.matrix)
    probe = _probe_results(args.probe_results)
    recommendations = recommend(long, args.pretraining, args.overlap_threshold, probe_results=probe)
    _print_headlines(recommendations, True, args.all)
    if out:
        ranking = rank_sources(long, pretraining=args.pretraining, recommendations=recommendations)
        write_recommendations(recommendations, ranking, out, _matrix_options(long))
        print(terminal_text(f"wrote {out}"), file=sys.stderr)
    return 0


def _probe_results(path: str | None) -> pd.DataFrame | None:
    """A results table written by ``simcore probe`` (target, source, f1, f1_std, baseline, ...)."""
    if path is None:
        return None
    from ..analysis.tables import read_csv_table

    table = read_csv_table(path)
    if not {"target", "source", "f1"} <= set(table.columns):
        raise SimcoreError(f"{os.path.basename(path)} is not a probe results table: it needs the columns "
                           "target, source and f1 (write one with `simcore probe --out FILE.csv`)")
    return table


def _matrix_options(long: pd.DataFrame) -> dict[str, Any]:
    """The options recorded in a matrix's ``options`` column, or {} when there are none readable."""
    if "options" not in long.columns:
        return {}
    for text in long["options"].dropna():
        try:
            value = json.loads(str(text))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return {}


def cmd_rank(args: argparse.Namespace) -> int:
    from ..analysis.ranking import rank_sources  # scipy loads only for the commands that need it
    from ..analysis.tables import read_matrix
    from ..answer.recommendation import PRETRAINING, recommend

    out = opt.check_out(args.out, (".csv", ".json", ".md", ".html")) if args.out is not None else None
    opt.no_clobber({"--out": out}, {"--matrix": args.matrix})
    long = read_matrix(args.matrix)
    recommendations = (recommend(long, args.pretraining, args.overlap_threshold)
                       if set(PRETRAINING[args.pretraining]) & set(long["measure"]) else [])
    ranking = rank_sources(long, args.measures, args.pretraining, recommendations=recommendations)
    for line in overlap_notes(long, args.overlap_threshold):
        print(terminal_text(f"simcore: warning: {line}"), file=sys.stderr)
    if out:
        write_ranking(ranking, out, _matrix_options(long), recommendations)
        print(terminal_text(f"wrote {args.out}"), file=sys.stderr)
    else:
        targets = list(dict.fromkeys(ranking["target"]))
        if args.all or len(targets) <= MAX_PRINTED_TARGETS:
            _print_table(ranking)
        else:
            _print_table(ranking[ranking["target"].isin(set(targets[:MAX_PRINTED_TARGETS]))])
            print(f"... and {len(targets) - MAX_PRINTED_TARGETS:,} more targets ({len(ranking):,} rows in all); "
                  "--all prints every row, --out FILE writes them")
        _print_recommendations(long, args.pretraining, recommendations=recommendations, show_all=args.all)
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from ..analysis.agreement import agreement  # scipy loads only for the commands that need it
    from ..analysis.tables import read_matrix

    out = opt.check_out(args.out, (".csv",)) if args.out is not None else None
    opt.no_clobber({"--out": out}, {"--matrix": args.matrix})
    result = agreement(read_matrix(args.matrix), args.measures, include_unreliable=args.include_unreliable)
    print(f"Fleiss' kappa ({', '.join(result.measures)}; {len(result.items)} comparisons): {result.fleiss:.3f}")
    if result.left_out_note:
        print(result.left_out_note + ("" if args.include_unreliable else " (--include-unreliable keeps them)"))
    for row in result.cohen.itertuples(index=False):
        print(f"Cohen's kappa {row.measure_a} vs {row.measure_b}: {row.kappa:.3f}")
    print(f"{len(result.disagreements)} comparisons where the measures disagree")
    if out:
        opt.write_text(out, csv_text(result.disagreements))
        print(terminal_text(f"wrote the disagreements to {out}"), file=sys.stderr)
    return 0


def _results(args: argparse.Namespace) -> pd.DataFrame:
    from ..analysis.correlation import (
        dropped_note,
        read_results,  # scipy loads only for the commands that need it
    )

    results = read_results(args.results, f1=args.f1, baseline=args.baseline, improvement=args.improvement)
    note = dropped_note(results)
    if note:
        print(terminal_text(f"simcore: note: {note}"), file=sys.stderr)
    return results


def _print_left_out(table: pd.DataFrame) -> None:
    from ..analysis.correlation import left_out_note

    note = left_out_note(table.attrs.get("left_out"))
    if note:
        print(note + " (--include-capped keeps them)")


def cmd_correlate(args: argparse.Namespace) -> int:
    from ..analysis.correlation import correlate  # scipy loads only for the commands that need it
    from ..analysis.tables import read_matrix

    out = opt.check_out(args.out, (".csv",)) if args.out is not None else None
    opt.no_clobber({"--out": out}, {"--matrix": args.matrix, "--results": args.results})
    table = correlate(read_matrix(args.matrix), _results(args), args.measures, per_target=args.per_target,
                      include_capped=args.include_capped)
    _print_table(table)
    _print_left_out(table)
    if out:
        opt.write_text(out, csv_text(table))
    return 0


def cmd_regret(args: argparse.Namespace) -> int:
    from ..analysis.regret import regret
    from ..analysis.tables import read_matrix  # scipy loads only for the commands that need it

    out = opt.check_out(args.out, (".csv",)) if args.out is not None else None
    opt.no_clobber({"--out": out}, {"--matrix": args.matrix, "--results": args.results})
    table = regret(read_matrix(args.matrix), _results(args), args.measures, include_capped=args.include_capped)
    _print_table(table)
    _print_left_out(table)
    if out:
        opt.write_text(out, csv_text(table))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from ..analysis.audit import audit, display_table, write_audit
    from ..analysis.tables import read_matrix

    out = opt.check_out(args.out, (".csv", ".json", ".md", ".html")) if args.out is not None else None
    opt.no_clobber({"--out": out}, {"--matrix": args.matrix, "--results": args.results})
    kinds = list(PRETRAINING_CHOICES) if args.pretraining == "both" else [args.pretraining]
    table = audit(read_matrix(args.matrix), _results(args), args.measures, pretraining=kinds, k=args.k,
                  tie_f1=args.tie_f1, bootstrap=args.bootstrap, seed=args.seed, include_capped=args.include_capped)
    spread = "the results' spread over seeds, at least " if table.attrs["spread"] else ""
    print(f"All {table['targets'].max()} targets (95% intervals: bootstrap over targets, {args.bootstrap} resamples, "
          f"seed {args.seed}; F1 ties: pairs closer than {spread}{args.tie_f1:g} F1, left out):")
    _print_table(display_table(table))
    if args.per_target:
        for target in sorted(set(table["scope"]) - {"all"}):
            print()
            print(terminal_text(f"{target}:"))
            _print_table(display_table(table, target))
    _print_left_out(table)
    if out:
        write_audit(table, out)
        print(terminal_text(f"wrote {out}"), file=sys.stderr)
    return 0


def _tie_f1(text: str) -> float:
    """An argparse type: F1 points, a finite number from 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of F1 points, at least 0 (got {text})")
    return value


PRETRAINING_CHOICES = ("lm", "vectors")
PRETRAINING_HELP = ("what you will pretrain: lm (language models, BERT-style encoders; carried by PPL and JSD) "
                    "or vectors (word vectors; carried by TVcC, TVC and WVV)")


def build_parser() -> argparse.ArgumentParser:
    parser = opt.Parser(prog="python -m simcore",
                        description="Which unlabeled corpus to pretrain on for an NER task.")
    commands = parser.add_subparsers(dest="command", required=True)

    m = commands.add_parser("matrix", help="score every source against every target")
    m.add_argument("--sources", required=True, type=opt.path_text,
                   help="directory or URL (s3://, gs://, https://, hf://, ...): each file or subdirectory is one "
                        "source")
    m.add_argument("--targets", required=True, type=opt.path_text,
                   help="directory or URL: each file or subdirectory is one target")
    m.add_argument("--out", required=True, type=opt.path_text, help="CSV file for the long table")
    m.add_argument("--measures", type=opt.measures, default=",".join(DEFAULT_MEASURES),
                   help=f"comma-separated, from {', '.join(all_measures())} (default {','.join(DEFAULT_MEASURES)})")
    m.add_argument("--samples", type=opt.whole_number(1, MAX_SAMPLES), default=1,
                   help=f"sub-corpora per source (default 1, at most {MAX_SAMPLES})")
    m.add_argument("--sample-tokens", type=opt.whole_number(1, MAX_SAMPLE_TOKENS), default=None,
                   help="tokens per sub-corpus for every measure (default: the smallest source's size, at most "
                        "10M, with pairs of larger sources also compared at the largest size both have)")
    m.add_argument("--ppl-order", type=opt.whole_number(1, MAX_PPL_ORDER), default=5)
    m.add_argument("--ppl-per-sentence", action="store_true", help="mean per-sentence perplexity")
    m.add_argument("--tvcc-tag-source", action="store_true",
                   help="TVcC: compare with the source's content words (tags the source sample; slow)")
    m.add_argument("--kl-buckets", type=opt.whole_number(1, MAX_KL_BUCKETS), default=MeasureOptions().kl_buckets,
                   metavar="N",
                   help=f"KL: hashed 1-2-gram buckets (default {MeasureOptions().kl_buckets:,}, DSIR's; at most "
                        f"{MAX_KL_BUCKETS:,})")
    m.add_argument("--emb-sentences", type=opt.whole_number(1, MAX_EMB_SENTENCES),
                   default=MeasureOptions().emb_sentences, metavar="N",
                   help=f"EMB: sentences per side embedded, drawn at random (default "
                        f"{MeasureOptions().emb_sentences:,}, at most {MAX_EMB_SENTENCES:,})")
    m.add_argument("--seed", type=opt.whole_number(0, MAX_SEED, allow_float_text=False), default=13)
    m.add_argument("--workers", type=opt.whole_number(1, MAX_WORKERS), default=None,
                   help="word2vec threads (default 1: reproducible WVV; more are faster but vary between runs)")
    m.add_argument("--compute-noise", action="store_true",
                   help="compute a measure even where it is noise at the comparison size (WVV below 1M tokens per "
                        "source); by default such cells are left empty and say why")
    m.add_argument("--jobs", type=opt.whole_number(1, MAX_JOBS), default=os.cpu_count() or 1,
                   help="processes computing the matrix's parts at once (default: this machine's cores); every "
                        "value is the same as with 1")
    m.add_argument("--bootstrap", type=opt.whole_number(0, MAX_BOOTSTRAP, allow_float_text=False), default=200,
                   help="bootstrap replicates over the target's sentences for intervals and confidence (0: none)")
    m.add_argument("--keep-case", action="store_true", help="do not lower-case tokens")
    m.add_argument("--text-field", type=opt.field_name, default="text",
                   help="JSONL field or CSV column holding the text")
    m.add_argument("--encoding", type=opt.encoding, default=None,
                   help="input encoding (default: UTF-8, UTF-16 by BOM)")
    m.add_argument("--labels", type=_labels, default=None, metavar="O,B-PER,...",
                   help="names of the integer tags of Hub-style NER targets, in order (default: the data set's "
                        "own, from dataset_info.json or the file's features)")
    m.add_argument("--language", type=opt.language_choice, action="append", default=None, metavar="[NAME=]CODE",
                   help="the language of every corpus (CODE, e.g. de) or of one (NAME=CODE), instead of detecting it "
                        "from the text; repeat for several corpora")
    m.add_argument("--cache", type=opt.path_text, default=None,
                   help="artefact store (default $SIMCORE_CACHE or ~/.cache/simcore)")
    m.add_argument("--quiet", action="store_true")
    m.add_argument("--overlap-ngram", type=opt.whole_number(1, 200), default=OVERLAP_NGRAM, metavar="N",
                   help=f"words in the n-grams of the overlap columns (default {OVERLAP_NGRAM}; see "
                        "docs/contamination.md)")
    m.add_argument("--overlap-char-ngram", type=opt.whole_number(1, 200), default=OVERLAP_CHAR_NGRAM, metavar="N",
                   help=f"characters in them, for a target cut into characters (default {OVERLAP_CHAR_NGRAM})")
    _add_threshold(m)
    add_cluster_options(m)
    add_source_glob_option(m)
    m.add_argument("--storage-options", type=opt.storage_options, default=None, metavar="JSON",
                   help="fsspec options for URL sources and targets, e.g. '{\"endpoint_url\": \"https://...\"}' "
                        "(default: credentials and endpoints from the environment and config files; never written "
                        "anywhere)")
    m.set_defaults(run=cmd_matrix)

    r = commands.add_parser("rank", help="rank sources per target by each measure and by the recommendation")
    r.add_argument("--matrix", required=True, type=opt.path_text)
    r.add_argument("--measures", type=opt.measures, default=None)
    r.add_argument("--pretraining", choices=PRETRAINING_CHOICES, default="lm", help=PRETRAINING_HELP)
    r.add_argument("--out", type=opt.path_text, default=None, help=".csv, .json, .md or .html")
    _add_threshold(r)
    r.add_argument("--all", action="store_true",
                   help=f"print every target (default: the first {MAX_PRINTED_TARGETS} and a summary)")
    r.set_defaults(run=cmd_rank)

    e = commands.add_parser("recommend", help="the source to pretrain on per target, how sure, and why")
    e.add_argument("--matrix", required=True, type=opt.path_text, help="a matrix CSV written by `simcore matrix`")
    e.add_argument("--pretraining", choices=PRETRAINING_CHOICES, default="lm", help=PRETRAINING_HELP)
    e.add_argument("--out", type=opt.path_text, default=None, help=".csv (one row per target), .json, .md or .html")
    _add_threshold(e)
    e.add_argument("--all", action="store_true",
                   help=f"print every target (default: the first {MAX_PRINTED_TARGETS} and a summary)")
    e.add_argument("--probe-results", type=opt.path_text, default=None,
                   help="a CSV written by `simcore probe`: its F1 is shown beside each answer it covers")
    e.set_defaults(run=cmd_recommend)

    a = commands.add_parser("agreement", help="Fleiss' and Cohen's kappa between measures")
    a.add_argument("--matrix", required=True, type=opt.path_text)
    a.add_argument("--measures", type=opt.measures, default="ppl,wvv,tvc")
    a.add_argument("--out", type=opt.path_text, default=None, help="CSV of the comparisons where measures disagree")
    a.add_argument("--include-unreliable", action="store_true",
                   help="keep comparisons that rest on a cell computed below its measure's reliable size")
    a.set_defaults(run=cmd_agreement)

    for name, run, text in (("correlate", cmd_correlate, "correlation of each measure with NER improvement"),
                            ("regret", cmd_regret, "regret of choosing the source by each measure"),
                            ("audit", cmd_audit, "decision accuracy, regret and NDCG of each measure and the rule")):
        c = commands.add_parser(name, help=text)
        c.add_argument("--matrix", required=True, type=opt.path_text)
        c.add_argument("--results", required=True, type=opt.path_text, help="CSV: target, source, f1 [, baseline]")
        c.add_argument("--f1", type=opt.field_name, default="f1", help="column holding F1")
        c.add_argument("--baseline", type=opt.field_name, default="baseline",
                       help="column holding the no-pretraining F1")
        c.add_argument("--improvement", type=opt.field_name, default=None,
                       help="column already holding F1 - baseline")
        c.add_argument("--measures", type=opt.measures, default=None)
        c.add_argument("--out", type=opt.path_text, default=None,
                       help=".csv, .json, .md or .html" if name == "audit" else "CSV file")
        c.add_argument("--include-capped", action="store_true",
                       help="keep results whose probe runs were cut short by the time cap (column time_capped)")
        if name in ("correlate", "audit"):
            c.add_argument("--per-target", action="store_true", help=f"also {name} within each target")
        if name == "audit":
            _add_audit_options(c)
        c.set_defaults(run=run)
    add_select_command(commands)
    add_probe_command(commands)
    add_decontaminate_command(commands)
    return parser


def _add_audit_options(c: argparse.ArgumentParser) -> None:
    c.add_argument("--pretraining", choices=(*PRETRAINING_CHOICES, "both"), default="both",
                   help="which recommendation rule to audit beside the measures (default both)")
    c.add_argument("--k", type=opt.whole_number(1, 10_000), default=3, help="NDCG@k cut-off (default 3)")
    c.add_argument("--tie-f1", type=_tie_f1, default=0.0, metavar="F1",
                   help="pairs whose F1 differ by less than this (or than their spread over seeds, f1_std, when "
                        "larger) are ties, not errors (default 0: only equal F1)")
    c.add_argument("--bootstrap", type=opt.whole_number(0, MAX_BOOTSTRAP, allow_float_text=False), default=2000,
                   help="resamples of the targets for the 95%% intervals (default 2000; 0: none)")
    c.add_argument("--seed", type=opt.whole_number(0, MAX_SEED, allow_float_text=False), default=0)


def _add_threshold(c: argparse.ArgumentParser) -> None:
    c.add_argument("--overlap-threshold", type=_share, default=OVERLAP_THRESHOLD, metavar="SHARE",
                   help="share of a target's test sentences a source may hold before the answer warns "
                        f"(default {OVERLAP_THRESHOLD:g}, i.e. {OVERLAP_THRESHOLD * 100:g}%%; 0.05 or 5%%)")


def _share(text: str) -> float:
    """An argparse type: a share from 0 to 1, written 0.05 or 5%."""
    if text.strip() in ("0", "0%", "0.0"):
        return 0.0
    return opt.fraction(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status (0 done, 2 bad input or a failure explained in one line)."""
    with _escaped_terminal(), _stopped_by_sigterm():  # also argparse's messages, which repeat the values given
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # argparse has printed its one-line usage error (or the help)
            return exc.code if isinstance(exc.code, int) else 2
        status = _run(args)
        if _TERMINATED and status != 143:
            # the exception was raised where Python only prints it (a finalizer): still a terminated run
            print("simcore: stopped (terminated)", file=sys.stderr)
            return 143
        return status


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, so that it stops its worker processes as for Ctrl-C."""


_TERMINATED: list[int] = []  # the SIGTERMs received while a command ran


def _raise_terminated(signum: int, frame: Any) -> None:
    _TERMINATED.append(signum)
    raise _Terminated


@contextlib.contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM stops the command as Ctrl-C does (its pools terminated, exit status 143); in the main
    thread only (a library call from another thread keeps its process's handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _TERMINATED.clear()
    old = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def _escaped_terminal() -> Iterator[None]:
    """Standard output and error escape control characters (a name cannot move the cursor or change colours)."""
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = old


def _run(args: argparse.Namespace) -> int:
    try:
        return args.run(args)
    except SimcoreError as exc:
        print(f"simcore: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except _Terminated:
        print("simcore: stopped (terminated)", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("simcore: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            print(f"simcore: error: the disk is full{where and ' (' + where.strip() + ')'}; free some space and run again",
                  file=sys.stderr)
        else:
            print(f"simcore: error: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("simcore: error: out of memory; use smaller --sample-tokens or fewer --samples", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: still one line and status 2, the traceback only on request
        if os.environ.get("SIMCORE_DEBUG"):
            raise
        print(f"simcore: error: internal error ({type(exc).__name__}: {_one_line(exc)}); please report it "
              "(SIMCORE_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 2


def _one_line(exc: BaseException) -> str:
    return scrub(" ".join(str(exc).split())[:2000] or type(exc).__name__)  # no credential ever printed
