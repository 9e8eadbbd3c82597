"""What a selection run is asked for: the method and its options, and which of them enter a cache key."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..errors import SimcoreError
from ..tokenize import TokenizerOptions

Progress = Callable[[str, float], None]

METHODS = ("cosine", "ppl", "xent", "entities", "encoder")
HIGHER_KEPT = {"cosine": True, "ppl": False, "xent": False, "entities": True, "encoder": True}
TAGGERS = ("target", "generic")
DESCRIPTIONS = {
    "cosine": "cosine similarity of the sentence's mean word2vec vector to the target's (higher kept)",
    "ppl": "perplexity under a KenLM model of the target (lower kept)",
    "xent": "Moore-Lewis cross-entropy difference, target model minus pool model (lower kept)",
    "entities": "number of entities of the target's types a spaCy NER tagger finds in the sentence (higher kept)",
    "encoder": "cosine similarity of the sentence's transformer embedding to the mean target embedding; "
               "with adapt, after masked-LM training on the target (higher kept)",
}


def quiet(message: str, fraction: float) -> None:
    pass


@dataclass(frozen=True)
class SelectionOptions:
    """How pool sentences are scored. Only the options a method reads enter its cache key."""

    method: str = "cosine"
    pool_sample: int = 100_000        # pool sentences for the pool-side models (word2vec, xent, labels)
    target_tokens: int | None = None  # use a sample of the target of about this many tokens
    order: int = 3                    # KenLM order (ppl, xent)
    memory: str = "1G"                # KenLM estimation memory
    dims: int = 100                   # word2vec (cosine)
    window: int = 5
    min_count: int = 2
    epochs: int = 5
    workers: int = 2
    encoder: str | None = None        # local transformers model directory (encoder); default the bundled one
    adapt: bool = False               # encoder: continued masked-LM training on the target first
    adapt_steps: int = 100            # encoder --adapt: training steps (16 sentences each)
    pipeline: str | None = None       # spaCy pipeline directory (entities); default the bundled one
    entity_labels: str = "auto"       # auto (the trained tagger's types; generic: over-represented ones) | all | L1,L2
    tagger: str = "target"            # entities: train on the target's labels (generic when it has none) | generic
    tagger_steps: int = 400           # entities: spaCy training steps for the target's tagger
    ner_processes: int = field(default_factory=lambda: min(2, os.cpu_count() or 1))  # entities: tagging processes
    seed: int = 13
    batch: int = 2000
    lowercase: bool = True

    _METHOD_KEYS = {
        "cosine": ("pool_sample", "dims", "window", "min_count", "epochs", "seed"),
        "ppl": ("order",),
        "xent": ("pool_sample", "order", "seed"),
        "entities": ("pool_sample", "pipeline", "entity_labels", "tagger", "tagger_steps", "seed"),
        "encoder": ("encoder", "adapt", "adapt_steps", "seed"),
    }

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise SimcoreError(f"unknown selection method {self.method!r}; choose from {', '.join(METHODS)}")
        for name in ("pool_sample", "order", "dims", "window", "min_count", "epochs", "workers", "batch", "adapt_steps",
                     "tagger_steps", "ner_processes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise SimcoreError(f"{name.replace('_', ' ')} must be a whole number of at least 1, not {value!r}")
        if self.tagger not in TAGGERS:
            raise SimcoreError(f"unknown tagger {self.tagger!r}; choose from {', '.join(TAGGERS)}")
        if self.target_tokens is not None and self.target_tokens < 1:
            raise SimcoreError("the target sample must have at least 1 token")

    @property
    def tokenizer(self) -> TokenizerOptions:
        return TokenizerOptions(lowercase=self.lowercase)

    def key_parts(self) -> dict[str, Any]:
        values = asdict(self)
        return {k: values[k] for k in self._METHOD_KEYS[self.method]} | {
            "method": self.method, "target_tokens": self.target_tokens, "lowercase": self.lowercase}




def with_method(options: SelectionOptions, method: str) -> SelectionOptions:
    return replace(options, method=method)
