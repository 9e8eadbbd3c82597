"""``python -m simcore probe``: train NER taggers with each source's vectors and write a results table.

Registered in simcore.cli by one call to :func:`add_probe_command`; this module does not import
simcore.cli (imports stay one-way).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ..probe.config import ProbeCaps
from ..probe.lm_train import LMCaps
from ..utils.errors import SimcoreError
from ..utils.terminal import terminal_text
from . import arguments as opt
from .lm_probe_command import add_lm_arguments
from .progress import ProgressBar

MAX_SENTENCES = 10**9
MAX_EPOCHS = 10_000
MAX_SECONDS = 7 * 24 * 3600.0  # one training run: a week at most
MAX_SEEDS = 100                # training runs per source (each trains a tagger)
MAX_SEED = 2**32 - 1           # spaCy and numpy take 32-bit seeds
MAX_SOURCE_TOKENS = 10_000_000_000

_count = opt.whole_number(1, MAX_SENTENCES)
_epochs = opt.whole_number(1, MAX_EPOCHS)
_seeds = opt.whole_number(1, MAX_SEEDS, allow_float_text=False)
_seed = opt.whole_number(0, MAX_SEED, allow_float_text=False)
_tokens = opt.whole_number(1, MAX_SOURCE_TOKENS)


def _cap(text: str) -> int | None:
    """A sentence cap: a whole number, or all (also none or 0) for no cap."""
    return None if text.strip().lower() in ("all", "none", "0") else _count(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most {MAX_SECONDS:,.0f} (got {text})")
    return value


def cmd_probe(args: argparse.Namespace) -> int:
    from ..matrix.corpus_cache import corpora_in
    from ..matrix.workbench import Workbench
    from ..measures.options import MeasureOptions
    from ..probe.data import TargetSplits, split_notes
    from ..probe.run import probe, seed_list
    from ..reporting.export import csv_text
    from ..utils.store import ArtefactStore

    if args.kind == "lm":
        from .lm_probe_command import cmd_probe_lm

        return cmd_probe_lm(args)
    if not args.out.lower().endswith(".csv"):
        raise SimcoreError(f"--out {args.out}: give a .csv file name")
    out = opt.check_out(args.out, (".csv",))
    opt.no_clobber({"--out": out}, {"--sources": args.sources, "--target": args.target})
    if args.seed + args.seeds - 1 > MAX_SEED:
        raise SimcoreError(f"--seed {args.seed} with --seeds {args.seeds} goes past the largest seed {MAX_SEED:,}")
    if args.gpu:
        from ..probe.train import use_gpu

        use_gpu()
    sources = corpora_in(args.sources, text_field=args.text_field)
    targets = [TargetSplits.from_directory(t) for t in args.target]
    opt.check_names([*sources, *targets])
    for target in targets:  # rows the readers skip (null Hub rows, ...) are said, not dropped unsaid
        for line in split_notes(target):
            print(terminal_text(f"simcore: note: {line}"), file=sys.stderr)
    names = [t.name for t in targets]
    if len(set(names)) != len(names):
        raise SimcoreError("two --target directories have the same name; results are matched by name")
    defaults = ProbeCaps()
    caps = ProbeCaps(train_sentences=args.max_train_sentences, dev_sentences=args.max_dev_sentences,
                     test_sentences=args.max_test_sentences, epochs=args.max_epochs or defaults.epochs,
                     seconds=args.max_seconds)
    options = MeasureOptions(seed=args.vector_seed)
    bench = Workbench(ArtefactStore(args.cache), options=options)
    bar = ProgressBar(not args.quiet)

    def report(run: dict[str, Any]) -> None:
        if not args.quiet:
            bar.write(f"{run['target']} · {run['source']} · seed {run['seed']}: F1 {run['f1']:.2f} "
                      f"({run['epochs']} epochs, {run['seconds']:.0f} s, stopped by {run['stopped_by']})")

    try:
        table = probe(sources, targets, workbench=bench, caps=caps, seeds=seed_list(args.seeds, args.seed),
                      source_tokens=args.source_tokens, progress=bar, on_run=report)
    finally:
        bar.close()
    opt.write_text(out, csv_text(table))
    failed = table.attrs.get("failed_sources", {})
    for name, why in sorted(failed.items()):
        print(terminal_text(f"simcore: warning: source {name} has no results: {why}"), file=sys.stderr)
    failed_targets = table.attrs.get("failed_targets", {})
    for name, why in sorted(failed_targets.items()):
        print(terminal_text(f"simcore: warning: target {name} has no results: {why}"), file=sys.stderr)
    if table["time_capped"].sum() > 0:
        print("simcore: warning: some runs were cut short by --max-seconds (column time_capped) and trained fewer "
              "epochs than the others; raise it and run again (finished runs are read back)", file=sys.stderr)
    if not args.quiet:
        shown = table[["target", "source", "f1", "f1_std", "baseline", "improvement", "seeds"]]
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
        print(f"caps: {table['caps'].iloc[0]}" if len(table) else "")
    print(terminal_text(f"wrote {len(table)} rows to {out}"), file=sys.stderr)
    if failed:
        print(f"simcore: error: {len(failed)} of {len(sources)} sources failed; their rows give the reason in "
              "column error (the baseline and the other sources were probed)", file=sys.stderr)
    if failed_targets:
        print(f"simcore: error: {len(failed_targets)} of {len(targets)} targets failed; their rows give the reason "
              "in column error (the other targets were probed)", file=sys.stderr)
    if failed or failed_targets:
        return 2
    return 0


def add_probe_command(commands: Any) -> None:
    """Add ``probe`` to the CLI's subcommands."""
    defaults = ProbeCaps()
    p = commands.add_parser("probe", help="train NER taggers with each source's word vectors (and without) and "
                                          "write a results table for correlate and regret")
    p.add_argument("--sources", required=True, type=opt.path_text, help="directory: each file or subdirectory is one source")
    p.add_argument("--target", required=True, action="append", type=opt.path_text,
                   help="directory with train, test (and dev) CoNLL files; repeat for several targets")
    p.add_argument("--out", required=True, type=opt.path_text, help="CSV results table (target, source, f1, baseline, f1_std, ...)")
    p.add_argument("--max-train-sentences", type=_cap, default=defaults.train_sentences,
                   help=f"training sentences kept, drawn at random (default {defaults.train_sentences}; 'all')")
    p.add_argument("--max-dev-sentences", type=_cap, default=defaults.dev_sentences,
                   help=f"dev sentences used to pick the best checkpoint (default {defaults.dev_sentences})")
    p.add_argument("--max-test-sentences", type=_cap, default=defaults.test_sentences,
                   help="test sentences scored, drawn at random (default: all)")
    p.add_argument("--max-epochs", type=_epochs, default=None,
                   help=f"default {defaults.epochs} (--kind lm: {LMCaps().epochs} fine-tuning epochs)")
    p.add_argument("--max-seconds", type=_seconds, default=defaults.seconds,
                   help=f"time cap of one training run (default {defaults.seconds:g})")
    p.add_argument("--seeds", type=_seeds, default=1,
                   help=f"training runs per source, with seeds seed..seed+K-1 (at most {MAX_SEEDS})")
    p.add_argument("--seed", type=_seed, default=0, help="first training seed (default 0)")
    p.add_argument("--source-tokens", type=_tokens, default=None,
                   help="tokens of each source the vectors are trained on (default: the size the matrix "
                        "trains WVV's vectors at)")
    p.add_argument("--vector-seed", type=_seed, default=13, help="word2vec seed, as the matrix's --seed")
    p.add_argument("--gpu", action="store_true", help="train on the GPU (needs cupy and a GPU)")
    p.add_argument("--text-field", type=opt.field_name, default="text", help="JSONL field or CSV column holding a source's text")
    p.add_argument("--cache", type=opt.path_text, default=None, help="artefact store (default $SIMCORE_CACHE or ~/.cache/simcore)")
    p.add_argument("--quiet", action="store_true")
    add_lm_arguments(p)
    p.set_defaults(run=cmd_probe)
