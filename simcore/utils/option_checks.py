"""Checks of option objects built by library users (the CLI's own parsers already bound every value).

Kept apart from the option classes so each class calls one function and the rules live together.
"""

from __future__ import annotations

import dataclasses
import numbers
import re
from typing import Any

from .errors import InvalidArgument

MAX_KL_BUCKETS = 10_000_000  # 80 MB of counts per source sample
MAX_EMB_SENTENCES = 1_000_000  # about 1.5 GB of embeddings per side
_BOUNDS = {"ppl_order": (1, 6), "seed": (0, 2**32 - 1), "wvv_dims": (1, 10_000), "wvv_workers": (1, 256),
           "wvv_min_count": (1, 10**9), "jsd_max_n": (1, 10), "bootstrap": (0, 100_000),
           "kl_buckets": (1, MAX_KL_BUCKETS), "emb_sentences": (1, MAX_EMB_SENTENCES)}
_MEMORY = re.compile(r"^\d+(\.\d+)?[%bBkKmMgGtTpP]?$")


def check_dataclass_fields(options: Any) -> None:
    """Every field of ``options`` has the type of its default, and numbers lie in their range."""
    label = type(options).__name__
    for f in dataclasses.fields(options):
        value, default = getattr(options, f.name), f.default
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            low, high = _BOUNDS.get(f.name, (0 if f.name.endswith("seed") else 1, 2**32 - 1))
            ok = isinstance(value, numbers.Integral) and not isinstance(value, bool) and low <= value <= high
            if not ok:
                raise InvalidArgument(f"{label}.{f.name} must be a whole number from {low:,} to {high:,}, "
                                      f"not {value!r}"[:300])
        elif isinstance(default, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
        elif isinstance(default, str):
            ok = isinstance(value, str) and bool(value.strip())
        elif isinstance(default, tuple):
            ok = isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value)
        else:
            continue
        if not ok:
            raise InvalidArgument(f"{label}.{f.name} must be {type(default).__name__} like {default!r}, "
                                  f"not {value!r}"[:300])
    memory = getattr(options, "ppl_memory", None)
    if isinstance(memory, str) and not _MEMORY.match(memory):
        raise InvalidArgument(f"{label}.ppl_memory must be a size such as 1G, 500M or 80%, not {memory!r}"[:300])
