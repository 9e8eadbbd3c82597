"""ReadNotes: what a reader tolerated, counted, so nothing the user gave is changed or lost silently."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ReadNotes:
    """What a reader tolerated: units it skipped (nothing usable) or repaired (kept, with a change).

    Real files have quirks (a token that is a space, a null cell, an empty row group, a line of a
    gigabyte); one odd line must not stop a run, but nothing is dropped silently either: the counts,
    by reason, travel with the tokenized corpus and are shown to the user.
    """

    skipped: int = 0
    repaired: int = 0
    examples: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)
    facts: dict[str, str] = field(default_factory=dict)  # what was found, not changed: e.g. the tag scheme

    def note(self, kind: str, where: str, reason: str | None = None, count: int = 1) -> None:
        """Count ``count`` units skipped (``kind == "skipped"``) or repaired, at ``where``, for ``reason``."""
        if kind == "skipped":
            self.skipped += count
        else:
            self.repaired += count
        if reason:
            self.reasons[reason] += count
        if len(self.examples) < 5:
            self.examples.append(where)

    def fact(self, key: str, value: str) -> None:
        """Record something found about the input (``tag scheme``: ``IOB1``); several values are listed."""
        values = self.facts.get(key, "").split(", ") if key in self.facts else []
        if value not in values:
            self.facts[key] = ", ".join([*values, value])

    def merge(self, other: ReadNotes) -> None:
        """Add another reader's notes (another shard's) to these."""
        self.skipped += other.skipped
        self.repaired += other.repaired
        self.reasons.update(other.reasons)
        for key, value in other.facts.items():
            for part in value.split(", "):
                self.fact(key, part)
        self.examples.extend(other.examples[: max(0, 5 - len(self.examples))])

    def as_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"skipped": self.skipped, "repaired": self.repaired,
                                  "examples": list(self.examples), "reasons": dict(sorted(self.reasons.items()))}
        if self.facts:  # only when there are some: older records stay as they were
            record["facts"] = dict(sorted(self.facts.items()))
        return record

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> ReadNotes:
        values = values or {}
        return cls(int(values.get("skipped", 0)), int(values.get("repaired", 0)), list(values.get("examples", [])),
                   Counter({str(k): int(v) for k, v in (values.get("reasons") or {}).items()}),
                   {str(k): str(v) for k, v in (values.get("facts") or {}).items()})

    def __bool__(self) -> bool:
        return bool(self.skipped or self.repaired)

    def summary(self) -> str:
        """One line: ``3 lines skipped, 2 repaired (e.g. dev.conll line 7465: blank token)``."""
        found = "".join(f"; {key}: {value}" for key, value in sorted(self.facts.items()))
        if not self:
            return "no lines skipped or repaired" + found
        parts = [f"{self.skipped:,} line{'s' if self.skipped != 1 else ''} skipped"] if self.skipped else []
        if self.repaired:
            parts.append(f"{self.repaired:,} repaired")
        line = ", ".join(parts)
        if self.reasons:
            line += " [" + "; ".join(f"{reason}: {n:,}" for reason, n in self.reasons.most_common(4)) + "]"
        return line + (f" (e.g. {self.examples[0]})" if self.examples else "") + found
