"""What reaches the terminal is escaped: a corpus name cannot move the cursor or change colours.

Names are data everywhere else (files keep them exactly); only text shown on a terminal has its
control characters (carriage return, escape, tab, C1 controls) and lone surrogates written as
visible escapes such as ``\\r`` or ``\\x1b``.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

from .redact import redact

_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL_AND_NEWLINE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_NAMED = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def terminal_text(text: Any, keep_newlines: bool = False) -> str:
    """``text`` with control characters and lone surrogates escaped (line feeds too unless kept)."""
    return (_CONTROL if keep_newlines else _CONTROL_AND_NEWLINE).sub(_escape, str(text))


_IN_DOCUMENTS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def visible_controls(text: Any) -> str:
    """``text`` with control characters (escape, C1, ...) and lone surrogates as visible escapes such as
    ``\\x1b``, tab, line feed and carriage return left as they are: for documents (HTML, Markdown) that
    show or encode those three their own way, and that ``cat`` must not turn into terminal commands."""
    return _IN_DOCUMENTS.sub(_escape, str(text))


def has_control(text: str) -> bool:
    """True when ``text`` holds a character that terminal_text would escape (line feeds included)."""
    return bool(_CONTROL_AND_NEWLINE.search(text))


class SafeStream:
    """A text stream that escapes control characters on their way to ``raw`` (line feeds pass)."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_text(redact(text), keep_newlines=True))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw_stream(stream: Any) -> Any:
    """The stream under a SafeStream (for the progress bar, which redraws itself with carriage returns)."""
    return stream.raw if isinstance(stream, SafeStream) else stream
