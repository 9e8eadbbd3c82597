"""Errors that carry a message meant for the person running simcore.

Every failure caused by the input (a file, an option, a corpus too small) is raised as a
:class:`SimcoreError` whose text says what is wrong and what to do; the CLI prints it on one
line and exits with status 2, the dashboard shows it on the page.
"""

from __future__ import annotations

from .redact import redact


class SimcoreError(Exception):
    """A problem with the input or the set-up, explained for the user (no URL's secret in it:
    :func:`simcore.utils.redact.redact`)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class CorpusError(SimcoreError):
    """A corpus file cannot be read: empty, binary, wrong encoding, malformed."""


class MeasureUnavailable(SimcoreError):
    """A measure cannot run here (for example KenLM's programs are missing)."""


class StoreError(SimcoreError):
    """The artefact store cannot be used (unwritable directory, not a store)."""


class DiskFull(StoreError):
    """The disk (or quota) holding the store or an output file is full."""


class InvalidArgument(SimcoreError, ValueError):
    """A value given to a simcore function or command-line option is of the wrong kind or out of range."""


class TableError(SimcoreError):
    """A table (matrix, results) lacks what an analysis needs: columns, rows, values."""


class OutputError(SimcoreError):
    """A result cannot be written where it was asked to go."""
