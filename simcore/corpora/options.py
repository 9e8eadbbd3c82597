"""What a reader knows of the corpus it reads: its name (for messages) and how to read it.

:class:`~simcore.corpora.corpus.Corpus` has all of these; the readers name this protocol, not
``Corpus``, so they sit below the module that calls them (no import circle).
"""

from __future__ import annotations

from typing import Protocol


class ReadOptions(Protocol):
    """The reading options of one corpus (see :class:`simcore.corpora.corpus.Corpus`)."""

    @property
    def name(self) -> str: ...

    @property
    def encoding(self) -> str | None: ...

    @property
    def max_decompressed_bytes(self) -> int | None: ...

    @property
    def text_field(self) -> str: ...

    @property
    def labels(self) -> tuple[str, ...] | None: ...

    @property
    def tokens_field(self) -> str: ...

    @property
    def tags_field(self) -> str: ...
