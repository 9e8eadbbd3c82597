"""The LM probe's plan: what it will train, how fast this machine trains it, and how long that takes.

Masked-LM training costs about a thousand times more on a CPU than on a GPU, so before training
the probe measures both trainings' word pieces per second here (a few steps each, the first not
timed), estimates the total from the word pieces still to train (stored runs cost nothing), and
refuses a plan longer than the stated limit unless forced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..utils.errors import SimcoreError

EVAL_COST = 1 / 3  # a forward pass without backward: about a third of a training step's work per piece


class PlanTooLong(SimcoreError):
    """The estimated time is over the limit and the run was not forced."""


def duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 05 min``."""
    if not math.isfinite(seconds):
        return "unknown"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


# The choices the refusal names, as the command line calls them.
CLI_NAMES = {"lm_tokens": "--lm-tokens", "train_sentences": "--max-train-sentences", "seeds": "--seeds",
             "sources": "the sources", "max_minutes": "--max-minutes", "force": "give --force"}


@dataclass
class Adaptation:
    """One source's continued masked-LM training."""

    source: str
    pieces: int      # word pieces of its sample (the tokens one pass trains on)
    stored: bool


@dataclass
class Tagging:
    """The fine-tuning runs of one target."""

    target: str
    runs: int           # baseline and each usable source, per seed
    stored: int         # of which already stored
    train_pieces: int   # word pieces of the (capped) train split, per epoch
    test_pieces: int


@dataclass
class LMPlan:
    """The runs of an LM probe and their estimated time on this machine."""

    device: str
    model: str
    lm_tokens: int
    adaptations: list[Adaptation]
    tagging: list[Tagging]
    epochs: int
    lm_rate: float = float("nan")       # measured masked-LM word pieces per second
    tagging_rate: float = float("nan")  # measured fine-tuning word pieces per second
    notes: list[str] = field(default_factory=list)

    @property
    def lm_pieces(self) -> int:
        """Word pieces of masked-LM training still to do."""
        return sum(a.pieces for a in self.adaptations if not a.stored)

    @property
    def tagging_pieces(self) -> float:
        """Fine-tuning work still to do, in training word pieces (scoring the test split counted at a third)."""
        return sum((t.runs - t.stored) * (self.epochs * t.train_pieces + EVAL_COST * t.test_pieces)
                   for t in self.tagging)

    def parts(self) -> dict[str, float]:
        """Estimated seconds of each part still to do."""
        lm = self.lm_pieces / self.lm_rate if self.lm_pieces else 0.0
        tuning = self.tagging_pieces / self.tagging_rate if self.tagging_pieces else 0.0
        return {"masked LM": lm, "fine-tuning": tuning}

    @property
    def seconds(self) -> float:
        """Estimated seconds of the training still to do (0 when everything is stored)."""
        return sum(self.parts().values())

    def describe(self) -> str:
        """A few lines for the terminal and the page."""
        stored = sum(a.stored for a in self.adaptations)
        lines = [
            f"LM probe plan on {self.device} with {self.model}:",
            f"  masked-LM training: {len(self.adaptations)} source(s) x {self.lm_tokens:,} tokens "
            f"({self.lm_pieces:,} word pieces to train; {stored} source(s) stored)",
        ]
        lines.extend(f"  fine-tuning on {t.target}: {t.runs} run(s) ({t.stored} stored) x {self.epochs} epoch(s) over "
                     f"{t.train_pieces:,} word pieces, scored on {t.test_pieces:,}" for t in self.tagging)
        if math.isfinite(self.lm_rate) or math.isfinite(self.tagging_rate):
            lines.append(f"  measured here: masked LM {self.lm_rate:,.0f} pieces/s, fine-tuning "
                         f"{self.tagging_rate:,.0f} pieces/s")
        lines.append(f"  estimated time: {duration(self.seconds)}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def check(self, max_minutes: float, force: bool, names: dict[str, str] | None = None) -> None:
        """PlanTooLong (one line) when the estimate is over ``max_minutes`` and not ``force``. ``names``: what
        the caller calls the choices (CLI_NAMES by default; the dashboard passes its form's fields)."""
        if force or self.seconds <= max_minutes * 60:
            return
        n = {**CLI_NAMES, **(names or {})}
        raise PlanTooLong(f"the LM probe would take about {duration(self.seconds)} on this {self.device} "
                          f"(limit {max_minutes:g} min): lower {n['lm_tokens']}, {n['train_sentences']}, "
                          f"{n['seeds']} or {n['sources']}, raise {n['max_minutes']}, or {n['force']}")
