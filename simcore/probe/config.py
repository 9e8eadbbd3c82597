"""The spaCy training config of a probe run, built with spaCy's own config system.

It is spaCy's quickstart NER config for CPU efficiency (``spacy init config --pipeline ner``):
a tok2vec of hashed NORM/PREFIX/SUFFIX/SHAPE embeddings with a CNN encoder, and the transition-
based NER. Runs with a source's vectors set ``include_static_vectors = true`` and load the vectors
table in ``[initialize]``; the baseline keeps ``false`` and has no vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ProbeCaps:
    """The budget of one training run; every value is reported with the results."""

    train_sentences: int | None = 2000
    dev_sentences: int | None = 500
    test_sentences: int | None = None
    epochs: int = 10
    seconds: float = 300.0
    eval_frequency: int = 100

    def as_dict(self) -> dict[str, Any]:
        return {"train_sentences": self.train_sentences, "dev_sentences": self.dev_sentences,
                "test_sentences": self.test_sentences, "epochs": self.epochs, "seconds": self.seconds,
                "eval_frequency": self.eval_frequency}

    def without_time(self) -> dict[str, Any]:
        """Every cap but the time cap: what a run that ended by its epoch cap depends on."""
        return {k: v for k, v in self.as_dict().items() if k != "seconds"}

    def describe(self) -> str:
        """One line for the results table, e.g. ``train_sentences=2000;...``."""
        return ";".join(f"{k}={'all' if v is None else v}" for k, v in self.as_dict().items())


def training_config(*, train: Path, dev: Path, vectors: Path | None, seed: int, caps: ProbeCaps) -> Any:
    """A filled, validated ``thinc.api.Config`` for one run."""
    from spacy.cli.init_config import init_config

    config = init_config(lang="en", pipeline=["ner"], optimize="efficiency", gpu=False)
    config["paths"]["train"] = str(train)
    config["paths"]["dev"] = str(dev)
    config["paths"]["vectors"] = str(vectors) if vectors is not None else None
    config["system"]["seed"] = seed
    config["components"]["tok2vec"]["model"]["embed"]["include_static_vectors"] = vectors is not None
    training = config["training"]
    training["max_epochs"] = caps.epochs
    training["max_steps"] = 0
    training["patience"] = 0
    training["eval_frequency"] = caps.eval_frequency
    training["logger"] = {"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False}
    return config
