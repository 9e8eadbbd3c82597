"""User-supplied text (file and corpus names) made inert inside Markdown, for every page."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md(text: object) -> str:
    """User-supplied text (file and corpus names) made inert inside Markdown: shown as typed."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))
