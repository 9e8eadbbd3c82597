"""Sentence selection on small corpora whose right answer is known by construction."""

from __future__ import annotations

import csv
import gzip
import itertools
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest

from simcore.cli import main
from simcore.corpus import Corpus
from simcore.errors import SimcoreError
from simcore.kenlm_tools import find_program
from simcore.selection import (
    ScoreSet,
    SelectionOptions,
    choose,
    count_to_keep,
    jaccard,
    kept_indices,
    score_pool,
    select,
)
from simcore.tokenize import tokenize

# --------------------------------------------------------------------------- constructed corpora
# Two registers with no content word in common: lab biology (passive, technical) and football
# reports (past tense, names). A target in one register must pull that register out of the pool.

GENES = ["BRCA1", "TP53", "MYC", "KRAS", "EGFR", "PTEN", "SOX2", "PAX6", "NOTCH1", "WNT3"]
CELLS = ["HeLa", "fibroblast", "epithelial", "neuronal", "stem", "tumour", "hepatic", "muscle"]
DRUGS = ["cisplatin", "olaparib", "rapamycin", "tamoxifen", "metformin", "imatinib"]
BIO = [
    "Expression of {g} was markedly increased in {c} cells treated with {d} .",
    "Knockdown of {g} reduced proliferation of {c} cells exposed to {d} .",
    "The {g} protein was detected by western blot in {c} cell lysates after {d} treatment .",
    "Mutations in {g} were associated with resistance to {d} in {c} cultures .",
]
TEAMS = ["Rovers", "United", "Athletic", "Wanderers", "Rangers", "Albion", "County", "Villa"]
PLAYERS = ["Hughes", "Okafor", "Martins", "Kowalski", "Duarte", "Lindqvist", "Mbeki", "Fraser"]
DAYS = ["Saturday", "Sunday", "Tuesday", "Wednesday"]
SPORT = [
    "{p} scored twice as {t} beat {u} on {day} to climb the table .",
    "{t} manager said on {day} that {p} would miss the match against {u} .",
    "A late goal from {p} earned {t} a draw with {u} on {day} .",
    "{u} sacked their coach on {day} after a heavy defeat by {t} .",
]
CHAT = [
    "honestly the {x} was pretty good but way too expensive lol",
    "cant believe how long the line for {x} was today ugh",
    "my {x} broke again and customer service was useless",
    "love this {x} so much , would buy again for sure",
]
THINGS = ["coffee", "blender", "pizza", "headphones", "burger", "laptop", "sandwich", "charger", "tacos", "kettle"]


def biology(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(BIO).format(g=rng.choice(GENES), c=rng.choice(CELLS), d=rng.choice(DRUGS)) for _ in range(n)]


def football(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        t, u = rng.sample(TEAMS, 2)
        out.append(rng.choice(SPORT).format(p=rng.choice(PLAYERS), t=t, u=u, day=rng.choice(DAYS)))
    return out


def chat(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(CHAT).format(x=rng.choice(THINGS)) for _ in range(n)]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_conll(path: Path, lines: list[str]) -> Path:
    path.write_text("\n\n".join("\n".join(f"{t}\tO" for t in line.split()) for line in lines) + "\n",
                    encoding="utf-8")
    return path


def mixed_pool(tmp_path: Path, first: list[str], second: list[str]) -> tuple[Path, np.ndarray]:
    """Pool alternating the two lists; the returned mask marks units from ``first``."""
    lines, origin = [], []
    for a, b in itertools.zip_longest(first, second):
        for text, is_first in ((a, True), (b, False)):
            if text is not None:
                lines.append(text)
                origin.append(is_first)
    return write_lines(tmp_path / "pool.txt", lines), np.asarray(origin)


FAST = {"pool_sample": 1000, "epochs": 20, "dims": 30, "min_count": 1, "workers": 1, "batch": 37}


def options(method: str, **extra) -> SelectionOptions:
    return SelectionOptions(method=method, **(FAST | extra))


@pytest.fixture
def bio_target(tmp_path: Path) -> Path:
    return write_conll(tmp_path / "target.conll", biology(80, seed=1))


# --------------------------------------------------------------------------- methods pick the register

@pytest.mark.parametrize("method", ["cosine", "ppl", "xent"])
def test_method_picks_the_target_register(tmp_path, store, bio_target, method):
    pool, is_bio = mixed_pool(tmp_path, biology(60, seed=2), football(60, seed=3))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options(method), store)
    kept = kept_indices(scores, choose(scores, top=40))
    assert len(kept) == 40
    assert is_bio[kept].mean() >= 0.9, f"{method} kept {is_bio[kept].mean():.0%} biology"


def test_entities_picks_entity_rich_register(tmp_path, store):
    """The bundled English NER finds people, teams and days in football reports, none in chat."""
    pool, is_sport = mixed_pool(tmp_path, football(40, seed=4), chat(40, seed=5))
    target = write_conll(tmp_path / "target.conll", football(60, seed=6))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(target), options("entities"), store)
    kept = kept_indices(scores, choose(scores, top=30))
    assert is_sport[kept].mean() >= 0.9
    assert scores.meta["details"]["labels"], "the target's entity types are reported"


def test_user_pipeline_counts_its_entities(tmp_path, store):
    """A pipeline directory with an entity ruler: each sentence's score is its number of matches."""
    import spacy

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "GENE", "pattern": g} for g in GENES] + [{"label": "DRUG", "pattern": d} for d in DRUGS])
    nlp.to_disk(tmp_path / "pipeline")
    pool = write_lines(tmp_path / "pool.txt", [
        "BRCA1 and TP53 were both silenced by cisplatin .",   # 3
        "nothing to see here .",                             # 0
        "EGFR signalling .",                                 # 1
        "olaparib , rapamycin and MYC .",                    # 3
    ])
    target = write_lines(tmp_path / "target.txt", biology(20, seed=7))
    opts = options("entities", pipeline=str(tmp_path / "pipeline"), entity_labels="all")
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(target), opts, store)
    assert list(scores.scores()) == [3, 0, 1, 3]
    only_genes = score_pool(Corpus.from_path(pool), Corpus.from_path(target),
                            options("entities", pipeline=str(tmp_path / "pipeline"), entity_labels="GENE"), store)
    assert list(only_genes.scores()) == [2, 0, 1, 1]


def test_ppl_matches_kenlm_query_program(tmp_path, store, bio_target):
    pool, _ = mixed_pool(tmp_path, biology(5, seed=8), football(5, seed=9))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    models = list((store.root / "selection-kenlm").glob("*/model.bin"))
    assert len(models) == 1
    sentence = pool.read_text().splitlines()[1]   # a football sentence: OOV words included
    tokens = tokenize(sentence)
    result = subprocess.run([str(find_program("query")), "-v", "sentence", str(models[0])],
                            input=" ".join(tokens) + "\n", capture_output=True, text=True, check=True)
    total = float(next(line for line in result.stdout.splitlines() if line.startswith("Total:")).split()[1])
    assert scores.scores()[1] == pytest.approx(10 ** (-total / (len(tokens) + 1)), rel=1e-5)


# --------------------------------------------------------------------------- duplicates, counts, outputs

def test_duplicates_of_target_are_flagged_and_excluded(tmp_path, store, bio_target):
    target_lines = [line.replace("\t", " ") for line in bio_target.read_text().split("\n\n")]
    copies = [" ".join(t.split()[0] for t in block.splitlines()).upper() for block in target_lines[:5]]
    pool_lines = biology(20, seed=10) + copies + football(20, seed=11)
    pool = write_lines(tmp_path / "pool.txt", pool_lines)
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    flagged = np.flatnonzero(scores.duplicates())
    assert flagged.tolist() == list(range(20, 25))
    # The copies are among the best-scored sentences, yet never kept by default ...
    kept = kept_indices(scores, choose(scores, top=10))
    assert not set(kept) & set(range(20, 25))
    # ... unless asked for.
    kept_all = kept_indices(scores, choose(scores, top=25, keep_duplicates=True), keep_duplicates=True)
    assert set(range(20, 25)) <= set(kept_all)


def test_top_and_fraction_counts(tmp_path, store, bio_target):
    pool, _ = mixed_pool(tmp_path, biology(50, seed=12), football(70, seed=13))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("xent"), store)
    assert choose(scores, top=17).n_kept == 17
    assert choose(scores, fraction=0.25).n_kept == 30          # 25% of 120
    dups = int(scores.duplicates().sum())                      # templates can repeat a target sentence
    assert choose(scores, fraction=1.0).n_kept == 120 - dups
    assert choose(scores, fraction=1.0, keep_duplicates=True).n_kept == 120
    assert choose(scores, top=500).n_kept == 120 - dups        # more than the pool: all of it
    assert count_to_keep(120, fraction=0.001) == 1


def test_outputs_and_formula_escaping(tmp_path, store, bio_target):
    bio, sport = biology(10, seed=14), football(10, seed=15)
    pool_lines = bio[:5] + ["=HYPERLINK(\"http://x\") Expression of TP53 was increased ."] + sport + bio[5:]
    pool = write_lines(tmp_path / "pool.txt", pool_lines)
    out, table = tmp_path / "SELECTED.txt.gz", tmp_path / "SCORES.csv"
    result = select(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store_for(tmp_path),
                    fraction=0.5, out=out, scores_csv=table)
    with gzip.open(out, "rt", encoding="utf-8") as f:
        selected = f.read().splitlines()
    assert len(selected) == result.cutoff.n_kept == 11
    positions = [pool_lines.index(s) for s in selected]
    assert positions == sorted(positions), "kept sentences stay in pool order, as original text"
    with open(table, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["index"]) for r in rows] == list(range(len(pool_lines)))
    assert sum(r["kept"] == "True" for r in rows) == 11
    assert {r["text"] for r in rows if r["kept"] == "True"} <= {("'" + s if s.startswith("=") else s) for s in selected}
    assert rows[5]["text"].startswith("'=HYPERLINK"), "a formula is escaped in the CSV"
    assert float(rows[0]["score"]) == pytest.approx(result.scores.scores()[0], rel=1e-6)
    assert "kept 11 of 21" in result.summary()


def store_for(tmp_path: Path):
    from simcore.store import ArtefactStore

    return ArtefactStore(tmp_path / "store2")


def test_scores_are_cached_and_reused(tmp_path, store, bio_target, monkeypatch):
    pool, _ = mixed_pool(tmp_path, biology(10, seed=16), football(10, seed=17))
    first = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    import simcore.selection_methods as methods

    monkeypatch.setattr(methods, "make_scorer", lambda *a, **k: pytest.fail("scored again"))
    second = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    assert second.path == first.path
    assert np.array_equal(second.scores(), first.scores())


# --------------------------------------------------------------------------- bounded-memory cut-off

def fake_scores(tmp_path: Path, values: np.ndarray, dups: np.ndarray, higher_kept: bool) -> ScoreSet:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "scores.f64").write_bytes(values.astype(np.float64).tobytes())
    (tmp_path / "dups.u8").write_bytes(dups.astype(np.uint8).tobytes())
    return ScoreSet(tmp_path, "test", higher_kept, len(values))


def brute_force(values: np.ndarray, dups: np.ndarray, higher_kept: bool, k: int, keep_duplicates: bool) -> set[int]:
    keys = -values if higher_kept else values
    ok = np.isfinite(keys) & (keep_duplicates | (dups == 0))
    index = np.flatnonzero(ok)
    order = np.lexsort((index, keys[index]))
    return set(index[order[:k]].tolist())


@pytest.mark.parametrize("kind", ["floats", "ties"])
@pytest.mark.parametrize("higher_kept", [True, False])
def test_heap_and_histogram_cutoffs_agree_with_sorting(tmp_path, kind, higher_kept):
    rng = np.random.default_rng(3)
    n = 5000
    values = rng.normal(size=n) if kind == "floats" else rng.integers(0, 4, size=n).astype(float)
    values[rng.choice(n, 50, replace=False)] = np.nan
    values[:100] = values[0] if kind == "floats" else values[:100]   # a block of equal values
    dups = (rng.random(n) < 0.05).astype(np.uint8)
    scores = fake_scores(tmp_path / "s", values, dups, higher_kept)
    for k in (1, 7, 500, 2400, 10_000):
        for keep_duplicates in (False, True):
            expected = brute_force(values, dups, higher_kept, k, keep_duplicates)
            # chunk and in-memory limits far below n force the streaming, refining paths
            by_heap = choose(scores, top=k, keep_duplicates=keep_duplicates, chunk=333)
            by_file = choose(scores, fraction=min(1.0, k / n), keep_duplicates=keep_duplicates, chunk=333,
                             in_memory=40)
            assert set(kept_indices(scores, by_heap, keep_duplicates).tolist()) == expected
            if by_file.k == k:
                assert set(kept_indices(scores, by_file, keep_duplicates).tolist()) == expected


def test_jaccard():
    assert jaccard(np.array([1, 2, 3]), np.array([2, 3, 4])) == pytest.approx(0.5)
    assert jaccard(np.array([1]), np.array([1])) == 1.0


# --------------------------------------------------------------------------- bad input

def test_bad_inputs_raise_simcore_errors(tmp_path, store, bio_target):
    pool = write_lines(tmp_path / "pool.txt", biology(10, seed=18))
    target = Corpus.from_path(bio_target)
    with pytest.raises(SimcoreError, match="unknown selection method"):
        SelectionOptions(method="bm25")
    with pytest.raises(SimcoreError, match="at least 1"):
        SelectionOptions(method="ppl", order=0)
    with pytest.raises(SimcoreError, match="fraction"):
        count_to_keep(10, fraction=0)
    with pytest.raises(SimcoreError, match="give 0.1"):
        count_to_keep(10, fraction=10)
    with pytest.raises(SimcoreError, match="top K"):
        count_to_keep(10, top=0)
    with pytest.raises(SimcoreError, match="either"):
        count_to_keep(10, top=3, fraction=0.5)
    with pytest.raises(SimcoreError, match="does not exist"):
        Corpus.from_path(tmp_path / "missing.txt")
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(SimcoreError, match="empty"):
        Corpus.from_path(tmp_path / "empty.txt")
    with pytest.raises(SimcoreError, match="not a spaCy pipeline directory"):
        score_pool(Corpus.from_path(pool), target, options("entities", pipeline=str(tmp_path)), store)
    with pytest.raises(SimcoreError, match="no entity label NOPE"):
        score_pool(Corpus.from_path(pool), target, options("entities", entity_labels="NOPE"), store)


def test_pipeline_without_ner_is_refused(tmp_path, store, bio_target):
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "no_ner")
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=19))
    with pytest.raises(SimcoreError, match="has no NER component"):
        score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target),
                   options("entities", pipeline=str(tmp_path / "no_ner")), store)


def test_encoder_without_sentence_transformers_explains(tmp_path, store, bio_target):
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sentence-transformers is installed here")
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=20))
    with pytest.raises(SimcoreError, match="pip install sentence-transformers"):
        score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target),
                   options("cosine", encoder=str(tmp_path)), store)


# --------------------------------------------------------------------------- command line

def test_cli_select_writes_outputs(tmp_path, bio_target, capsys):
    pool, is_bio = mixed_pool(tmp_path, biology(30, seed=21), football(30, seed=22))
    out, table = tmp_path / "SELECTED.txt.gz", tmp_path / "SCORES.csv"
    code = main(["select", "--pool", str(pool), "--target", str(bio_target), "--method", "xent",
                 "--fraction", "25%", "--out", str(out), "--scores", str(table), "--cache", str(tmp_path / "c"),
                 "--quiet"])
    assert code == 0
    with gzip.open(out, "rt", encoding="utf-8") as f:
        selected = f.read().splitlines()
    assert len(selected) == 15
    bio_lines = set(pool.read_text().splitlines()) - set(football(30, seed=22))
    assert sum(s in bio_lines for s in selected) >= 14
    assert "wrote 15 sentences" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--method", "ppl", "--top", "5", "--pool", "MISSING"], "does not exist"),
    (["--method", "ppl", "--top", "5", "--pipeline", "x"], "only used by --method entities"),
    (["--method", "ppl", "--top", "5", "--out", "OUT.json"], ".txt.gz"),
    (["--method", "entities", "--top", "5", "--pipeline", "NOTADIR"], "not a spaCy pipeline directory"),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, bio_target, capsys, argv, message):
    pool = write_lines(tmp_path / "pool.txt", biology(10, seed=23))
    base = {"--pool": str(pool), "--target": str(bio_target), "--out": str(tmp_path / "o.txt.gz")}
    args = dict(zip(argv[::2], argv[1::2]))
    for flag in ("--pool", "--out", "--pipeline"):
        if args.get(flag) in ("MISSING", "NOTADIR"):
            args[flag] = str(tmp_path / args[flag])
    full = ["select", "--cache", str(tmp_path / "c"), "--quiet"]
    for flag, value in (base | args).items():
        full += [flag, value]
    assert main(full) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("amount", [["--fraction", "1.5"], ["--fraction", "0"], ["--top", "0"], ["--top", "x"]])
def test_cli_bad_amount_is_a_usage_error(tmp_path, bio_target, capsys, amount):
    code = main(["select", "--pool", str(bio_target), "--target", str(bio_target), "--method", "ppl", *amount,
                 "--out", str(tmp_path / "o.txt.gz")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.startswith("simcore: error: select: argument")


# --------------------------------------------------------------------------- real corpora

@pytest.mark.shared_data
def test_xent_on_real_corpora_prefers_medline_for_craft(tmp_path, store, shared_data):
    rng = random.Random(5)
    found = {}
    for name in ("biomed_ohsumed_medline", "news_1bwb", "reviews_yelp"):
        with gzip.open(shared_data / "sources" / f"{name}.txt.gz", "rt", encoding="utf-8") as f:
            lines = [line.strip() for line in itertools.islice(f, 20_000) if len(line.split()) >= 5]
        found[name] = rng.sample(lines, 300)
    pool_lines = found["biomed_ohsumed_medline"] + found["news_1bwb"] + found["reviews_yelp"]
    order = list(range(len(pool_lines)))
    rng.shuffle(order)
    pool = write_lines(tmp_path / "pool.txt", [pool_lines[i] for i in order])
    is_medline = np.asarray([i < 300 for i in order])
    target = Corpus.from_path(shared_data / "targets" / "craft" / "dev.conll")
    scores = score_pool(Corpus.from_path(pool), target, SelectionOptions(method="xent", target_tokens=30_000), store)
    kept = kept_indices(scores, choose(scores, fraction=0.2))
    assert is_medline[kept].mean() >= 0.6   # base rate 1/3
