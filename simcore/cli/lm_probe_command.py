"""The ``--kind lm`` options of ``python -m simcore probe`` and the command that runs the LM probe."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ..probe.lm_train import LMCaps
from ..utils.errors import SimcoreError
from ..utils.terminal import terminal_text
from . import arguments as opt
from .progress import ProgressBar

MAX_LM_TOKENS = 10_000_000_000
_lm_tokens = opt.whole_number(1, MAX_LM_TOKENS)
DEFAULT_MAX_MINUTES = 30.0


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of minutes above 0 (got {text})")
    return value


def add_lm_arguments(p: argparse.ArgumentParser) -> None:
    defaults = LMCaps()
    p.add_argument("--kind", choices=("vectors", "lm"), default="vectors",
                   help="vectors: spaCy NER with each source's word vectors (default); lm: continued masked-LM "
                        "training of an encoder on each source, then fine-tuned token classification")
    p.add_argument("--model", type=opt.path_text, default=None,
                   help="--kind lm: a transformers masked-LM model saved in this directory (default: the bundled "
                        "all-MiniLM-L6-v2; nothing is downloaded)")
    p.add_argument("--lm-tokens", type=_lm_tokens, default=defaults.lm_tokens,
                   help=f"--kind lm: tokens of each source the encoder is trained on (default {defaults.lm_tokens:,})")
    p.add_argument("--max-minutes", type=_minutes, default=DEFAULT_MAX_MINUTES,
                   help=f"--kind lm: refuse a plan estimated to take longer (default {DEFAULT_MAX_MINUTES:g})")
    p.add_argument("--force", action="store_true", help="--kind lm: run a plan longer than --max-minutes")


def cmd_probe_lm(args: argparse.Namespace) -> int:
    """Plan (printed), check against --max-minutes, then run; the table and a tie summary are printed."""
    from ..matrix.corpus_cache import corpora_in
    from ..matrix.workbench import Workbench
    from ..models.sentence_encoder import libraries
    from ..probe.data import TargetSplits, split_notes
    from ..probe.lm import plan_lm_probe
    from ..probe.run import seed_list
    from ..probe.summary import tie_summary
    from ..reporting.export import csv_text
    from ..utils.store import ArtefactStore

    if not args.out.lower().endswith(".csv"):
        raise SimcoreError(f"--out {args.out}: give a .csv file name")
    out = opt.check_out(args.out, (".csv",))
    opt.no_clobber({"--out": out}, {"--sources": args.sources, "--target": args.target})
    libraries()  # a clear message when torch or transformers is missing
    sources = corpora_in(args.sources, text_field=args.text_field)
    targets = [TargetSplits.from_directory(t) for t in args.target]
    for target in targets:  # rows the readers skip (null Hub rows, ...) are said, not dropped unsaid
        for line in split_notes(target):
            print(terminal_text(f"simcore: note: {line}"), file=sys.stderr)
    opt.check_names([*sources, *targets])
    if len({t.name for t in targets}) != len(targets):
        raise SimcoreError("two --target directories have the same name; results are matched by name")
    caps = LMCaps(lm_tokens=args.lm_tokens, train_sentences=args.max_train_sentences,
                  test_sentences=args.max_test_sentences, epochs=args.max_epochs or LMCaps().epochs)
    bar = ProgressBar(not args.quiet)
    try:
        planned = plan_lm_probe(sources, targets, workbench=Workbench(ArtefactStore(args.cache)), caps=caps,
                                seeds=seed_list(args.seeds, args.seed), model=args.model, progress=bar)
        for line in planned.plan.describe().splitlines():
            if not args.quiet:
                bar.write(line)
        planned.plan.check(args.max_minutes, args.force)

        def report(run: dict[str, Any]) -> None:
            if not args.quiet:
                bar.write(f"{run['target']} · {run['source']} · seed {run['seed']}: F1 {run['f1']:.2f} "
                          f"({run['seconds']:.0f} s)")

        table = planned.run(bar, on_run=report)
    finally:
        bar.close()
    opt.write_text(out, csv_text(table))
    failed, failed_targets = table.attrs.get("failed_sources", {}), table.attrs.get("failed_targets", {})
    for label, found in (("source", failed), ("target", failed_targets)):
        for name, why in sorted(found.items()):
            print(terminal_text(f"simcore: warning: {label} {name} has no results: {why}"), file=sys.stderr)
    if not args.quiet:
        shown = table[["target", "source", "f1", "f1_std", "baseline", "improvement", "seeds"]]
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
        for line in tie_summary(table):
            print(terminal_text(line))
    print(terminal_text(f"wrote {len(table)} rows to {out}"), file=sys.stderr)
    return 2 if failed or failed_targets else 0
