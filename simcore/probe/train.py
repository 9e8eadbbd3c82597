"""One probe run: train spaCy's NER on the target's train split and score it on the test split.

Training is spaCy's own loop (``spacy.training.loop.train_while_improving`` over the batches and
dev evaluation it builds from the config), stopped by the epoch cap or the time cap, whichever
comes first; the checkpoint that scored best on the dev split is the one tested.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..utils.errors import SimcoreError
from .config import ProbeCaps, training_config
from .data import Sentences
from .scoring import EntityScore, entity_score, spans_to_bio

Progress = Callable[[str, float], None]


def _quiet(message: str, fraction: float) -> None:
    pass


@dataclass
class RunResult:
    f1: float
    precision: float
    recall: float
    dev_f1: float
    epochs: int
    steps: int
    seconds: float
    stopped_by: str  # "epochs" or "time"


def use_gpu() -> None:
    """Put thinc on the GPU, or say clearly why not (only called when asked for)."""
    import spacy

    try:
        spacy.require_gpu()
    except (ValueError, ImportError, RuntimeError) as exc:
        raise SimcoreError(f"--gpu: no usable GPU here ({exc}); run without --gpu") from None


def _component_state(nlp: Any) -> dict[str, bytes]:
    return {name: proc.to_bytes(exclude=["vocab"]) for name, proc in nlp.pipeline}


def _restore(nlp: Any, state: dict[str, bytes]) -> None:
    for name, proc in nlp.pipeline:
        proc.from_bytes(state[name], exclude=["vocab"])


def predict_tags(nlp: Any, sentences: Sentences, batch_size: int = 256) -> list[list[str]]:
    """BIO tags of the entities the pipeline finds in each sentence's tokens."""
    from spacy.tokens import Doc

    docs = (Doc(nlp.vocab, words=tokens, spaces=[True] * len(tokens)) for tokens, _ in sentences)
    return [spans_to_bio(len(doc), [(e.start, e.end, e.label_) for e in doc.ents])
            for doc in nlp.pipe(docs, batch_size=batch_size)]


def train_and_score(*, train: Path, dev: Path, test: Sentences, vectors: Path | None, seed: int,
                    caps: ProbeCaps, progress: Progress = _quiet) -> RunResult:
    """Train with spaCy on ``train`` (a DocBin), select on ``dev``, score entity F1 on ``test``."""
    from spacy.schemas import ConfigSchemaTraining
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import create_evaluation_callback, create_train_batches, train_while_improving
    from spacy.util import registry, resolve_dot_names
    from thinc.api import fix_random_seed

    config = training_config(train=train, dev=dev, vectors=vectors, seed=seed, caps=caps)
    fix_random_seed(seed)
    nlp = init_nlp(config)
    config = nlp.config.interpolate()
    fix_random_seed(seed)
    T = registry.resolve(config["training"], schema=ConfigSchemaTraining)
    train_corpus, dev_corpus = resolve_dot_names(config, [T["train_corpus"], T["dev_corpus"]])
    evaluate = create_evaluation_callback(nlp, dev_corpus, T["score_weights"])
    steps = train_while_improving(
        nlp, T["optimizer"], create_train_batches(nlp, train_corpus, T["batcher"], T["max_epochs"]), evaluate,
        dropout=T["dropout"], accumulate_gradient=T["accumulate_gradient"], patience=T["patience"],
        max_steps=T["max_steps"], eval_frequency=T["eval_frequency"], exclude=T["frozen_components"],
        annotating_components=T["annotating_components"], before_update=T["before_update"],
    )
    start = time.monotonic()
    best_score, best_state = -1.0, None
    epoch = step = 0
    stopped_by = "epochs"
    for _batch, info, is_best in steps:
        epoch, step = info["epoch"], info["step"]
        elapsed = time.monotonic() - start
        if is_best and info["score"] is not None and step > 0:
            best_score, best_state = float(info["score"]), _component_state(nlp)
        progress(f"epoch {epoch + 1}/{caps.epochs}, step {step}", min(1.0, max(epoch / caps.epochs,
                                                                                 elapsed / caps.seconds)))
        if elapsed >= caps.seconds:
            stopped_by = "time"
            break
    final_score = float(evaluate()[0])  # the last model, which no scheduled evaluation may have seen
    if best_state is not None and best_score > final_score:
        _restore(nlp, best_state)
    seconds = time.monotonic() - start
    score: EntityScore = entity_score([tags for _, tags in test], predict_tags(nlp, test))
    return RunResult(f1=score.f1, precision=score.precision, recall=score.recall,
                     dev_f1=100.0 * max(best_score, final_score), epochs=epoch + 1, steps=step + 1,
                     seconds=seconds, stopped_by=stopped_by)
