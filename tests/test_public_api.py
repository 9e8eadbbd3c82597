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
from simcore import analysis, corpus, export, report, selection
from simcore.errors import SimcoreError
from simcore.recommendation import recommend
from simcore.store import ArtefactStore
from simcore.tokenize import TokenizerOptions

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


# --- beyond the public list: functions a notebook user reaches through their modules ----------

BEYOND = {"simcore.selection.select": selection.select, "simcore.selection.score_pool": selection.score_pool,
          "simcore.corpus.sample_corpus": corpus.sample_corpus, "simcore.corpus.save_upload": corpus.save_upload,
          "simcore.report.build_report": report.build_report}
N_BEYOND_CALLS = 1000


def _candidates(tmp_path: Path) -> dict[str, list[object]]:
    """Per parameter name, values of about the right kind (good ones and bad ones), so that generated
    calls pass the first checks and reach the later ones; the rest of each call draws from _pool."""
    store = ArtefactStore(tmp_path / "store")
    (tmp_path / "pool.txt").write_text("".join(f"the striker scored goal {i} in the second half\n" for i in range(30)))
    (tmp_path / "target.txt").write_text("the keeper saved a penalty\nthe striker scored twice\n")
    (tmp_path / "empty.txt").write_text("")
    pool_corpus = corpus.Corpus.from_path(tmp_path / "pool.txt")
    target = corpus.Corpus.from_path(tmp_path / "target.txt")
    bad = corpus.Corpus.unreadable("empty", tmp_path / "empty.txt", "empty: empty.txt is empty")
    tokenized = corpus.tokenize_corpus(target, store, TokenizerOptions())
    table3 = pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv")
    long = analysis.to_long(table3)
    ranking = analysis.rank_sources(long)
    agreement = analysis.agreement(long)
    numbers = [5, 0, 1, -1, 2**70, 1.5, float("nan"), True, np.int64(7), "3", None]
    tables = [None, pd.DataFrame(), pd.DataFrame({"a": [1]}), [], "table", ranking]
    return {
        "pool": [pool_corpus, target, bad], "target": [target, pool_corpus, bad],
        "options": [selection.SelectionOptions(method="ppl"), {"method": "ppl"}, None],
        "store": [store, str(tmp_path / "store"), None], "progress": [None, print, 3],
        "top": [5, None, 0, 2.5, "5"], "fraction": [None, 0.5, 2.0, float("nan"), "x"],
        "out": [None, tmp_path / "kept.txt", tmp_path / "pool.txt", tmp_path, tmp_path / "no" / "k.txt", 3, ""],
        "scores_csv": [None, tmp_path / "scores.csv", tmp_path / "target.txt", b"x"],
        "keep_duplicates": [False, True, "yes", None],
        "tokenized": [tokenized, target, None], "n_tokens": numbers, "index": [0, *numbers], "seed": numbers,
        "data": [b"", b"a b c\n", bytearray(b"x y\n"), "text", None, [1]],
        "filename": ["x.txt", "../../up.csv.gz", "a\rb.conll", "", "\x00", None, 3],
        "long": [long, long.head(0), ranking, pd.DataFrame({"source": ["a"], "target": ["b"], "measure": [None],
                                                             "value": ["x"]}), table3, None],
        "ranking": [ranking, ranking.head(0), long, ranking.drop(columns=["rank"]), None],
        "source_label": ["", "matrix.csv", "<b>x</b>", None, 3], "agreement_note": ["", "none", None, 1.0],
        "agreement": [None, agreement, "kappa", long],
        "correlations": tables, "regret": tables, "joined": [*tables, long.assign(improvement=1.0)],
        "recommendations": [None, [], [3], "x", recommend(long)],
    }


def test_functions_beyond_the_public_list_raise_only_simcores_errors(tmp_path):
    candidates = _candidates(tmp_path)
    anything = _pool(tmp_path)
    rng = random.Random(20261124)
    outcomes: Counter[str] = Counter()
    wrong = []

    def value(parameter: str) -> object:
        """The first (good) candidate half the time, another candidate, or anything at all."""
        draw = rng.random()
        if parameter not in candidates or draw > 0.95:
            return rng.choice(anything)
        return candidates[parameter][0] if draw < 0.5 else rng.choice(candidates[parameter])

    for _ in range(N_BEYOND_CALLS):
        name = rng.choice(sorted(BEYOND))
        parameters = list(inspect.signature(BEYOND[name]).parameters.values())
        required = [p for p in parameters if p.default is p.empty]
        optional = [p for p in parameters if p.default is not p.empty]
        args = [value(p.name) for p in required]
        if rng.random() < 0.05:  # now and then one argument too few or too many: Python's own TypeError
            args = args[:-1] if rng.random() < 0.5 else [*args, None]
        kwargs = {p.name: value(p.name) for p in rng.sample(optional, rng.randint(0, len(optional)))}
        try:
            inspect.signature(BEYOND[name]).bind(*args, **kwargs)
        except TypeError:
            continue
        try:
            BEYOND[name](*args, **kwargs)
        except SimcoreError:
            outcomes["SimcoreError"] += 1
        except Exception as exc:  # noqa: BLE001
            outcomes[type(exc).__name__] += 1
            shown = ", ".join([*(type(a).__name__ for a in args), *(f"{k}={type(v).__name__}" for k, v in kwargs.items())])
            wrong.append(f"{name}({shown}): {type(exc).__name__}: {str(exc)[:150]}")
        else:
            outcomes[f"returned from {name.rsplit('.', 1)[1]}"] += 1
    print(f"\n{N_BEYOND_CALLS} calls over {', '.join(sorted(BEYOND))}: {dict(outcomes)}")
    assert not wrong, f"{len(wrong)} calls raised something else, e.g.\n" + "\n".join(sorted(set(wrong))[:15])
    assert outcomes["SimcoreError"] > 500
    assert all(outcomes[f"returned from {n.rsplit('.', 1)[1]}"] > 0 for n in BEYOND), "some function never ran"
