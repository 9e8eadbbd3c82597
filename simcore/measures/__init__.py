"""The similarity measures, behind a small registry.

Each measure declares its name, its direction (which way is "more similar"), which options it
reads, and how it scores a target against one prepared (sub-)corpus of a source. What a measure
needs from a source (n-gram counts, a KenLM model, word vectors) is built once per source
fingerprint and options by :class:`PreparedSource` and kept in the artefact store.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ..corpus import TokenizedCorpus
from ..counts import NgramCounts, TokenHasher, count_sentences, prepare_counts
from ..errors import SimcoreError
from ..option_checks import check_dataclass_fields
from ..store import ArtefactStore
from ..uncertainty import DEFAULT_REPLICATES

HIGHER = 1
LOWER = -1
NOT_SIMILARITY = 0


@dataclass(frozen=True)
class MeasureOptions:
    """Every option of every measure, with the defaults of DESIGN.md."""

    ppl_order: int = 5
    ppl_per_sentence: bool = False
    ppl_memory: str = "1G"
    wvv_dims: int = 100
    wvv_window: int = 5
    wvv_negative: int = 5
    wvv_min_count: int = 5
    wvv_epochs: int = 5
    wvv_words: str = "shared"
    wvv_workers: int = 1  # threads; one makes the vectors reproducible (more are faster, not bit-for-bit)
    jsd_max_n: int = 3
    tvcc_pos: tuple[str, ...] = ("NOUN", "VERB", "ADJ")
    tvcc_tag_source: bool = False
    kl_buckets: int = 10_000  # DSIR's hashed 1-2-gram buckets
    emb_sentences: int = 2_000  # sentences per side that EMB embeds (drawn at random)
    seed: int = 13
    bootstrap: int = DEFAULT_REPLICATES  # replicates over the target's sentences (0: none)

    def __post_init__(self) -> None:
        check_dataclass_fields(self)

    def subset(self, names: tuple[str, ...]) -> dict[str, Any]:
        values = asdict(self)
        return {n: (list(values[n]) if isinstance(values[n], tuple) else values[n]) for n in names}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> MeasureOptions:
        known = {k: (tuple(v) if isinstance(v, list) else v) for k, v in values.items()
                 if k in cls.__dataclass_fields__}
        return cls(**known)


@dataclass
class Score:
    """One measure's value for one source sample and one target, with details."""

    value: float
    details: dict[str, Any] = field(default_factory=dict)
    # The value on each bootstrap replicate of the target (see simcore.uncertainty); None when not resampled.
    replicates: list[float] | None = None


ProgressFn = Callable[[str, float], None]


class PreparedSource:
    """A source (sub-)corpus with lazily built, stored artefacts."""

    def __init__(self, sample: TokenizedCorpus, store: ArtefactStore, options: MeasureOptions,
                 progress: ProgressFn | None = None) -> None:
        self.sample = sample
        self.store = store
        self.options = options
        self.progress = progress
        self._counts: NgramCounts | None = None
        self._cache: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return self.sample.name

    def counts(self) -> NgramCounts:
        if self._counts is None:
            self._counts = prepare_counts(self.sample, self.store, max(3, self.options.jsd_max_n), self.progress)
        return self._counts

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]


class PreparedTarget:
    """A target corpus held in memory (targets are small), with derived data cached."""

    def __init__(self, tokenized: TokenizedCorpus, store: ArtefactStore, options: MeasureOptions,
                 raw: Any = None) -> None:
        self.tokenized = tokenized
        self.store = store
        self.options = options
        self.raw = raw
        self.sentences: list[list[str]] = list(tokenized.sentences())
        self.hasher = TokenHasher()
        self._counts: NgramCounts | None = None
        self._cache: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return self.tokenized.name

    @property
    def fingerprint(self) -> str:
        return self.tokenized.fingerprint

    def counts(self) -> NgramCounts:
        if self._counts is None:
            self._counts = count_sentences(self.sentences, max(3, self.options.jsd_max_n), self.hasher)
        return self._counts

    def types(self) -> list[str]:
        return self.cached("types", lambda: sorted({t for s in self.sentences for t in s}))

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]


class Measure(Protocol):
    name: str
    label: str
    direction: int
    option_names: tuple[str, ...]
    description: str
    # The measure in a few plain words for a reader (shown beside its label; see explained()); optional.
    gloss: str
    # Source size (tokens) below which the measure's rankings are not yet settled (bench/bench_recommendation.py).
    reliable_tokens: int
    # True when, below that size, the measure is noise and is left out of the recommendation.
    noise_when_small: bool
    # True when pairs of sources of different sizes should also be compared at larger common sizes
    # (simcore.ladder); optional, False when absent.
    size_ladder: bool

    def prepare(self, source: PreparedSource) -> None:
        """Build what this measure needs from the source (stored; cheap when present)."""

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        """Score the target against the prepared source sample."""


REGISTRY: dict[str, Measure] = {}


def register(measure: Measure) -> Measure:
    REGISTRY[measure.name] = measure
    return measure


def get_measure(name: str) -> Measure:
    _load_builtin()
    if not isinstance(name, str):
        raise SimcoreError(f"a measure is named by text such as 'tvc', not {type(name).__name__}")
    try:
        return REGISTRY[name.lower()]
    except KeyError:
        raise SimcoreError(f"unknown measure {name!r}; choose from {', '.join(all_measures())}") from None


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
        importlib.import_module(f"{__name__}.{newer}")
    _LOADED = True
