"""Continued masked-LM training of an encoder on the target's text (the paper's second strategy).

A small, CPU-feasible budget: ``steps`` AdamW steps of ``BATCH`` target sentences (up to
``LENGTH`` word pieces), 15% of word pieces masked as in BERT. Checkpoints without a masked-LM
head (all-MiniLM-L6-v2 ships only the encoder) get a fresh head whose output layer is tied to
the word embeddings. The adapted encoder is stored as an artefact per base encoder, target and
budget, with the masked-LM loss on held-out target sentences before and after training.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ..models.sentence_encoder import EncoderSource, libraries, transformer_directory
from ..utils.errors import SimcoreError
from ..utils.store import ArtefactStore, digest
from .options import Progress, quiet
from .target import Target

BATCH = 16
LENGTH = 64
LEARNING_RATE = 1e-4
HELD_OUT = 64
_TARGET_TEXTS = 20_000


def adapted_encoder(base: EncoderSource, target: Target, store: ArtefactStore, steps: int, seed: int,
                    threads: int | None = None, progress: Progress = quiet) -> EncoderSource:
    """``base`` after ``steps`` of masked-LM training on ``target``'s text (stored; built once)."""
    key = digest("selection-encoder-adapted", base.identity, target.full.fingerprint, steps, seed, BATCH, LENGTH,
                 LEARNING_RATE)

    def build(out: Path) -> dict[str, Any]:
        torch, transformers = libraries()
        if threads:
            torch.set_num_threads(threads)
        folder = transformer_directory(base.path)
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            model = transformers.AutoModelForMaskedLM.from_pretrained(str(folder), local_files_only=True)
        except Exception as exc:  # transformers raises many kinds for a model it cannot train
            raise SimcoreError(f"cannot train the encoder in {base.path} as a masked LM: "
                               f"{str(exc).splitlines()[0][:200]}") from None
        device = "cuda" if torch.cuda.is_available() else "cpu"
        model.to(device)
        texts = [t for t in target.raw_texts(_TARGET_TEXTS) if t.strip()]
        if len(texts) < 2:
            raise SimcoreError(f"{target.name}: too few sentences to adapt the encoder to")
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(texts))
        n_held = min(HELD_OUT, max(1, len(texts) // 10))
        held, train = [texts[i] for i in order[:n_held]], [texts[i] for i in order[n_held:]]
        collator = transformers.DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)

        def batch_of(sentences: list[str]) -> dict[str, Any]:
            encoded = tokenizer(sentences, truncation=True, max_length=LENGTH)
            features = [{"input_ids": ids} for ids in encoded["input_ids"]]
            return {k: v.to(device) for k, v in collator(features).items()}

        def held_out_loss() -> float:
            torch.manual_seed(seed)   # the same masks before and after training
            model.eval()
            with torch.inference_mode():
                losses = [float(model(**batch_of(held[i:i + BATCH])).loss) for i in range(0, len(held), BATCH)]
            return float(np.mean(losses))

        torch.manual_seed(seed)
        before = held_out_loss()
        optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
        model.train()
        started, losses = time.perf_counter(), []
        for step in range(steps):
            rows = rng.choice(len(train), size=min(BATCH, len(train)), replace=False)
            loss = model(**batch_of([train[i] for i in rows])).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            if step % 5 == 0 or step == steps - 1:
                progress(f"adapting the encoder to {target.name}: step {step + 1}/{steps}, "
                         f"masked-LM loss {np.mean(losses[-10:]):.2f}", (step + 1) / steps)
        seconds = time.perf_counter() - started
        after = held_out_loss()
        encoder = out / "encoder"
        model.base_model.save_pretrained(str(encoder), safe_serialization=True)
        tokenizer.save_pretrained(str(encoder))
        return {"base": base.name, "steps": steps, "batch": BATCH, "max_length": LENGTH,
                "learning_rate": LEARNING_RATE, "train_sentences": len(train), "seconds": seconds,
                "held_out_loss_before": before, "held_out_loss_after": after,
                "first_losses": losses[:10], "last_losses": losses[-10:]}

    path = store.build("selection-encoder-adapted", key, build)
    return EncoderSource(path / "encoder", key, f"{base.name} adapted to {target.name}")


def adaptation_record(source: EncoderSource, store: ArtefactStore) -> dict[str, Any]:
    """What the adaptation artefact recorded (losses, time), for the run's details."""
    return store.meta(source.path.parent)
