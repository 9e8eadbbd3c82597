"""One redaction of secrets in URLs, for every message simcore prints, stores or writes.

A URL may carry credentials in its user-info (``s3://KEY:SECRET@bucket/``, ``http://user:pa/ss@host/``:
AWS secret keys often hold ``/``, and a password may hold ``@``) or in query parameters that name a
secret (``?pass=``, ``?sig=``, ``?X-Amz-Signature=``, ``?token=``, ...). :func:`redact` drops the
user-info of every URL in a text and masks those parameters' values with ``***``; the errors, the
terminal streams, the progress line and the URL shown for a corpus all go through it.

The user-info is everything from ``://`` to the URL's last ``@`` when that part holds a ``:`` or no
``/`` (``user:password`` or ``user``); a path with an ``@`` in it (``hf://datasets/org/set@main``)
keeps it. When in doubt more is hidden, never less.
"""

from __future__ import annotations

import re

MASK = "***"
# A URL in running text: a scheme, then anything up to white space or a quote or bracket.
_URL_IN_TEXT = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]{0,30}://)([^\s'\"<>`]*)")
# Query (and fragment) parameter names whose values are secrets.
_SECRET_PARAMETER = re.compile(
    r"(pass|pwd|secret|sig|signature|key|token|auth|credential|sas|session|x-amz-|x-goog-|code)",
    re.IGNORECASE)


def has_user_info(rest: str) -> bool:
    """True when the text after a URL's ``://`` starts with credentials (``user:password@`` or ``user@``)."""
    return _user_info_end(rest) >= 0


def _user_info_end(rest: str) -> int:
    """The index of the ``@`` that ends the user-info of ``rest`` (the text after ``://``), or -1."""
    at = rest.rfind("@")
    if at < 0:
        return -1
    before = rest[:at]
    return at if (":" in before or "/" not in before) else -1


def _parameters(text: str) -> str:
    parts = []
    for part in text.split("&"):
        name, eq, _ = part.partition("=")
        parts.append(f"{name}={MASK}" if eq and _SECRET_PARAMETER.search(name) else part)
    return "&".join(parts)


def redact_url(scheme: str, rest: str) -> str:
    """One URL (``scheme`` with its ``://``, then the rest) with no user-info and no secret parameter value."""
    end = _user_info_end(rest)
    if end >= 0:
        rest = rest[end + 1:]
    rest, hash_, fragment = rest.partition("#")
    base, question, query = rest.partition("?")
    return scheme + base + question + _parameters(query) + hash_ + _parameters(fragment)


def redact(text: object) -> str:
    """``text`` with every URL in it redacted (:func:`redact_url`)."""
    text = str(text)
    if "://" not in text:
        return text
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(1), m.group(2)), text)
