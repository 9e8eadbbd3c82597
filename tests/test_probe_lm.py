"""The LM probe at tiny budgets on a CPU: a real (tiny) BERT built here, nothing downloaded."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
seqeval_metrics = pytest.importorskip("seqeval.metrics")

from dashboard.work import FORM_NAMES  # noqa: E402
from simcore.cli.main import main  # noqa: E402
from simcore.matrix.corpus_cache import corpora_in  # noqa: E402
from simcore.matrix.workbench import Workbench  # noqa: E402
from simcore.probe.data import TargetSplits  # noqa: E402
from simcore.probe.lm import plan_lm_probe, probe_lm  # noqa: E402
from simcore.probe.lm_plan import Adaptation, LMPlan, PlanTooLong, Tagging  # noqa: E402
from simcore.probe.lm_train import LMCaps, adapt, blocks, encode, label_names, load_tokenizer, mask_batch, predict  # noqa: E402
from simcore.probe.run import BASELINE, COLUMNS  # noqa: E402
from simcore.probe.scoring import entity_score  # noqa: E402
from simcore.probe.summary import tie_summary  # noqa: E402
from simcore.utils.store import ArtefactStore  # noqa: E402

PEOPLE = ["anna", "boris", "carla", "hugo"]
PLACES = ["lisbon", "oslo", "quito", "perth"]
FILLER = ["visited", "left", "the", "stir", "onions", "until", "golden", "add", "salt", "fans", "cheered"]
TINY = LMCaps(lm_tokens=600, block=32, lm_batch=8, lm_rate=1e-3, epochs=2, batch=8, rate=1e-3,
              train_sentences=40, max_length=32)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT (random weights) and a WordPiece tokenizer from a vocab file written here."""
    out = tmp_path_factory.mktemp("tiny_bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *PEOPLE, *PLACES, *FILLER]
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = transformers.BertTokenizer(vocab=str(out / "vocab.txt"))
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.BertForMaskedLM(config).save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out


def _sentence(rng: random.Random) -> tuple[list[str], list[str]]:
    return ([rng.choice(PEOPLE).title(), "visited", rng.choice(PLACES).title(), "."], ["B-PER", "O", "B-LOC", "O"])


@pytest.fixture
def tiny_data(tmp_path: Path) -> dict[str, Path]:
    rng = random.Random(3)
    target = tmp_path / "targets" / "tiny_ner"
    target.mkdir(parents=True)
    for split, n in (("train", 40), ("test", 12)):
        text = "\n\n".join("\n".join(f"{t}\t{g}" for t, g in zip(*_sentence(rng))) for _ in range(n))
        (target / f"{split}.conll").write_text(text + "\n")
    sources = tmp_path / "sources"
    sources.mkdir()
    for name, words in {"people": PEOPLE + PLACES + ["visited"], "cooking": FILLER}.items():
        lines = [" ".join(rng.choice(words) for _ in range(10)) for _ in range(80)]
        (sources / f"{name}.txt").write_text("\n".join(lines) + "\n")
    return {"target": target, "sources": sources, "store": tmp_path / "store"}


# --- the trainings -------------------------------------------------------------------------------

def _masked_loss(model_dir: Path, table: np.ndarray, tokenizer) -> float:
    """Cross-entropy at fixed masked positions, computed here from the logits (not the model's .loss)."""
    model = transformers.AutoModelForMaskedLM.from_pretrained(str(model_dir), local_files_only=True).eval()
    ids = torch.from_numpy(table)
    inputs, labels = mask_batch(torch, ids, tokenizer, torch.Generator().manual_seed(99))
    with torch.no_grad():
        logits = model(input_ids=inputs).logits
    chosen = labels != -100
    log_probs = torch.log_softmax(logits[chosen], dim=-1)
    return float(-log_probs[torch.arange(int(chosen.sum())), labels[chosen]].mean())


def test_masked_lm_loss_falls_on_a_repeated_corpus(tiny_bert: Path, tmp_path: Path) -> None:
    tokenizer = load_tokenizer(tiny_bert)
    corpus = [["anna", "visited", "lisbon", "."], ["stir", "the", "onions", "until", "golden", "."]] * 800
    table = blocks(tokenizer, corpus, 32)
    # by hand: sentence pieces plus [SEP]: (4 + 1) + (6 + 1) = 12 per pair, cut into rows of 31 after [CLS]
    assert table.shape == ((800 * 12) // 31, 32) and (table[:, 0] == tokenizer.cls_token_id).all()
    assert list(table[0, 1:6]) == tokenizer.convert_tokens_to_ids(["anna", "visited", "lisbon", ".", "[SEP]"])
    before = _masked_loss(tiny_bert, table[:16], tokenizer)
    result = adapt(tiny_bert, table, tmp_path / "adapted", replace(TINY, lm_batch=8, lm_rate=3e-3))
    after = _masked_loss(tmp_path / "adapted", table[:16], tokenizer)
    assert result.steps == -(-len(table) // 8) and np.isfinite(result.losses).all()
    assert after < before - 0.5, (before, after)
    assert np.mean(result.losses[-3:]) < np.mean(result.losses[:3])


def test_masking_follows_bert(tiny_bert: Path) -> None:
    tokenizer = load_tokenizer(tiny_bert)
    ids = torch.full((200, 32), tokenizer.convert_tokens_to_ids("anna"))
    ids[:, 0] = tokenizer.cls_token_id
    inputs, labels = mask_batch(torch, ids, tokenizer, torch.Generator().manual_seed(0))
    chosen = labels != -100
    assert not chosen[:, 0].any()  # [CLS] is never predicted
    assert abs(float(chosen[:, 1:].float().mean()) - 0.15) < 0.02
    assert abs(float((inputs[chosen] == tokenizer.mask_token_id).float().mean()) - 0.8) < 0.05
    assert (labels[chosen] == ids[chosen]).all()


def test_first_subword_labels_and_prediction_scored_like_seqeval(tiny_bert: Path) -> None:
    tokenizer = load_tokenizer(tiny_bert)
    sentences = [(["Anna", "zzz", "Oslo"], ["B-PER", "I-PER", "B-LOC"]), (["Boris", "left"], ["I-PER", "O"])]
    labels = label_names(sentences)
    assert labels == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    data = encode(tokenizer, sentences, labels, 32)
    # [CLS] Anna zzz Oslo [SEP]: "zzz" is one [UNK] piece; IOB1 "I-PER" alone starts a chunk, written B-PER
    assert data.labels == [[-100, 3, 4, 1, -100], [-100, 3, 0, -100]]
    model = transformers.AutoModelForTokenClassification.from_pretrained(
        str(tiny_bert), local_files_only=True, num_labels=len(labels))
    predicted = predict(model, tokenizer, sentences, labels, TINY, "cpu")
    gold = [tags for _, tags in sentences]
    assert [len(p) for p in predicted] == [3, 2] and all(t in labels for p in predicted for t in p)
    expected = seqeval_metrics.f1_score(gold, predicted, zero_division=0)
    assert entity_score(gold, predicted).f1 == pytest.approx(100 * expected)


# --- the plan --------------------------------------------------------------------------------------

def _plan(**changes) -> LMPlan:
    plan = LMPlan("cpu", "m", 1000, [Adaptation("a", 20_000, False), Adaptation("b", 10_000, True)],
                  [Tagging("t", 6, 2, 3_000, 900)], epochs=2, lm_rate=100.0, tagging_rate=300.0)
    for k, v in changes.items():
        setattr(plan, k, v)
    return plan


def test_plan_arithmetic_by_hand() -> None:
    plan = _plan()
    # masked LM: 20,000 unstored pieces / 100 per s = 200 s; tagging: 4 runs x (2 x 3,000 + 900 / 3) / 300 = 84 s
    assert plan.lm_pieces == 20_000 and plan.tagging_pieces == pytest.approx(4 * 6_300)
    assert plan.seconds == pytest.approx(284.0)
    assert "estimated time: 5 min" in plan.describe()  # 284 s = 4.7 min, rounded
    plan.check(5, force=False)
    with pytest.raises(PlanTooLong, match="limit 4 min.*--force"):
        plan.check(4, force=False)
    plan.check(4, force=True)
    with pytest.raises(PlanTooLong) as refused:
        plan.check(4, force=False, names=FORM_NAMES)
    # the dashboard's refusal names its form's fields, as the NER probe page labels them, and no flag
    assert "--" not in str(refused.value)
    page = (Path(__file__).resolve().parent.parent / "pages" / "9_NER_probe.py").read_text(encoding="utf-8")
    for quoted in re.findall("“([^”]+)”", str(refused.value)):
        assert f'"{quoted}' in page, quoted
    assert len(re.findall("“", str(refused.value))) == 5
    done = _plan(adaptations=[Adaptation("a", 20_000, True)], tagging=[Tagging("t", 6, 6, 3_000, 900)])
    assert done.seconds == 0.0


# --- the probe: stored, resumable, refused -------------------------------------------------------------

def test_probe_rows_resume_and_refusal(tiny_bert: Path, tiny_data: dict[str, Path],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    sources = corpora_in(str(tiny_data["sources"]))
    target = TargetSplits.from_directory(tiny_data["target"])
    bench = Workbench(ArtefactStore(tiny_data["store"]))
    with pytest.raises(PlanTooLong):
        probe_lm(sources, [target], workbench=bench, caps=TINY, seeds=[0, 1], model=str(tiny_bert),
                 max_minutes=1e-6)
    runs: list[dict] = []
    table = probe_lm(sources, [target], workbench=bench, caps=TINY, seeds=[0, 1], model=str(tiny_bert),
                     max_minutes=1e-6, force=True, on_run=runs.append)
    assert list(table.columns) == COLUMNS and sorted(table["source"]) == ["cooking", "people"]
    assert len(runs) == 6 and {r["source"] for r in runs} == {BASELINE, "cooking", "people"}
    for _, row in table.iterrows():
        f1s = [r["f1"] for r in runs if r["source"] == row["source"]]
        base = [r["f1"] for r in runs if r["source"] == BASELINE]
        assert row["f1"] == pytest.approx(np.mean(f1s)) and row["f1_std"] == pytest.approx(np.std(f1s, ddof=1))
        assert row["improvement"] == pytest.approx(np.mean(f1s) - np.mean(base))
        assert row["caps"].startswith("kind=lm;model=tiny_bert") and row["seeds"] == 2
    assert table.attrs["kind"] == "lm"
    # a second probe trains nothing: every adaptation and run is read back (and the plan says 0 s)
    import simcore.probe.lm as lm

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(lm, "adapt", no_training)
    monkeypatch.setattr(lm, "finetune_and_score", no_training)
    planned = plan_lm_probe(sources, [target], workbench=Workbench(ArtefactStore(tiny_data["store"])), caps=TINY,
                            seeds=[0, 1], model=str(tiny_bert))
    assert planned.plan.seconds == 0.0 and all(a.stored for a in planned.plan.adaptations)
    again = planned.run()
    pd.testing.assert_frame_equal(again, table)


def test_tie_summary_by_hand() -> None:
    table = pd.DataFrame({"target": ["t", "t", "t"], "source": ["a", "b", "c"], "f1": [80.0, 79.0, 70.0],
                          "f1_std": [1.5, 0.5, 1.0], "baseline": [78.0] * 3, "baseline_std": [1.0] * 3,
                          "seeds": [3] * 3})
    (line,) = tie_summary(table)
    # a-b differ by 1.0 < max(1.5, 0.5): a tie; a-c by 10; a beats the baseline by 2.0 >= 1.5
    assert "best a" in line and "tied with it within the seed spread: b 79.00" in line and "c 70" not in line
    assert "above the baseline" in line
    one_seed = table.assign(f1_std=float("nan"))
    assert "one seed" in tie_summary(one_seed)[0]
    # equal F1s with no spread over the seeds (every run F1 0, as a CPU budget too small to learn gives):
    # a tie with each other and with the baseline, never "above" it
    flat = pd.DataFrame({"target": ["t", "t"], "source": ["a", "b"], "f1": [0.0, 0.0], "f1_std": [0.0, 0.0],
                         "baseline": [0.0, 0.0], "baseline_std": [0.0, 0.0], "seeds": [3, 3]})
    (line,) = tie_summary(flat)
    assert "tied with it within the seed spread: b 0.00" in line and "a tie with the baseline" in line


# --- the CLI -----------------------------------------------------------------------------------------

def test_cli_lm_refuses_then_forces_then_reads_back(tiny_bert: Path, tiny_data: dict[str, Path],
                                                    tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["probe", "--kind", "lm", "--model", str(tiny_bert), "--sources", str(tiny_data["sources"]),
            "--target", str(tiny_data["target"]), "--lm-tokens", "600", "--max-train-sentences", "40",
            "--max-epochs", "1", "--seeds", "2", "--cache", str(tiny_data["store"]), "--quiet"]
    assert main([*args, "--out", str(tmp_path / "a.csv"), "--max-minutes", "0.00001"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("simcore: error: the LM probe would take about") and "--force" in err[0]
    assert not (tmp_path / "a.csv").exists()
    assert main([*args, "--out", str(tmp_path / "a.csv"), "--max-minutes", "0.00001", "--force"]) == 0
    first = pd.read_csv(tmp_path / "a.csv")
    assert list(first.columns) == COLUMNS and set(first["source"]) == {"cooking", "people"}
    capsys.readouterr()
    # everything is stored now: the plan is 0 s, under any limit
    assert main([*args, "--out", str(tmp_path / "b.csv"), "--max-minutes", "0.00001"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "b.csv"), first)


@pytest.mark.parametrize("extra, message", [
    (["--lm-tokens", "0"], "--lm-tokens"),
    (["--max-minutes", "-1"], "--max-minutes"),
    (["--kind", "gpt"], "--kind"),
    (["--model", "/no/such/dir"], "not a directory"),
])
def test_cli_lm_one_line_errors(tiny_data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture,
                                extra: list[str], message: str) -> None:
    args = ["probe", "--kind", "lm", "--sources", str(tiny_data["sources"]), "--target", str(tiny_data["target"]),
            "--out", str(tmp_path / "x.csv"), "--cache", str(tiny_data["store"]), "--quiet", *extra]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("simcore: error:") and message in err[0]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")
def test_gpu_path_trains_and_scores(tiny_bert: Path, tmp_path: Path) -> None:
    from simcore.probe.lm_train import device, finetune_and_score

    assert device() == "cuda"
    tokenizer = load_tokenizer(tiny_bert)
    table = blocks(tokenizer, [["anna", "visited", "lisbon", "."]] * 100, 32)
    result = adapt(tiny_bert, table, tmp_path / "gpu", TINY)
    assert np.isfinite(result.losses).all()
    rng = random.Random(1)
    train = [_sentence(rng) for _ in range(40)]
    scored = finetune_and_score(tmp_path / "gpu", train, train[:10], 0, TINY)
    assert 0.0 <= scored.f1 <= 100.0


def test_a_second_plan_reads_the_paces_the_first_measured(tiny_bert: Path, tiny_data: dict[str, Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: each plan timed the training again (73 s for the plan, another minute for its refusal, and the
    two disagreed). The first plan stores the paces it measures; the second reads them: it times nothing and
    gives the same estimate."""
    import simcore.probe.lm as lm

    sources = corpora_in(str(tiny_data["sources"]))
    target = TargetSplits.from_directory(tiny_data["target"])
    store = tiny_data["store"].parent / "paces-store"
    first = plan_lm_probe(sources, [target], workbench=Workbench(ArtefactStore(store)), caps=TINY, seeds=[0],
                          model=str(tiny_bert)).plan
    assert first.seconds > 0
    timed: list[str] = []
    monkeypatch.setattr(lm, "adapt", lambda *a, **k: timed.append("adapt"))
    monkeypatch.setattr(lm, "finetune_and_score", lambda *a, **k: timed.append("finetune"))
    second = plan_lm_probe(sources, [target], workbench=Workbench(ArtefactStore(store)), caps=TINY, seeds=[0],
                           model=str(tiny_bert)).plan
    assert timed == []
    assert second.lm_rate == pytest.approx(first.lm_rate) and second.tagging_rate == pytest.approx(first.tagging_rate)
    assert second.seconds == pytest.approx(first.seconds)
