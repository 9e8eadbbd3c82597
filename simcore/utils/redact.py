"""One redaction of secrets in URLs, for every message simcore prints, stores or writes.

A URL may carry credentials in its user-info (``s3://KEY:SECRET@bucket/``, ``http://user:pa/ss@host/``:
AWS secret keys often hold ``/``, and a password may hold ``@``) or in query parameters that name a
secret (``?pass=``, ``?sig=``, ``?X-Amz-Signature=``, ``?token=``, ...). :func:`redact` drops the
user-info of every URL in a text and masks those parameters' values with ``***``; the errors, the
terminal streams, the progress line and the URL shown for a corpus all go through it.

The user-info is everything from ``://`` to an ``@`` when what comes before it is ``user:password``
(the user without ``/``, ``?`` or ``#``, the password any characters) or a bare ``user``; a path
with an ``@`` in it (``hf://datasets/org/set@main``) keeps it. When in doubt more is hidden, never
less (``http://host:8080/a@b`` is shown as ``http://b``).
"""

from __future__ import annotations

import re

MASK = "***"
# A URL in running text: a scheme, then anything up to white space (a password may hold quotes).
_URL_IN_TEXT = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]{0,30}://)(\S*)")
# Query (and fragment) parameter names whose values are secrets.
_SECRET_PARAMETER = re.compile(
    r"(pass|pwd|secret|sig|signature|key|token|auth|credential|sas|session|x-amz-|x-goog-|code)",
    re.IGNORECASE)


def has_user_info(rest: str) -> bool:
    """True when the text after a URL's ``://`` starts with credentials (``user:password@`` or ``user@``)."""
    return _user_info_end(rest) >= 0


def _user_info_end(rest: str) -> int:
    """The index of the ``@`` that ends the user-info of ``rest`` (the text after ``://``), or -1.

    The last ``@`` before the query (``?``) or fragment (``#``) when what precedes it is user-info, else
    the last ``@`` anywhere when it is (a password may hold ``?``, ``#`` and ``@`` too)."""
    head = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    for at in (rest.rfind("@", 0, head), rest.rfind("@")):
        if at >= 0 and _is_user_info(rest[:at]):
            return at
    return -1


def _is_user_info(before: str) -> bool:
    """``user:password`` (the user without ``/``, ``?`` or ``#``; the password anything) or a bare ``user``."""
    user = before.split(":", 1)[0]
    return not any(c in user for c in "/?#")


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
    return _URL_IN_TEXT.sub(_redacted_match, text)


def _redacted_match(match: re.Match[str]) -> str:
    """A URL found in text, redacted; the quotes and punctuation that close it in a sentence are kept."""
    rest = match.group(2)
    body = rest.rstrip("'\")]>.,;:`")
    return redact_url(match.group(1), body) + rest[len(body):]
