"""What a selection run is asked for: the method and its options, and which of them enter a cache key."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..corpora.tokenize import TokenizerOptions
from ..utils.errors import InvalidArgument

Progress = Callable[[str, float], None]

MAX_ORDER = 6                 # KenLM's programs are built for orders up to 6
MAX_WORKERS = 256             # word2vec threads
MAX_PROCESSES = 64            # spaCy tagging processes (each loads a pipeline)
MAX_STEPS = 1_000_000         # training steps (tagger, encoder adaptation)
MAX_POOL_SAMPLE = 100_000_000
MAX_TARGET_TOKENS = 10_000_000_000
_UPPER = {"order": MAX_ORDER, "workers": MAX_WORKERS, "ner_processes": MAX_PROCESSES, "adapt_steps": MAX_STEPS,
          "tagger_steps": MAX_STEPS, "pool_sample": MAX_POOL_SAMPLE, "dims": 10_000, "window": 1_000,
          "min_count": 10**9, "epochs": 10_000, "batch": 10_000_000}

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
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise InvalidArgument(f"unknown selection method {self.method!r}; choose from {', '.join(METHODS)}"[:300])
        for name, high in _UPPER.items():
            value = getattr(self, name)
            if not _whole(value) or not 1 <= value <= high:
                raise InvalidArgument(f"{name.replace('_', ' ')} must be a whole number of at least 1 and at most {high:,}, "
                                      f"not {value!r}"[:300])
        if not _whole(self.seed) or not 0 <= self.seed <= 2**32 - 1:
            raise InvalidArgument(f"seed must be a whole number from 0 to {2**32 - 1:,}, not {self.seed!r}"[:300])
        if not isinstance(self.tagger, str) or self.tagger not in TAGGERS:
            raise InvalidArgument(f"unknown tagger {self.tagger!r}; choose from {', '.join(TAGGERS)}"[:300])
        if self.target_tokens is not None and (not _whole(self.target_tokens)
                                               or not 1 <= self.target_tokens <= MAX_TARGET_TOKENS):
            raise InvalidArgument(f"the target sample must be a whole number of tokens from 1 to "
                                  f"{MAX_TARGET_TOKENS:,}, not {self.target_tokens!r}"[:300])
        for name in ("adapt", "lowercase"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArgument(f"{name} must be True or False, not {getattr(self, name)!r}"[:300])
        for name in ("memory", "entity_labels"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise InvalidArgument(f"{name.replace('_', ' ')} must be text, not {getattr(self, name)!r}"[:300])
        for name in ("encoder", "pipeline"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (str, os.PathLike)) or not str(value).strip()
                                      or "\0" in str(value)):
                raise InvalidArgument(f"{name} must be a directory path or None, not {value!r}"[:300])

    @property
    def tokenizer(self) -> TokenizerOptions:
        return TokenizerOptions(lowercase=self.lowercase)

    def key_parts(self) -> dict[str, Any]:
        values = asdict(self)
        return {k: values[k] for k in self._METHOD_KEYS[self.method]} | {
            "method": self.method, "target_tokens": self.target_tokens, "lowercase": self.lowercase}


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def with_method(options: SelectionOptions, method: str) -> SelectionOptions:
    """The same options with another method (checked like any SelectionOptions)."""
    if not isinstance(options, SelectionOptions):
        raise InvalidArgument(f"options must be SelectionOptions, not {type(options).__name__}")
    return replace(options, method=method)
