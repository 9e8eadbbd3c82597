"""Does sentence selection find the target's register in a mixed pool? How fast is it?

A pool of sentences is drawn from all five sources in ../shared/data (paragraph units split into
sentences; up to --per-source sentences from each, shuffled together). The source of each pool
sentence is remembered here but never shown to the selector. For each target (its training
sentences; JNLPBA has no training split here, so its dev split) and each method, the top
--fraction of the pool is selected, and the table gives the share of the selected sentences that
come from the source of the target's register (CRAFT, JNLPBA: the MEDLINE abstracts; CoNLL2003:
the news; wet-lab protocols: the MEDLINE abstracts and the clinical notes together), the pool's base rate of that source, sentences scored per second (the pool pass: tagging
or embedding the pool, stored once per pool and model, counts in), the seconds spent preparing
models (training the target's tagger, adapting the encoder), the seconds of the pool pass (tagging
or embedding the pool when not stored yet, then scoring), the wall and CPU time (CPU time counts
every core and helper process: on a busy machine it says what the run would take alone) and the
peak memory (resident set of the process that ran it, or of its largest helper: each run is its
own process).

Methods: cosine, ppl, xent, entities (a tagger trained on the target's labels), entities:generic
(en_core_web_sm), encoder (all-MiniLM-L6-v2), encoder:adapt (after masked-LM training on the target).
A method followed by ``@N`` keeps only sentences of at least N tokens (``xent@5``: --min-tokens 5; the
scores are the method's own, so the pair shows what the minimum changes).

Usage: .venv/bin/python bench/bench_selection.py [--per-source 20000] [--fraction 0.1]
       [--methods cosine,ppl,xent,entities,entities:generic,encoder,encoder:adapt] [--cache DIR]
       [--ner-processes 1] [--threads 2]
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing
import random
import re
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.corpora.corpus import Corpus  # noqa: E402
from simcore.selection.choosing import choose, kept_indices  # noqa: E402
from simcore.selection.driver import score_pool  # noqa: E402
from simcore.selection.options import SelectionOptions  # noqa: E402
from simcore.utils.store import ArtefactStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
SOURCES = ("biomed_ohsumed_medline", "clinical_mtsamples", "encyclopedia_wikitext2", "news_1bwb", "reviews_yelp")
TARGETS = {  # name: (split file, the sources of its register)
    "conll2003": ("conll2003/train.conll", ("news_1bwb",)),
    "craft": ("craft/train.conll", ("biomed_ohsumed_medline",)),
    "jnlpba": ("jnlpba/dev.conll", ("biomed_ohsumed_medline",)),
    "wetlab": ("wetlab_wlp/train.conll", ("biomed_ohsumed_medline", "clinical_mtsamples")),
}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def sentences(unit: str) -> list[str]:
    """Split a paragraph unit into sentences (the sources are sentence- or paragraph-per-line)."""
    return [s.strip() for s in _SENTENCE_END.split(unit) if len(s.split()) >= 3]


def build_pool(directory: Path, per_source: int, seed: int) -> tuple[Path, np.ndarray]:
    rng = random.Random(seed)
    rows: list[tuple[str, int]] = []
    for number, name in enumerate(SOURCES):
        with gzip.open(SHARED / "sources" / f"{name}.txt.gz", "rt", encoding="utf-8") as f:
            found = [s for line in f for s in sentences(line)]
        rows += [(s, number) for s in rng.sample(found, min(per_source, len(found)))]
    rng.shuffle(rows)
    path = directory / "pool.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for text, _ in rows:
            f.write(text + "\n")
    return path, np.asarray([source for _, source in rows], dtype=np.int64)


def options_for(spec: str, args: argparse.Namespace) -> SelectionOptions:
    """SelectionOptions for a method spec such as ``entities:generic``, ``encoder:adapt`` or ``xent@5``."""
    method, _, variant = spec.partition("@")[0].partition(":")
    extra: dict = {"workers": args.threads}
    if method == "entities":
        extra |= {"tagger": variant or "target", "ner_processes": args.ner_processes}
    if method == "encoder" and variant == "adapt":
        extra["adapt"] = True
    return SelectionOptions(method=method, seed=args.seed, **extra)


def run_one(pool_path: str, target_path: str, target_name: str, spec: str, args: argparse.Namespace,
            store_root: str, fraction: float) -> dict:
    """One selection in a fresh process: (kept indices, run details, peak memory)."""
    pool = Corpus.from_path(pool_path)
    target = Corpus.from_path(target_path, name=target_name)
    started = time.perf_counter()
    scores = score_pool(pool, target, options_for(spec, args), ArtefactStore(store_root))
    kept = kept_indices(scores, choose(scores, fraction=fraction, min_tokens=int(spec.partition("@")[2] or 1)))
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"kept": kept, "meta": scores.meta, "wall": time.perf_counter() - started,
            "cpu": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
            "peak_mb": max(own.ru_maxrss, children.ru_maxrss) / 1024}


def _child(connection: Any, *arguments: Any) -> None:
    connection.send(run_one(*arguments))
    connection.close()


def run_in_process(context: Any, *arguments: Any) -> dict:
    """run_one in a fresh (non-daemonic, so spaCy may start its own workers) process."""
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, *arguments))
    process.start()
    sender.close()
    try:
        return receiver.recv()
    except EOFError:
        process.join()
        raise SystemExit(f"the run {arguments[3]} on {arguments[2]} failed (exit code {process.exitcode})") from None
    finally:
        process.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-source", type=int, default=20_000)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--methods", default="cosine,ppl,xent,entities,entities:generic,encoder,encoder:adapt")
    parser.add_argument("--ner-processes", type=int, default=1, help="processes tagging the pool (entities)")
    parser.add_argument("--threads", type=int, default=2, help="word2vec and torch threads")
    parser.add_argument("--targets", default=",".join(TARGETS))  # e.g. --targets wetlab --methods cosine,xent
    parser.add_argument("--cache", default=None, help="artefact store (default: a fresh temporary one)")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    if not (SHARED / "sources").is_dir():
        print(f"{SHARED} is not present", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-selection-") as tmp:
        store_root = str(args.cache or Path(tmp) / "store")
        context = multiprocessing.get_context("spawn")
        pool_path, origin = build_pool(Path(tmp), args.per_source, args.seed)
        counts = np.bincount(origin, minlength=len(SOURCES))
        print(f"pool: {len(origin):,} sentences (" + ", ".join(
            f"{name} {c:,}" for name, c in zip(SOURCES, counts)) + f"); selecting the top {args.fraction:.0%}\n")
        header = f"{'target':<10} {'method':<16} {'register source':<23} {'selected share':>14} " \
                 f"{'base rate':>9} {'lift':>5} {'sent/s':>8} {'pool s':>7} {'prep s':>7} {'wall s':>7} " \
                 f"{'cpu s':>7} {'peak MB':>8}"
        print(header)
        print("-" * len(header))
        for target_name in args.targets.split(","):
            split, register = TARGETS[target_name]
            target = Corpus.from_path(SHARED / "targets" / split, name=target_name)
            wanted = np.isin(origin, [SOURCES.index(r) for r in register])
            base = float(np.mean(wanted))
            register = "+".join(r.split("_")[0] for r in register)
            for method in args.methods.split(","):
                run = run_in_process(context, str(pool_path), str(target.path), target_name, method, args,
                                     store_root, args.fraction)
                kept, meta = run["kept"], run["meta"]
                share = float(np.mean(wanted[kept]))
                details = meta.get("details", {})
                pool_pass = details.get("pool_pass_seconds", 0.0) + meta["score_seconds"]
                prep = max(0.0, meta["prepare_seconds"] - details.get("pool_pass_seconds", 0.0))
                print(f"{target_name:<10} {method:<16} {register:<23} {share:>14.1%} {base:>9.1%} "
                      f"{share / base:>5.2f} {meta['rate']:>8,.0f} {pool_pass:>7.1f} {prep:>7.1f} "
                      f"{run['wall']:>7.1f} {run['cpu']:>7.1f} {run['peak_mb']:>8,.0f}", flush=True)
                used = meta.get("details", {}).get("tagger") or meta.get("details", {}).get("encoder")
                if used:
                    print(f"           model: {used}", flush=True)
                by_source = np.bincount(origin[kept], minlength=len(SOURCES)) / len(kept)
                print("           selected from: " + ", ".join(
                    f"{name.split('_')[0]} {share:.0%}" for name, share in zip(SOURCES, by_source)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
