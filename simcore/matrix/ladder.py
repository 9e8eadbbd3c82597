"""Sizes at which sources are compared: one shared size for the table, and a ladder for pairs.

Measures move with the size of the source sample (PPL falls as a sample shrinks, because more
target words become ``<unk>``, which a small model predicts cheaply; JSD and TVC move the other
way), so no value that decides may be compared with one taken at another size. Every value in
the table is taken at one size, the smallest source's (``table_size``). For the recommendation,
each pair of sources also meets at the largest size both have (``pair_size``), snapped to a
ladder of roughly ×3 steps (10k, 30k, 100k, ... tokens), so that a source needs a handful of
samples, stored and shared by every target, instead of one per other source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

DEFAULT_SAMPLE_CAP = 10_000_000
# A pair meets above the table's size only at a rung at least this many times larger: a smaller gain
# would cost a sample of every larger source for little more text (pairs still meet at equal sizes).
MIN_GAIN = 3
LADDER = (10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000, 30_000_000, 100_000_000)


def table_size(source_tokens: Sequence[int], cap: int = DEFAULT_SAMPLE_CAP) -> int:
    """Tokens per source sample in the table: the smallest source's size, at most ``cap``.

    Every source is then compared at the same size, and none is used whole beside larger samples.
    """
    if not source_tokens:
        raise ValueError("no source sizes")
    return min(cap, min(source_tokens))


def rungs(source_tokens: Sequence[int], table: int, *, cap: int = DEFAULT_SAMPLE_CAP,
          ladder: bool = True) -> list[int]:
    """The sizes pairs may meet at: the table's size, the whole size of every source below it
    (it cannot be sampled larger), and, when ``ladder`` is on, the ladder's rungs from ``MIN_GAIN``
    times the table's size up to ``cap``."""
    sizes = {table} | {n for n in source_tokens if n < table}
    if ladder:
        sizes |= {r for r in LADDER if MIN_GAIN * table <= r <= cap}
    return sorted(sizes)


def pair_size(a: int, b: int, steps: Sequence[int], limit: int) -> int:
    """The largest size in ``steps`` that both sources (``a`` and ``b`` tokens) reach, at most ``limit``."""
    top = min(a, b, limit)
    fitting = [r for r in steps if r <= top]
    return max(fitting) if fitting else top


def pair_sizes(sizes: Mapping[str, int], table: int, *, cap: int = DEFAULT_SAMPLE_CAP,
               ladder: bool = True) -> dict[str, list[int]]:
    """For each source, the sample sizes its pairs need besides the table's own sample.

    With ``ladder`` off (a size the user chose), pairs meet at that size, or at the smaller
    source's whole size when one is smaller.
    """
    limit = cap if ladder else table
    steps = rungs(list(sizes.values()), table, cap=cap, ladder=ladder)
    own = {name: min(table, n) for name, n in sizes.items()}
    needed: dict[str, list[int]] = {}
    for name, n in sizes.items():
        extra = {pair_size(n, m, steps, limit) for other, m in sizes.items() if other != name}
        needed[name] = sorted(s for s in extra if s != own[name] and s <= n)
    return needed


def size_bias(measure: str) -> str:
    """The measured direction of a measure's size bias, in words (each measure's ``size_direction`` and
    ``size_why``, measured on ../shared/data by bench/bench_recommendation.py --sizes)."""
    from ..measures.lookup import get_measure

    return get_measure(measure).size_bias()
