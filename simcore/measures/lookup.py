"""The measures by name: the built-in measure modules are imported (and so registered) on first look-up."""

from __future__ import annotations

import importlib

from ..utils.errors import SimcoreError
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
# The built-in measures in the order the command line and the dashboard have always listed them (a wide
# table is read in it, so the rows of what is computed from one come in it; WVV came first there because
# another module imported it before the first look-up): the seed papers', then the newer ones.
BUILTIN = ("wvv", "jsd", "ppl", "ttr", "tvc", "tvcc", "kl", "emb")


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:  # called for every look-up: ten thousand targets make a hundred thousand of them
        return
    for name in BUILTIN:
        importlib.import_module(f"{__package__}.{name}")
    _LOADED = True


def default_measures() -> tuple[str, ...]:
    """The measures computed unless told otherwise, in the order of their ``default_rank``."""
    _load_builtin()
    chosen = [m for m in REGISTRY.values() if m.default]
    return tuple(m.name for m in sorted(chosen, key=lambda m: m.default_rank))


def family(pretraining: str) -> tuple[str, ...]:
    """The measures that carry the answer for ``pretraining`` ('lm' or 'vectors'), in the order the
    answer's reason names them."""
    _load_builtin()
    members = [m for m in REGISTRY.values() if m.family == pretraining]
    return tuple(m.name for m in sorted(members, key=lambda m: m.family_rank))


def cost(name: str, unknown: float = 1.0) -> float:
    """A measure's relative cost of one part (:attr:`Measure.cost`), ``unknown`` for a name not registered."""
    _load_builtin()
    measure = REGISTRY.get(str(name).lower())
    return measure.cost if measure is not None else unknown


def explained(name: str) -> str:
    """'KL (divergence of word distributions, lower is closer)': a measure's label with one line saying
    what it is and which way is more similar, wherever a reader meets it; an unknown name as given."""
    _load_builtin()
    measure = REGISTRY.get(str(name).lower())
    if measure is None:
        return str(name)
    way = {1: "higher is closer", -1: "lower is closer"}.get(measure.direction)
    words = [measure.gloss or measure.description] + ([way] if way else [])
    return f"{measure.label} ({', '.join(words)})"
