"""What one browser session holds: its corpora, its named similarity matrices, its NER results, its jobs.

Plain data, no Streamlit: pages reach it through ``dashboard.session.get_state()``; background jobs
(dashboard.jobs) only ever hand their results back to the page script, which files them here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from simcore.corpora.corpus import Corpus


@dataclass
class LoadedCorpus:
    """A corpus the user added, and where it came from (shown on the pages)."""

    corpus: Corpus
    origin: str  # "sample", "upload: <name>", "server path: <path>"


@dataclass
class Job:
    """The choices of one matrix computation (the Similarity form), kept with the matrix it made."""

    sources: list[str]
    targets: list[str]
    measures: list[str]
    options: dict[str, Any]
    tokenizer: dict[str, Any]
    samples: int = 1
    sample_tokens: int | None = None
    compute_noise: bool = False  # measures below the size at which they are reliable computed anyway


@dataclass
class NamedMatrix:
    """One similarity matrix kept under a name: computed here, opened from a file, or the paper's Table 3."""

    name: str
    long: pd.DataFrame  # simcore's long form (source, target, measure, value, direction, ...)
    origin: str
    options: dict[str, Any] = field(default_factory=dict)
    raw: pd.DataFrame | None = None  # the table as read, for a file's extra columns (F1)
    job: Job | None = None  # the choices that computed it (for the drill-down); None for a file
    created: float = field(default_factory=time.time)


def unique_name(name: str, taken: Any) -> str:
    """``name``, or ``name (2)``, ``name (3)``… when it is taken."""
    if name not in taken:
        return name
    i = 2
    while f"{name} ({i})" in taken:
        i += 1
    return f"{name} ({i})"


@dataclass
class AppState:
    """Everything one browser session has loaded or computed."""

    sources: dict[str, LoadedCorpus] = field(default_factory=dict)
    targets: dict[str, LoadedCorpus] = field(default_factory=dict)
    # Similarity matrices by name, oldest first; ``active`` is the one the current page shows.
    matrices: dict[str, NamedMatrix] = field(default_factory=dict)
    active: str | None = None
    # Bumped when a matrix is added or removed, so that every page's "shown" picker starts on the newest.
    matrices_version: int = 0
    # Which matrix each page last showed (page key -> name).
    shown: dict[str, str] = field(default_factory=dict)
    # Background jobs by kind ("matrix", "selection"); see dashboard.jobs.
    jobs: dict[str, Any] = field(default_factory=dict)
    # NER results: the raw table as loaded or edited, and which columns hold what.
    results: pd.DataFrame | None = None
    results_label: str = ""
    results_columns: dict[str, str | None] = field(default_factory=dict)
    # Messages for the next run of the page (an action that changed the state reruns the script).
    flash: list[tuple[str, str]] = field(default_factory=list)
    # Anything a page wants to keep (other pages may use their own keys).
    extra: dict[str, Any] = field(default_factory=dict)
    # The workspace on disk this state is saved in (dashboard.workspace): its id (in the address), name, links.
    workspace: str = ""
    workspace_name: str = ""
    workspace_created: float = 0.0
    workspace_related: list[str] = field(default_factory=list)

    # The active matrix, as the pages and the exports read it.
    @property
    def current(self) -> NamedMatrix | None:
        return self.matrices.get(self.active or "")

    @property
    def matrix(self) -> pd.DataFrame | None:
        current = self.current
        return None if current is None else current.long

    @property
    def matrix_label(self) -> str:
        current = self.current
        return "" if current is None else current.name

    @property
    def matrix_options(self) -> dict[str, Any]:
        current = self.current
        return {} if current is None else current.options

    def add_matrix(self, matrix: NamedMatrix) -> str:
        """Keep a matrix under its name (made unique: nothing is replaced) and show it on every page."""
        name = unique_name(matrix.name, self.matrices)
        matrix.name = name
        self.matrices[name] = matrix
        self._shown_changed(name)
        return name

    def remove_matrix(self, name: str) -> None:
        self.matrices.pop(name, None)
        self._shown_changed(next(reversed(self.matrices), None) if self.active == name else self.active)

    def rename_matrix(self, old: str, new: str) -> str:
        new = new.strip()
        if not new or old not in self.matrices or new == old:
            return old
        new = unique_name(new, self.matrices)
        self.matrices = {new if k == old else k: v for k, v in self.matrices.items()}
        self.matrices[new].name = new
        self._shown_changed(new if self.active == old else self.active)
        return new

    def _shown_changed(self, active: str | None) -> None:
        self.active = active
        self.shown.clear()
        self.matrices_version += 1
        for key in ("drill", "report_parts"):
            self.extra.pop(key, None)

    def say(self, kind: str, text: str) -> None:
        """A message ("success", "info", "warning", "error") shown at the top of the next page run."""
        self.flash.append((kind, text))
