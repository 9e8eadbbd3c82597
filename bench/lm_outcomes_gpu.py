"""The language-model outcome table on one GPU: MLM adaptation per source, then NER fine-tuning.

Reads what bench/prepare_lm_outcomes.py staged (per source a block table of the same token budget,
per target capped train/test sentences, the all-MiniLM-L6-v2 encoder carried in fp16) and runs,
with simcore's own training code (``simcore_min`` = simcore/probe/lm_train.py and scoring.py):

1. one masked-LM adaptation per source (``--lm-passes`` passes over its sample), one process per
   source, all at once (the model is small: a lone process leaves the GPU mostly idle);
2. per target, one process that fine-tunes a token classifier from the unadapted encoder (the
   baseline, ``(none)``) and from each adapted one, per seed, and scores entity F1 on the test split.
   Seeds ``0..--first-seeds-1`` of every condition come first, so that complete (target, all
   conditions) blocks finish first; further seeds follow while the deadline allows.

Every finished run is appended (flushed) to ``OUT/runs_<target>.csv``; adaptation records go to
``OUT/adapt_<source>.json``; ``OUT/log.txt`` holds the log. No new run starts after ``--deadline``
seconds from the start; the script ends by itself before the device call's limit.

Usage (on the GPU machine, in the staged folder): python3 lm_outcomes_gpu.py --out $OUT
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

FIELDS = [
    "target",
    "source",
    "seed",
    "f1",
    "precision",
    "recall",
    "steps",
    "seconds",
    "train_sentences",
    "test_sentences",
    "caps",
    "device",
]


def _caps(args: argparse.Namespace):  # noqa: ANN202 - LMCaps, imported lazily with torch
    from simcore_min.lm_train import LMCaps

    return LMCaps(
        lm_tokens=args.source_tokens,
        block=128,
        lm_batch=args.lm_batch,
        lm_rate=args.lm_rate,
        lm_seed=13,
        train_sentences=args.train_sentences,
        test_sentences=args.test_sentences,
        epochs=args.epochs,
        batch=args.batch,
        rate=args.rate,
        max_length=128,
    )


def _log(out: Path, message: str) -> None:
    line = f"[{time.strftime('%H:%M:%S')}] {message}"
    print(line, flush=True)
    with open(out / "log.txt", "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def base_model(stage: Path, work: Path) -> Path:
    """The carried fp16 weights loaded in fp32 and saved as the fp32 starting point of every run."""
    from simcore_min.encoder_model import libraries

    torch, transformers = libraries()
    folder = work / "base"
    if not (folder / "config.json").is_file():
        model = transformers.AutoModel.from_pretrained(
            str(stage / "model"), local_files_only=True, dtype=torch.float32
        )
        model.float().save_pretrained(str(folder))
        transformers.AutoTokenizer.from_pretrained(
            str(stage / "model"), local_files_only=True
        ).save_pretrained(str(folder))
    return folder


def adapt_worker(args: argparse.Namespace) -> None:
    """One source: ``lm_passes`` shuffled passes over its block table, saved for the fine-tuning workers."""
    import numpy as np
    from simcore_min.lm_train import adapt, device

    out, work = Path(args.out), Path(args.work)
    caps = _caps(args)
    table = np.load(HERE / f"blocks_{args.source}.npy").astype(np.int64)
    if args.lm_rows:  # a smoke test's cut; the real run uses every row
        table = table[: args.lm_rows]
    table = np.concatenate([table] * args.lm_passes) if args.lm_passes > 1 else table
    done = work / f"adapted_{args.source}"
    result = adapt(work / "base", table, done, caps)
    record = {
        "source": args.source,
        "steps": result.steps,
        "pieces": result.tokens,
        "passes": args.lm_passes,
        "seconds": round(result.seconds, 1),
        "first_loss": result.losses[0],
        "last_loss": result.losses[-1],
        "mean_loss_last_50": float(np.mean(result.losses[-50:])),
        "device": device(),
    }
    (out / f"adapt_{args.source}.json").write_text(json.dumps(record, indent=1))
    (done / "DONE").write_text("ok")


def _subset(sentences: list, limit: int) -> list:
    """At most ``limit`` of the staged sentences (a fixed random draw, original order kept)."""
    if len(sentences) <= limit:
        return sentences
    import random

    keep = sorted(random.Random(13).sample(range(len(sentences)), limit))
    return [sentences[i] for i in keep]


def tune_worker(args: argparse.Namespace) -> None:
    """One target: every condition x seed, first seeds first, one CSV row per finished run."""
    import torch
    from simcore_min.lm_train import device, finetune_and_score

    out, work = Path(args.out), Path(args.work)
    caps = _caps(args)
    with gzip.open(HERE / f"target_{args.target}.json.gz", "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    train = _subset([(list(t), list(g)) for t, g in data["train"]], args.train_sentences)
    test = _subset([(list(t), list(g)) for t, g in data["test"]], args.test_sentences)
    sources = args.sources.split(",")
    conditions = [("(none)", work / "base")] + [(s, work / f"adapted_{s}") for s in sources]
    order = [seed for seed in range(args.first_seeds)] + list(range(args.first_seeds, args.seeds))
    path = out / f"runs_{args.target}.csv"
    name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        fh.flush()
        for seed in order:
            for source, folder in conditions:
                if time.time() > args.deadline_at:
                    _log(out, f"{args.target}: deadline reached before seed {seed} of {source}")
                    return
                result = finetune_and_score(folder, train, test, seed, caps)
                writer.writerow(
                    {
                        "target": args.target,
                        "source": source,
                        "seed": seed,
                        "f1": round(result.f1, 3),
                        "precision": round(result.precision, 3),
                        "recall": round(result.recall, 3),
                        "steps": result.steps,
                        "seconds": round(result.seconds, 2),
                        "train_sentences": len(train),
                        "test_sentences": len(test),
                        "caps": caps.describe(),
                        "device": f"{device()}:{name}",
                    }
                )
                fh.flush()
                _log(
                    out,
                    f"{args.target} {source} seed {seed}: F1 {result.f1:.2f} ({result.seconds:.1f} s)",
                )


def _spawn(args: argparse.Namespace, role: str, name: str) -> subprocess.Popen:
    command = [
        sys.executable,
        __file__,
        "--role",
        role,
        "--out",
        args.out,
        "--work",
        args.work,
        "--deadline-at",
        str(args.deadline_at),
        "--sources",
        args.sources,
        "--source-tokens",
        str(args.source_tokens),
    ]
    for flag in (
        "lm_rows",
        "lm_passes",
        "lm_batch",
        "lm_rate",
        "train_sentences",
        "test_sentences",
        "epochs",
        "batch",
        "rate",
        "seeds",
        "first_seeds",
    ):
        command += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    command += ["--source", name] if role == "adapt" else ["--target", name]
    log = open(Path(args.out) / f"worker_{role}_{name}.txt", "w", encoding="utf-8")  # noqa: SIM115 (merged at the end)
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def _wait(procs: dict[str, subprocess.Popen], until: float, out: Path, what: str) -> None:
    while any(p.poll() is None for p in procs.values()):
        if time.time() > until:
            for name, p in procs.items():
                if p.poll() is None:
                    _log(out, f"{what} {name}: still running at the hard stop, ended")
                    p.kill()
            break
        time.sleep(1)
    for name, p in procs.items():
        _log(out, f"{what} {name}: exit {p.returncode}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", default="/tmp/lm_outcomes_work")
    parser.add_argument("--role", default="main", choices=["main", "adapt", "tune"])
    parser.add_argument("--source", default="")
    parser.add_argument("--target", default="")
    parser.add_argument(
        "--deadline", type=float, default=480.0, help="seconds from the start: no new run after"
    )
    parser.add_argument("--deadline-at", type=float, default=0.0)
    parser.add_argument("--sources", default="")
    parser.add_argument("--targets", default="")
    parser.add_argument("--source-tokens", type=int, default=0)
    parser.add_argument("--lm-passes", type=int, default=3)
    parser.add_argument(
        "--lm-rows", type=int, default=0, help="use only this many rows (smoke test)"
    )
    parser.add_argument("--lm-batch", type=int, default=32)
    parser.add_argument("--lm-rate", type=float, default=1e-4)
    parser.add_argument("--train-sentences", type=int, default=1000)
    parser.add_argument("--test-sentences", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rate", type=float, default=1e-4)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seeds", type=int, default=3)
    args = parser.parse_args()
    if args.role == "adapt":
        adapt_worker(args)
        return 0
    if args.role == "tune":
        tune_worker(args)
        return 0
    start = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((HERE / "manifest.json").read_text())
    args.sources = args.sources or ",".join(manifest["sources"])
    targets = args.targets.split(",") if args.targets else list(manifest["targets"])
    args.source_tokens = manifest["source_tokens"]
    args.train_sentences = min(args.train_sentences, manifest["train_sentences_cap"])
    args.test_sentences = min(args.test_sentences, manifest["test_sentences_cap"])
    args.deadline_at = start + args.deadline
    args.work = str(work)
    base_model(HERE, work)
    import torch

    _log(
        out,
        f"device {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu'}; torch "
        f"{torch.__version__}; {os.cpu_count()} cores; sources {args.sources}; targets {targets}; "
        f"{args.source_tokens:,} tokens per source; starting weights carried in fp16",
    )
    (out / "settings.json").write_text(json.dumps({k: v for k, v in vars(args).items()}, indent=1))
    adapters = {s: _spawn(args, "adapt", s) for s in args.sources.split(",")}
    _wait(adapters, args.deadline_at, out, "adapt")
    ready = [s for s in args.sources.split(",") if (work / f"adapted_{s}" / "DONE").is_file()]
    _log(out, f"adapted: {ready} after {time.time() - start:.0f} s")
    args.sources = ",".join(ready)
    tuners = {t: _spawn(args, "tune", t) for t in targets}
    _wait(tuners, args.deadline_at + 45, out, "tune")
    _merge(out)
    _log(out, f"done after {time.time() - start:.0f} s")
    return 0


def _merge(out: Path) -> None:
    """One runs.csv, one adaptation.json and one workers.txt: the device returns only a few files."""
    rows = []
    for path in sorted(out.glob("runs_*.csv")):
        with open(path, encoding="utf-8") as fh:
            rows += list(csv.DictReader(fh))
        path.unlink()
    with open(out / "runs.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    records = []
    for path in sorted(out.glob("adapt_*.json")):
        records.append(json.loads(path.read_text()))
        path.unlink()
    (out / "adaptation.json").write_text(json.dumps(records, indent=1))
    with open(out / "workers.txt", "w", encoding="utf-8") as fh:
        for path in sorted(out.glob("worker_*.txt")):
            fh.write(f"== {path.name}\n{path.read_text()}\n")
            path.unlink()


if __name__ == "__main__":
    raise SystemExit(main())
