"""``python -m simcore select``: keep the pool sentences closest to a target."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..corpora.corpus import Corpus
from ..corpora.remote import is_url
from ..selection.choosing import MAX_MIN_TOKENS, PER_TOKEN_MIN_TOKENS
from ..selection.driver import select
from ..selection.options import (
    DESCRIPTIONS,
    MAX_ORDER,
    MAX_POOL_SAMPLE,
    MAX_PROCESSES,
    MAX_STEPS,
    MAX_TARGET_TOKENS,
    MAX_WORKERS,
    METHODS,
    TAGGERS,
    SelectionOptions,
)
from ..utils.errors import SimcoreError
from ..utils.store import ArtefactStore
from ..utils.terminal import terminal_text
from . import arguments as opt
from .progress import ProgressBar

_count = opt.whole_number(1, 10**9, allow_float_text=False)
_order = opt.whole_number(1, MAX_ORDER, allow_float_text=False)
_workers = opt.whole_number(1, MAX_WORKERS, allow_float_text=False)
_processes = opt.whole_number(1, MAX_PROCESSES, allow_float_text=False)
_steps = opt.whole_number(1, MAX_STEPS, allow_float_text=False)
_pool_sample = opt.whole_number(1, MAX_POOL_SAMPLE, allow_float_text=False)
_tokens = opt.whole_number(1, MAX_TARGET_TOKENS, allow_float_text=False)
_fraction = opt.fraction
_min_tokens = opt.whole_number(1, MAX_MIN_TOKENS, allow_float_text=False)


def cmd_select(args: argparse.Namespace) -> int:
    for flag, value in (("--pool", args.pool), ("--target", args.target)):
        if not is_url(value) and not Path(value).exists():  # a URL is looked up when read, as matrix does
            raise SimcoreError(f"{flag} {value} does not exist")
    for flag, given in (("--pipeline", args.pipeline), ("--tagger", args.tagger), ("--tagger-steps", args.tagger_steps),
                        ("--ner-processes", args.ner_processes)):
        if given and args.method != "entities":
            raise SimcoreError(f"{flag} is only used by --method entities")
    for flag, given in (("--encoder", args.encoder), ("--adapt", args.adapt), ("--adapt-steps", args.adapt_steps)):
        if given and args.method != "encoder":
            raise SimcoreError(f"{flag} is only used by --method encoder")
    if args.adapt_steps and not args.adapt:
        raise SimcoreError("--adapt-steps is only used with --adapt")
    out = opt.check_out(args.out, (".txt.gz", ".txt"))
    scores = opt.check_out(args.scores, (".csv",), flag="--scores") if args.scores is not None else None
    opt.no_clobber({"--out": out, "--scores": scores},
                   {"--pool": args.pool, "--target": args.target, "--pipeline": args.pipeline, "--encoder": args.encoder})
    reader: dict[str, Any] = {"text_field": args.text_field}
    pool = Corpus.from_path(args.pool, storage_options=args.storage_options, **reader)
    target = Corpus.from_path(args.target, storage_options=args.storage_options, **reader)
    processes = {"ner_processes": args.ner_processes} if args.ner_processes else {}
    options = SelectionOptions(method=args.method, pool_sample=args.pool_sample, order=args.order,
                               pipeline=args.pipeline, entity_labels=args.entity_labels, encoder=args.encoder,
                               adapt=args.adapt, adapt_steps=args.adapt_steps or 100,
                               tagger=args.tagger or "target", tagger_steps=args.tagger_steps or 400,
                               **processes,
                               seed=args.seed, workers=args.workers, target_tokens=args.target_tokens,
                               lowercase=not args.keep_case)
    bar = ProgressBar(not args.quiet)
    try:
        result = select(pool, target, options, ArtefactStore(args.cache), top=args.top, fraction=args.fraction,
                        out=out, scores_csv=args.scores, keep_duplicates=args.keep_duplicates, progress=bar,
                        min_tokens=args.min_tokens)
    finally:
        bar.close()
    if not args.quiet:
        print(result.summary(), file=sys.stderr)
    print(terminal_text(f"wrote {result.cutoff.n_kept:,} sentences to {out}"
                        + (f" and scores to {args.scores}" if args.scores else "")),
          file=sys.stderr)
    return 0


def add_select_command(subparsers: Any) -> None:
    """Register ``select`` on the CLI's subcommands."""
    methods = "; ".join(f"{m}: {DESCRIPTIONS[m]}" for m in METHODS)
    s = subparsers.add_parser(
        "select", help="keep the pool sentences closest to a target (for continued pretraining)",
        description=f"Score every pool sentence against the target and keep the best. Methods: {methods}.")
    s.add_argument("--pool", required=True, type=opt.path_text, help="the large unlabeled corpus to select from (any format simcore reads)")
    s.add_argument("--target", required=True, type=opt.path_text, help="the task-level corpus (e.g. the NER training set)")
    s.add_argument("--method", required=True, choices=METHODS)
    amount = s.add_mutually_exclusive_group(required=True)
    amount.add_argument("--top", type=_count, default=None, help="keep this many sentences")
    amount.add_argument("--fraction", type=_fraction, default=None,
                        help="keep this fraction of the pool's sentences (0.1 or 10%%)")
    s.add_argument("--out", required=True, type=opt.path_text, help="SELECTED.txt.gz: the kept sentences, one per line")
    s.add_argument("--scores", type=opt.path_text, default=None, help="SCORES.csv: index, score, kept, duplicate_of_target, text")
    s.add_argument("--pipeline", type=opt.path_text, default=None, help="--method entities: a spaCy pipeline directory with NER "
                                                    "(default: a tagger trained on the target's labels)")
    s.add_argument("--tagger", default=None, choices=TAGGERS,
                   help="--method entities: target (default) trains a spaCy tagger on the target's own labels, "
                        "falling back to the generic English pipeline when the target has none; generic uses it")
    s.add_argument("--tagger-steps", type=_steps, default=None,
                   help="--method entities: training steps of the target's tagger (default 400)")
    s.add_argument("--ner-processes", type=_processes, default=None,
                   help="--method entities: processes tagging the pool (default 2)")
    s.add_argument("--entity-labels", type=opt.field_name, default="auto",
                   help="entity types counted: auto (every type of a trained tagger; for the generic pipeline "
                        "those over-represented in the target), all, or L1,L2")
    s.add_argument("--encoder", type=opt.path_text, default=None,
                   help="--method encoder: a transformers or sentence-transformers model saved in a local "
                        "directory (default: the bundled all-MiniLM-L6-v2; nothing is downloaded)")
    s.add_argument("--adapt", action="store_true",
                   help="--method encoder: first continue the encoder's masked-LM training on the target text "
                        "(stored; a few minutes on a CPU)")
    s.add_argument("--adapt-steps", type=_steps, default=None,
                   help="--adapt: training steps of 16 target sentences (default 100)")
    s.add_argument("--min-tokens", type=_min_tokens, default=None, metavar="N",
                   help=f"never keep sentences of fewer than N tokens (default {PER_TOKEN_MIN_TOKENS} for ppl and "
                        "xent, whose score per token over a few tokens is extreme, so one-liners would crowd the "
                        "top; 1 for the other methods); the stored scores are reused")
    s.add_argument("--keep-duplicates", action="store_true",
                   help="allow pool sentences identical to a target sentence to be kept")
    s.add_argument("--pool-sample", type=_pool_sample, default=100_000,
                   help="pool sentences used to train the pool-side models (default 100000)")
    s.add_argument("--target-tokens", type=_tokens, default=None, help="use a sample of the target of this many tokens")
    s.add_argument("--order", type=_order, default=3, help="KenLM n-gram order for ppl and xent (default 3)")
    s.add_argument("--seed", type=opt.whole_number(0, 2**32 - 1, allow_float_text=False), default=13)
    s.add_argument("--workers", type=_workers, default=2, help="word2vec threads")
    s.add_argument("--keep-case", action="store_true", help="do not lower-case tokens")
    s.add_argument("--text-field", type=opt.field_name, default="text", help="JSONL field or CSV column holding the text")
    s.add_argument("--storage-options", type=opt.storage_options, default=None, metavar="JSON",
                   help="fsspec options for a URL --pool or --target (credentials, endpoint), as JSON")
    s.add_argument("--cache", type=opt.path_text, default=None, help="artefact store (default $SIMCORE_CACHE or ~/.cache/simcore)")
    s.add_argument("--quiet", action="store_true")
    s.set_defaults(run=cmd_select)
