"""The public library, fuzzed: every function listed in ``__all__`` of simcore, simcore.analysis and
simcore.export (what the README's "Library" section shows) either returns or raises one of simcore's
own errors, whatever it is given. Generated calls, fixed seed, kept fast (no corpus is scored here;
test_hostile_generated fuzzes the Workbench and corpora with real files).
"""

from __future__ import annotations

import inspect
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

import simcore
from simcore import analysis, export
from simcore.errors import SimcoreError
from simcore.recommendation import recommend

from .conftest import SAMPLE_DATA

PUBLIC = {"simcore": simcore, "simcore.analysis": analysis, "simcore.export": export}
SKIP = {"simcore.Workbench", "simcore.corpora_in", "simcore.ArtefactStore", "simcore.Corpus"}  # touch disk/corpora
N_CALLS = 1000


def test_every_public_name_is_documented_and_exists():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for module_name, module in PUBLIC.items():
        for name in module.__all__:
            assert hasattr(module, name), f"{module_name}.{name} is listed in __all__ but missing"
        assert f"`{module_name}`" in readme, f"the README's Library section does not name {module_name}"


def _functions() -> dict[str, object]:
    out = {}
    for module_name, module in PUBLIC.items():
        for name in module.__all__:
            value = getattr(module, name)
            qualified = f"{module_name}.{name}"
            if callable(value) and qualified not in SKIP and not (isinstance(value, type)
                                                                 and issubclass(value, Exception)):
                out[qualified] = value
    return out


def _pool(tmp_path: Path) -> list[object]:
    table3 = pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv")
    long = analysis.to_long(table3)
    ranking = analysis.rank_sources(long)
    recs = recommend(long)
    odd = ranking.copy()
    odd.loc[::3, "rank"] = np.nan
    return [None, 0, -1, 2**70, 1.5, float("nan"), float("inf"), True, "", "x", "\x00", "a\rb", b"x", [], [None],
            ["tvc"], [1, "x"], {}, {"a": object()}, {1: 2, "a": 3}, object(), Path("/"), tmp_path, tmp_path / "o.csv",
            tmp_path / "o.md", tmp_path / "o.html", tmp_path / "o.json", tmp_path / "no" / "o.csv",
            str(tmp_path / "o.csv"), pd.DataFrame(), pd.DataFrame({"a": [1]}), long, long.head(0), ranking,
            ranking.head(0), ranking.drop(columns=["rank"]), odd, table3, recs, recs[:1], [recs[0], 3],
            np.zeros(3), pd.Series([1.0, 2.0]), np.array([[1, 0], [0, 1]])]


def test_public_functions_raise_only_simcores_errors(tmp_path):
    functions = _functions()
    pool = _pool(tmp_path)
    rng = random.Random(20261123)
    names = sorted(functions)
    outcomes: Counter[str] = Counter()
    wrong = []
    for _ in range(N_CALLS):
        name = rng.choice(names)
        try:
            signature = inspect.signature(functions[name])
        except (TypeError, ValueError):
            continue
        for _attempt in range(50):
            args = [rng.choice(pool) for _ in range(rng.randint(0, 4))]
            try:
                signature.bind(*args)
                break
            except TypeError:
                continue
        else:
            continue
        try:
            functions[name](*args)
        except SimcoreError:
            outcomes["SimcoreError"] += 1
        except Exception as exc:  # noqa: BLE001
            outcomes[type(exc).__name__] += 1
            wrong.append(f"{name}({', '.join(type(a).__name__ for a in args)}): {type(exc).__name__}: "
                         f"{str(exc)[:150]}")
        else:
            outcomes["returned"] += 1
    print(f"\n{N_CALLS} calls over {len(functions)} public functions ({', '.join(names)}): {dict(outcomes)}")
    assert not wrong, f"{len(wrong)} calls raised something else, e.g.\n" + "\n".join(sorted(set(wrong))[:10])
    assert outcomes["returned"] > 50 and outcomes["SimcoreError"] > 100
