"""The measures by name: the built-in measure modules are imported (and so registered) on first look-up."""

from __future__ import annotations

import importlib

from ..errors import SimcoreError
from .registry import REGISTRY, Measure


def get_measure(name: str) -> Measure:
    _load_builtin()
    if not isinstance(name, str):
        raise SimcoreError(f"a measure is named by text such as 'tvc', not {type(name).__name__}")
    try:
        return REGISTRY[name.lower()]
    except KeyError:
        raise SimcoreError(f"unknown measure {name!r}; choose from {', '.join(all_measures())}") from None


def all_measures() -> list[str]:
    _load_builtin()
    return list(REGISTRY)


def parse_measures(text: str | list[str] | tuple[str, ...]) -> list[str]:
    names = text.split(",") if isinstance(text, str) else list(text)
    names = [n.strip().lower() for n in names if n.strip()]
    if not names:
        raise SimcoreError("no measures given")
    for n in names:
        get_measure(n)
    return names


_LOADED = False


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:  # called for every look-up: ten thousand targets make a hundred thousand of them
        return
    from . import jsd, ppl, ttr, tvc, tvcc, wvv  # noqa: F401  (each registers itself on import)
    for newer in ("kl", "emb"):  # the newer measures, listed after the seed papers' ones
        importlib.import_module(f"{__package__}.{newer}")
    _LOADED = True


def explained(name: str) -> str:
    """'KL (divergence of word distributions, lower is closer)': a measure's label with one line saying
    what it is and which way is more similar, wherever a reader meets it; an unknown name as given."""
    _load_builtin()
    measure = REGISTRY.get(str(name).lower())
    if measure is None:
        return str(name)
    way = {1: "higher is closer", -1: "lower is closer"}.get(measure.direction)
    words = [getattr(measure, "gloss", "") or measure.description] + ([way] if way else [])
    return f"{measure.label} ({', '.join(words)})"
