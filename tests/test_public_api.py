"""The public library, fuzzed: every function listed in ``__all__`` of simcore, simcore.analysis,
simcore.reporting.export and simcore.selection (what docs/library.md shows) either returns or
raises one of simcore's own errors, whatever it is given. Generated calls, fixed seed, kept fast (only
tiny corpora are scored here; test_hostile_generated fuzzes the Workbench and corpora with real files).
"""

from __future__ import annotations

import inspect
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

import simcore
from simcore import analysis, selection
from simcore.answer.recommendation import recommend
from simcore.corpora import corpus
from simcore.corpora.tokenize import TokenizerOptions
from simcore.reporting import export, report
from simcore.utils.errors import SimcoreError
from simcore.utils.store import ArtefactStore

from .conftest import SAMPLE_DATA

PUBLIC = {"simcore": simcore, "simcore.analysis": analysis, "simcore.reporting.export": export, "simcore.selection": selection}
# These touch disk or corpora. simcore.selection's score_pool, select and write_selection stay: given
# no Corpus they stop at their first check, and the tests below give them real ones.
SKIP = {"simcore.Workbench", "simcore.corpora_in", "simcore.ArtefactStore", "simcore.Corpus"}
N_CALLS = 1000


def test_every_public_name_is_documented_and_exists():
    library = (Path(__file__).resolve().parent.parent / "docs" / "library.md").read_text()
    for module_name, module in PUBLIC.items():
        for name in module.__all__:
            assert hasattr(module, name), f"{module_name}.{name} is listed in __all__ but missing"
        assert f"`{module_name}`" in library, f"docs/library.md does not name {module_name}"


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


# --- given values of about the right kind, so calls get past the first checks -------------------

BEYOND = {"simcore.selection.select": selection.select, "simcore.selection.score_pool": selection.score_pool,
          "simcore.corpora.corpus.sample_corpus": corpus.sample_corpus, "simcore.corpora.corpus.save_upload": corpus.save_upload,
          "simcore.reporting.report.build_report": report.build_report}
N_BEYOND_CALLS = 1000
CHOOSING = {f"simcore.selection.{name}": getattr(selection, name)
            for name in ("choose", "count_to_keep", "kept_indices", "kept_mask", "jaccard", "write_selection",
                         "with_method", "ScoreSet", "Cutoff", "SelectionResult")}
N_CHOOSING_CALLS = 1000


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


def _fuzz_by_name(functions: dict[str, object], candidates: dict[str, list[object]], anything: list[object],
                  seed: int, n_calls: int) -> tuple[Counter[str], list[str]]:
    """Generated calls whose arguments are drawn by parameter name: the outcomes, and the calls that raised
    something other than simcore's errors."""
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    wrong = []

    def value(parameter: str) -> object:
        """The first (good) candidate half the time, another candidate, or anything at all."""
        draw = rng.random()
        if parameter not in candidates or draw > 0.95:
            return rng.choice(anything)
        return candidates[parameter][0] if draw < 0.5 else rng.choice(candidates[parameter])

    for _ in range(n_calls):
        name = rng.choice(sorted(functions))
        parameters = list(inspect.signature(functions[name]).parameters.values())
        required = [p for p in parameters if p.default is p.empty]
        optional = [p for p in parameters if p.default is not p.empty]
        args = [value(p.name) for p in required]
        if rng.random() < 0.05:  # now and then one argument too few or too many: Python's own TypeError
            args = args[:-1] if rng.random() < 0.5 else [*args, None]
        kwargs = {p.name: value(p.name) for p in rng.sample(optional, rng.randint(0, len(optional)))}
        try:
            inspect.signature(functions[name]).bind(*args, **kwargs)
        except TypeError:
            continue
        try:
            functions[name](*args, **kwargs)
        except SimcoreError:
            outcomes["SimcoreError"] += 1
        except Exception as exc:  # noqa: BLE001
            outcomes[type(exc).__name__] += 1
            shown = ", ".join([*(type(a).__name__ for a in args), *(f"{k}={type(v).__name__}" for k, v in kwargs.items())])
            wrong.append(f"{name}({shown}): {type(exc).__name__}: {str(exc)[:150]}")
        else:
            outcomes[f"returned from {name.rsplit('.', 1)[1]}"] += 1
    print(f"\n{n_calls} calls over {', '.join(sorted(functions))}: {dict(outcomes)}")
    return outcomes, wrong


def test_functions_beyond_the_public_list_raise_only_simcores_errors(tmp_path):
    outcomes, wrong = _fuzz_by_name(BEYOND, _candidates(tmp_path), _pool(tmp_path), 20261124, N_BEYOND_CALLS)
    assert not wrong, f"{len(wrong)} calls raised something else, e.g.\n" + "\n".join(sorted(set(wrong))[:15])
    assert outcomes["SimcoreError"] > 500
    assert all(outcomes[f"returned from {n.rsplit('.', 1)[1]}"] > 0 for n in BEYOND), "some function never ran"


ANSWER = {f"simcore.{name}": getattr(simcore, name) for name in ("recommend", "recommendation_table", "pairwise_table")}
N_ANSWER_CALLS = 300


def test_the_answer_raises_only_simcores_errors_and_is_recommendations_own(tmp_path):
    """recommend, recommendation_table and pairwise_table in the public library: generated calls with
    values of about the right kind; on good input they give what simcore.answer.recommendation gives."""
    from simcore.answer import recommendation

    long = analysis.to_long(pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv"))
    target = sorted(long["target"].unique())[0]
    candidates = _candidates(tmp_path) | {"target": [target, "no such target", "", None, 3, ["x"]],
                                          "pretraining": ["lm", "vectors", "wv", "", None, ["lm"], 3]}
    outcomes, wrong = _fuzz_by_name(ANSWER, candidates, _pool(tmp_path), 20261125, N_ANSWER_CALLS)
    assert not wrong, f"{len(wrong)} calls raised something else, e.g.\n" + "\n".join(sorted(set(wrong))[:15])
    assert all(outcomes[f"returned from {n.rsplit('.', 1)[1]}"] > 0 for n in ANSWER), "some function never ran"
    assert outcomes["SimcoreError"] > 30
    for pretraining in ("lm", "vectors"):
        answers = simcore.recommend(long, pretraining)
        assert answers == recommendation.recommend(long, pretraining)
        pd.testing.assert_frame_equal(simcore.recommendation_table(answers),
                                      recommendation.recommendation_table(answers))
        pd.testing.assert_frame_equal(simcore.pairwise_table(long, target, pretraining),
                                      recommendation.pairwise_table(long, target, pretraining))


def _stored_scores(folder: Path, values: np.ndarray, lengths: np.ndarray | None, n: int | None = None) -> object:
    """A ScoreSet over hand-written score files (every fifth unit a duplicate of the target)."""
    folder.mkdir(parents=True)
    (folder / "scores.f64").write_bytes(values.astype(np.float64).tobytes())
    (folder / "dups.u8").write_bytes((np.arange(len(values)) % 5 == 4).astype(np.uint8).tobytes())
    if lengths is not None:
        (folder / "lens.u32").write_bytes(lengths.astype(np.uint32).tobytes())
    return selection.ScoreSet(folder, "ppl", False, len(values) if n is None else n)


def _choosing_candidates(tmp_path: Path) -> dict[str, list[object]]:
    """Candidates for choosing from stored scores: score sets over the 30-sentence pool of _candidates
    (whole, without lengths, with files shorter than they claim, gone, empty) and cut-offs on them."""
    candidates = _candidates(tmp_path)
    values = np.arange(30, dtype=np.float64)[::-1].copy()
    values[7] = np.nan
    lengths = np.arange(30) % 6 + 1
    good = _stored_scores(tmp_path / "s-good", values, lengths)
    scores = [good, _stored_scores(tmp_path / "s-old", values, None),
              _stored_scores(tmp_path / "s-short", values[:5], None, 30),
              selection.ScoreSet(tmp_path / "s-gone", "ppl", False, 30),
              selection.ScoreSet(tmp_path / "s-gone", "ppl", True, 0)]
    cutoffs = [selection.choose(good, top=5), selection.choose(good, fraction=0.5, min_tokens=3),
               selection.choose(good, top=40, keep_duplicates=True), selection.Cutoff(1.0, 45, 1, 1, 0, 0, 1)]
    counts = [3, 0, 1, -1, 30, 2**70, 1.5, float("nan"), True, np.int64(7), "3", None]
    return candidates | {
        "scores": scores, "cutoff": cutoffs, "n": [30, *counts], "start": [0, 10, 29, 30, 31, *counts],
        "stop": [30, 12, 0, 31, *counts], "chunk": [7, *counts], "in_memory": [4, *counts],
        "min_tokens": [1, 3, 6, 7, 0, 10_001, 2.5, True], "a": [np.array([1, 2, 3]), [2, 5], {4, 1}, [], *counts],
        "b": [[2, 3, 4], np.zeros((2, 2), dtype=int), [True], ["x"], np.array([0.5]), {}, *counts],
        "method": ["cosine", "xent", "bogus", "", None, 3],
        "path": [tmp_path / "s-good", str(tmp_path), "", "a\0b", 3, None],
        "higher_kept": [False, True, 1, None], "meta": [{}, None, [], {"n": 1}],
        "key": [0.5, float("nan"), -np.inf, "x", None],
        "n_kept": counts, "n_eligible": counts, "n_duplicates": counts, "n_unscored": counts, "k": counts,
        "n_short": counts,
    }


def test_selection_choosing_raises_only_simcores_errors(tmp_path):
    """choose, kept_indices, jaccard ... given real score sets and cut-offs, good and broken, and anything else."""
    outcomes, wrong = _fuzz_by_name(CHOOSING, _choosing_candidates(tmp_path), _pool(tmp_path), 20261125,
                                    N_CHOOSING_CALLS)
    assert not wrong, f"{len(wrong)} calls raised something else, e.g.\n" + "\n".join(sorted(set(wrong))[:15])
    assert outcomes["SimcoreError"] > 300
    assert all(outcomes[f"returned from {n.rsplit('.', 1)[1]}"] > 0 for n in CHOOSING), "some function never ran"


def test_the_readme_example_goes_from_folders_to_the_answer(tmp_path, monkeypatch, capsys):
    """The README's three lines, run as written on the bundled sample's two folders."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    code = readme.split("<!-- folders-to-answer -->\n```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) == 3
    for folder in ("sources", "targets"):
        (tmp_path / folder).symlink_to(SAMPLE_DATA / folder)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIMCORE_CACHE", str(tmp_path / "cache"))
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    sources = {p.name.split(".")[0] for p in (SAMPLE_DATA / "sources").iterdir()}
    targets = {p.name.split(".")[0] for p in (SAMPLE_DATA / "targets").iterdir()}
    long = namespace["long"]
    assert set(long["source"]) == sources and set(long["target"]) == targets and set(long["measure"]) == {"ppl", "jsd"}
    answers = simcore.recommend(long)
    assert {a.target for a in answers} == targets and all(set(a.recommended) <= sources for a in answers)
    assert all(a.recommended for a in answers)
    assert printed.splitlines() == [a.headline() for a in answers]
    assert "news_ner: pretrain on news; the measures agree: 100% of the votes (moderate)" in printed  # as the README says
