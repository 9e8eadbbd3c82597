"""The two trainings of the language-model probe, with torch and transformers.

``adapt``: continued masked-LM training of an encoder on a source sample (one pass over the
sample cut into blocks of ``block`` word pieces, 15% of them masked as BERT masks them).
``finetune_and_score``: token classification from those weights on the target's train split,
labelling each word's first word piece (the others are ignored by the loss), then entity-level
F1 on the test split with :func:`simcore.probe.scoring.entity_score`. Both run on the GPU when
torch sees one. Nothing is downloaded: every model is loaded with ``local_files_only``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..models.sentence_encoder import libraries
from ..utils.errors import SimcoreError
from .data import Sentences
from .scoring import entity_score, spans, spans_to_bio

Progress = Callable[[str, float], None]
MASK_PROBABILITY = 0.15


def _quiet(message: str, fraction: float) -> None:
    pass


@dataclass(frozen=True)
class LMCaps:
    """The budget of the LM probe's runs; every value is part of a stored run's fingerprint."""

    lm_tokens: int = 100_000          # source tokens (simcore's tokenizer) each source is adapted on
    block: int = 128                  # word pieces per masked-LM sequence
    lm_batch: int = 16                # sequences per masked-LM step
    lm_rate: float = 5e-5
    lm_seed: int = 13                 # masking and order of the adaptation (one adaptation per source)
    train_sentences: int | None = 2000
    test_sentences: int | None = None
    epochs: int = 3                   # fine-tuning epochs over the train split
    batch: int = 16                   # sentences per fine-tuning step
    rate: float = 5e-5
    max_length: int = 128             # word pieces per tagged sentence; words past it are tagged O

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def adaptation(self) -> dict[str, Any]:
        """The caps an adapted model depends on."""
        return {k: getattr(self, k) for k in ("lm_tokens", "block", "lm_batch", "lm_rate", "lm_seed")}

    def finetuning(self) -> dict[str, Any]:
        """The caps a fine-tuning run depends on (besides the weights it starts from)."""
        return {k: getattr(self, k) for k in ("train_sentences", "test_sentences", "epochs", "batch", "rate",
                                              "max_length")}

    def describe(self) -> str:
        return ";".join(f"{k}={'all' if v is None else v}" for k, v in self.as_dict().items())


def device() -> str:
    torch, _ = libraries()
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_tokenizer(folder: Path) -> Any:
    _, transformers = libraries()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError, ... for a bad directory
        raise SimcoreError(f"cannot load a tokenizer from {folder}: {str(exc).splitlines()[0][:200]}") from None
    if not getattr(tokenizer, "is_fast", False):
        raise SimcoreError(f"the tokenizer in {folder} is not a fast tokenizer (word ids are needed to label "
                           "first word pieces); save the model with its tokenizer.json")
    if tokenizer.mask_token is None:
        raise SimcoreError(f"the model in {folder} has no mask token: it is not a masked language model")
    return tokenizer


def _load(kind: str, folder: Path, **kwargs: Any) -> Any:
    _, transformers = libraries()
    auto = getattr(transformers, kind)
    try:
        return auto.from_pretrained(str(folder), local_files_only=True, **kwargs)
    except Exception as exc:
        raise SimcoreError(f"cannot load {folder} as {kind}: {str(exc).splitlines()[0][:200]}") from None


def blocks(tokenizer: Any, sentences: Iterable[Sequence[str]], block: int) -> np.ndarray:
    """The sentences' word pieces, concatenated (each sentence ended by [SEP]) and cut into rows of ``block``.

    Each row starts with the tokenizer's [CLS]; the last, partial row is dropped unless it is the only one.
    """
    ids: list[int] = []
    sep = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    chunk: list[str] = []

    def flush() -> None:
        for row in tokenizer(chunk, add_special_tokens=False)["input_ids"]:
            ids.extend(row)
            if sep is not None:
                ids.append(sep)
        chunk.clear()

    for sentence in sentences:
        chunk.append(" ".join(sentence))
        if len(chunk) >= 1000:
            flush()
    flush()
    width = block - 1 if tokenizer.cls_token_id is not None else block
    rows = max(1, len(ids) // width) if ids else 0
    ids = ids[:rows * width] + [tokenizer.pad_token_id or 0] * max(0, rows * width - len(ids))
    table = np.asarray(ids, dtype=np.int64).reshape(rows, width)
    if tokenizer.cls_token_id is not None:
        table = np.concatenate([np.full((rows, 1), tokenizer.cls_token_id, dtype=np.int64), table], axis=1)
    return table


def mask_batch(torch: Any, ids: Any, tokenizer: Any, generator: Any) -> tuple[Any, Any]:
    """BERT's masking: 15% of the non-special pieces are predicted; of those 80% [MASK], 10% random, 10% kept."""
    labels = ids.clone()
    special = torch.zeros_like(ids, dtype=torch.bool)
    for token in {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id, tokenizer.bos_token_id,
                  tokenizer.eos_token_id} - {None}:  # [UNK] is predicted, as BERT's collator does
        special |= ids == token
    chosen = (torch.rand(ids.shape, generator=generator) < MASK_PROBABILITY) & ~special
    if not chosen.any():  # a loss over no piece is NaN: predict one piece at least
        candidates = (~special).flatten().nonzero()
        if len(candidates):
            chosen.view(-1)[candidates[torch.randint(len(candidates), (1,), generator=generator)]] = True
    labels[~chosen] = -100
    inputs = ids.clone()
    roll = torch.rand(ids.shape, generator=generator)
    inputs[chosen & (roll < 0.8)] = tokenizer.mask_token_id
    swap = chosen & (roll >= 0.8) & (roll < 0.9)
    inputs[swap] = torch.randint(len(tokenizer), ids.shape, generator=generator)[swap]
    return inputs, labels


@dataclass
class AdaptResult:
    steps: int
    tokens: int
    seconds: float
    losses: list[float]  # the masked-LM loss of each step
    step_seconds: list[float]


def adapt(base: Path, table: np.ndarray, out: Path, caps: LMCaps, progress: Progress = _quiet,
          max_steps: int | None = None, save: bool = True) -> AdaptResult:
    """Continue masked-LM training of ``base`` over the rows of ``table`` (one pass) and save it to ``out``."""
    torch, transformers = libraries()
    tokenizer = load_tokenizer(base)
    torch.manual_seed(caps.lm_seed)
    model = _load("AutoModelForMaskedLM", base)
    where = device()
    model.to(where).train()
    generator = torch.Generator().manual_seed(caps.lm_seed)
    order = torch.randperm(len(table), generator=generator)
    steps = math.ceil(len(table) / caps.lm_batch)
    if max_steps is not None:
        steps = min(steps, max_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=caps.lm_rate, weight_decay=0.01)
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, max(1, steps // 10), max(1, steps))
    data = torch.from_numpy(table)
    losses: list[float] = []
    times: list[float] = []
    start = time.monotonic()
    for step in range(steps):
        began = time.monotonic()
        ids = data[order[step * caps.lm_batch:(step + 1) * caps.lm_batch]]
        inputs, labels = mask_batch(torch, ids, tokenizer, generator)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=where == "cuda"):
            loss = model(input_ids=inputs.to(where), labels=labels.to(where)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        times.append(time.monotonic() - began)
        progress(f"masked-LM step {step + 1}/{steps}, loss {losses[-1]:.2f}", (step + 1) / steps)
    seconds = time.monotonic() - start
    if save:
        model.save_pretrained(str(out))
        tokenizer.save_pretrained(str(out))
    return AdaptResult(steps, int(min(len(table), steps * caps.lm_batch) * table.shape[1]), seconds, losses, times)


@dataclass
class Encoded:
    """Tagged sentences as word pieces: ids, the label of each first piece (-100 elsewhere), word ids."""

    ids: list[list[int]]
    labels: list[list[int]]
    words: list[list[int | None]]

    @property
    def pieces(self) -> int:
        return sum(len(row) for row in self.ids)


def label_names(train: Sentences) -> list[str]:
    """BIO labels of the entity types in the train split: O first, then B-/I- of each type, sorted."""
    kinds = sorted({kind for _, tags in train for _, _, kind in spans(tags)})
    return ["O", *[f"{p}-{k}" for k in kinds for p in ("B", "I")]]


def encode(tokenizer: Any, sentences: Sentences, labels: list[str], max_length: int) -> Encoded:
    """First-word-piece labelling of sentences whose tags are read as chunks and written as BIO."""
    index = {name: i for i, name in enumerate(labels)}
    enc = tokenizer([tokens for tokens, _ in sentences], is_split_into_words=True, truncation=True,
                    max_length=max_length)
    ids, out_labels, words = [], [], []
    for row, (tokens, tags) in enumerate(sentences):
        bio = spans_to_bio(len(tokens), spans(tags))
        word_ids = enc.word_ids(row)
        seen: set[int] = set()
        row_labels = []
        for w in word_ids:
            if w is None or w in seen:
                row_labels.append(-100)
            else:
                seen.add(w)
                row_labels.append(index.get(bio[w], 0))  # a type the train split lacks is learnt as O
        ids.append(enc["input_ids"][row])
        out_labels.append(row_labels)
        words.append(word_ids)
    return Encoded(ids, out_labels, words)


def _batches(torch: Any, data: Encoded, rows: Sequence[int], pad: int) -> tuple[Any, Any, Any]:
    width = max(len(data.ids[i]) for i in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for j, i in enumerate(rows):
        n = len(data.ids[i])
        ids[j, :n] = torch.tensor(data.ids[i])
        mask[j, :n] = 1
        labels[j, :n] = torch.tensor(data.labels[i])
    return ids, mask, labels


@dataclass
class TagResult:
    f1: float
    precision: float
    recall: float
    steps: int
    seconds: float
    stopped_by: str = "epochs"
    pieces_per_second: float = float("nan")  # of the timed steps (all but the first)


def finetune_and_score(weights: Path, train: Sentences, test: Sentences | None, seed: int, caps: LMCaps,
                       progress: Progress = _quiet, max_steps: int | None = None) -> TagResult:
    """Fine-tune token classification from ``weights`` on ``train``; entity F1 (in points) on ``test``.

    ``max_steps`` stops early (to time the steps; F1 is then NaN unless ``test`` is given).
    """
    torch, transformers = libraries()
    tokenizer = load_tokenizer(weights)
    labels = label_names(train)
    torch.manual_seed(seed)
    model = _load("AutoModelForTokenClassification", weights, num_labels=len(labels),
                  id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)})
    where = device()
    model.to(where).train()
    data = encode(tokenizer, train, labels, caps.max_length)
    generator = torch.Generator().manual_seed(seed)
    per_epoch = math.ceil(len(train) / caps.batch)
    steps = per_epoch * caps.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=caps.rate, weight_decay=0.01)
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, max(1, steps // 10), max(1, steps))
    pad = tokenizer.pad_token_id or 0
    start = time.monotonic()
    step = 0
    timed_pieces, timed_seconds = 0, 0.0
    for epoch in range(caps.epochs):
        order = torch.randperm(len(train), generator=generator).tolist()
        for b in range(per_epoch):
            if max_steps is not None and step >= max_steps:
                break
            began = time.monotonic()
            ids, mask, gold = _batches(torch, data, order[b * caps.batch:(b + 1) * caps.batch], pad)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=where == "cuda"):
                loss = model(input_ids=ids.to(where), attention_mask=mask.to(where), labels=gold.to(where)).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            if step > 0:
                timed_pieces += int(mask.sum())
                timed_seconds += time.monotonic() - began
            step += 1
            progress(f"epoch {epoch + 1}/{caps.epochs}, step {step}/{steps}", step / (steps + 1))
    rate = timed_pieces / timed_seconds if timed_seconds > 0 else float("nan")
    if test is None:
        return TagResult(float("nan"), float("nan"), float("nan"), step, time.monotonic() - start, "steps", rate)
    predicted = predict(model, tokenizer, test, labels, caps, where)
    score = entity_score([tags for _, tags in test], predicted)
    return TagResult(score.f1, score.precision, score.recall, step, time.monotonic() - start, "epochs", rate)


def predict(model: Any, tokenizer: Any, sentences: Sentences, labels: list[str], caps: LMCaps,
            where: str) -> list[list[str]]:
    """Each word's tag is its first word piece's; words cut off by ``max_length`` are tagged O."""
    torch, _ = libraries()
    data = encode(tokenizer, sentences, labels, caps.max_length)
    model.eval()
    out: list[list[str]] = []
    pad = tokenizer.pad_token_id or 0
    with torch.inference_mode():
        for b in range(0, len(sentences), 64):
            rows = list(range(b, min(b + 64, len(sentences))))
            ids, mask, _ = _batches(torch, data, rows, pad)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=where == "cuda"):
                logits = model(input_ids=ids.to(where), attention_mask=mask.to(where)).logits
            best = logits.argmax(-1).cpu().numpy()
            for j, i in enumerate(rows):
                tags = ["O"] * len(sentences[i][0])
                for position, label in enumerate(data.labels[i]):
                    if label != -100:
                        tags[data.words[i][position]] = labels[int(best[j, position])]
                out.append(tags)
    return out
