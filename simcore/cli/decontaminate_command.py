"""``simcore decontaminate --source S --target T --out CLEAN``: the command around :mod:`simcore.contamination.decontaminate`."""

from __future__ import annotations

import argparse
from typing import Any

from ..contamination.decontaminate import decontaminate
from ..contamination.ngrams import OVERLAP_CHAR_NGRAM, OVERLAP_NGRAM
from ..contamination.scan import OverlapOptions
from ..corpora.corpus import Corpus
from ..corpora.tokenize import TokenizerOptions
from ..utils.terminal import terminal_text
from . import arguments as opt


def cmd_decontaminate(args: argparse.Namespace) -> int:
    out = opt.check_out(args.out, ())
    opt.no_clobber({"--out": out}, {"--source": args.source, "--target": args.target})
    reader = {"text_field": args.text_field, "encoding": args.encoding, "storage_options": args.storage_options}
    source = Corpus.from_path(args.source, **reader)
    target = Corpus.from_path(args.target, **{k: v for k, v in reader.items() if k != "text_field"})
    bar = opt.Bar(not args.quiet)
    try:
        report = decontaminate(source, target, out, tokenizer=TokenizerOptions(lowercase=not args.keep_case),
                               overlap=OverlapOptions(args.overlap_ngram, args.overlap_char_ngram),
                               test_only=args.test_only, progress=bar)
    finally:
        bar.close()
    print(terminal_text(report.summary(source.name, target.name, str(out))))
    return 0


def add_decontaminate_command(subparsers: Any) -> None:
    """Register ``decontaminate`` on the CLI's subcommands."""
    d = subparsers.add_parser(
        "decontaminate", help="write a source without the units that hold the target's sentences",
        description="Stream the source and leave out every unit (line, JSONL record) that shares an n-gram with "
                    "the target (the overlap the matrix reports); every other line is written byte for byte.")
    d.add_argument("--source", required=True, type=opt.path_text,
                   help="the source: a text or JSONL file (compressed or not), a folder of them, or a URL")
    d.add_argument("--target", required=True, type=opt.path_text, help="the NER target (a file or its folder)")
    d.add_argument("--out", required=True, type=opt.path_text,
                   help="the clean copy: a file (a folder for a folder source); never one of the inputs")
    d.add_argument("--test-only", action="store_true",
                   help="leave out only units overlapping the target's test split (files named test*)")
    d.add_argument("--overlap-ngram", type=opt.whole_number(1, 200), default=OVERLAP_NGRAM, metavar="N",
                   help=f"words in the n-grams (default {OVERLAP_NGRAM})")
    d.add_argument("--overlap-char-ngram", type=opt.whole_number(1, 200), default=OVERLAP_CHAR_NGRAM, metavar="N",
                   help=f"characters, for a target cut into characters (default {OVERLAP_CHAR_NGRAM})")
    d.add_argument("--keep-case", action="store_true", help="do not lower-case tokens")
    d.add_argument("--text-field", type=opt.field_name, default="text", help="JSONL field holding the text")
    d.add_argument("--encoding", type=opt.encoding, default=None)
    d.add_argument("--storage-options", type=opt.storage_options, default=None, metavar="JSON",
                   help="fsspec options for a URL (endpoint, credentials)")
    d.add_argument("--quiet", action="store_true")
    d.set_defaults(run=cmd_decontaminate)
