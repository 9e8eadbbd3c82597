"""Every option of every measure (:class:`MeasureOptions`), with the defaults of DESIGN.md."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..utils.option_checks import check_dataclass_fields

DEFAULT_REPLICATES = 200  # bootstrap replicates over the target's sentences (see simcore.measures.uncertainty)


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
