import math
import threading

import pandas as pd
import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.workbench import Workbench
from simcore.utils.errors import SimcoreError

from .conftest import SAMPLE_DATA


def test_sample_matrix_shows_tenor_over_field(store):
    """The bundled demo makes the paper's point: for forum posts about medications, informal
    sources beat clinical notes that share the subject."""
    bench = Workbench(store)
    sources = corpora_in(SAMPLE_DATA / "sources")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "med_forum_posts.conll")
    table = bench.matrix(sources, [target], ["ppl", "jsd", "tvc", "ttr"])
    assert table["error"].isna().all()
    value = table.set_index(["source", "measure"])["value"]
    for informal in ("product_reviews", "tweets"):
        assert value[(informal, "ppl")] < value[("clinical_notes", "ppl")]
        assert value[(informal, "jsd")] < value[("clinical_notes", "jsd")]
    for _, rows in table.groupby("measure"):
        sampled, whole = rows[~rows["used_whole"]], rows[rows["used_whole"]]
        assert sampled["sample_tokens"].nunique() <= 1, "sources are compared at the same size"
        assert (whole["sample_tokens"] == whole["source_tokens"]).all()
        assert whole["flag"].str.contains("used whole").all(), "a source smaller than the size is flagged"


def test_cells_are_stored_and_new_targets_score_only_new_cells(tmp_path, store):
    bench = Workbench(store)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    first = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    second = Corpus.from_path(SAMPLE_DATA / "targets" / "lab_protocol_ner.conll")
    bench.matrix([source], [first], ["tvc", "jsd"])
    cells_before = len(list((store.root / "cell").iterdir()))
    again = Workbench(store).matrix([source], [first, second], ["tvc", "jsd"])
    assert len(list((store.root / "cell").iterdir())) == cells_before + 2
    assert len(again) == 4


def test_samples_give_a_standard_deviation(store):
    bench = Workbench(store)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    table = bench.matrix([source], [target], ["tvc"], samples=3, sample_tokens=3000)
    row = table.iloc[0]
    assert row["n_samples"] == 3 and row["std"] > 0 and 3000 <= row["sample_tokens"] < 3200


def test_a_failing_measure_is_reported_and_the_others_still_run(tmp_path, store, monkeypatch):
    monkeypatch.setenv("SIMCORE_KENLM_BIN", str(tmp_path / "nowhere"))
    monkeypatch.setattr("simcore.models.kenlm_tools._PROJECT_BIN", tmp_path / "nowhere")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    bench = Workbench(store)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    table = bench.matrix([source], [target], ["ppl", "tvc"]).set_index("measure")
    assert math.isnan(table.loc["ppl", "value"]) and "lmplz" in table.loc["ppl", "error"]
    assert table.loc["tvc", "value"] > 0


def test_bad_requests(tmp_path, store):
    with pytest.raises(SimcoreError, match="not a directory"):
        corpora_in(tmp_path / "none")
    with pytest.raises(SimcoreError, match="unknown measure"):
        Workbench(store).matrix([Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")],
                                [Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")], "tvc,nope")


def test_target_tagging_runs_in_another_process_and_gives_the_same_tvcc(tmp_path, monkeypatch):
    import os

    from simcore.measures.lookup import get_measure
    from simcore.measures.tvcc import BACKGROUND_MIN_TOKENS
    from simcore.utils.store import ArtefactStore

    text = "".join((SAMPLE_DATA / "targets" / name).read_text()
                   for name in ("news_ner.conll", "lab_protocol_ner.conll", "med_forum_posts.conll"))
    big = tmp_path / "big.conll"
    big.write_text("\n".join([text] * 3))
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    source, target = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt"), Corpus.from_path(big)
    table = Workbench(ArtefactStore(tmp_path / "a")).matrix([source], [target], ["tvc", "tvcc"])
    assert Workbench(ArtefactStore(tmp_path / "a")).tokenize(target).n_tokens >= BACKGROUND_MIN_TOKENS
    taggers = [line.split()[2] for line in log.read_text().splitlines() if line.startswith("content-words")]
    assert taggers and taggers[0] != str(os.getpid()), "tagged by the background process"
    bench = Workbench(ArtefactStore(tmp_path / "b"))
    direct = get_measure("tvcc").score(bench.source(source, 10**9, 1)[0], bench.target(target)).value
    assert table.set_index("measure").loc["tvcc", "value"] == pytest.approx(direct)
    assert list(table["measure"]) == ["tvc", "tvcc"], "rows keep the requested order"


def test_a_large_target_is_tagged_by_two_processes_with_the_same_tvcc(tmp_path, monkeypatch):
    """Issue 37: a new target waited for one process to tag it while the other core idled. With jobs=2 a
    target over BACKGROUND_SPLIT_TOKENS is tagged in parts by two processes; TVcC is the one process's."""
    import os

    from simcore.matrix.schedule import BACKGROUND_SPLIT_TOKENS
    from simcore.measures.lookup import get_measure
    from simcore.utils.store import ArtefactStore

    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the tagging runs in this process")
    text = "".join((SAMPLE_DATA / "targets" / name).read_text()
                   for name in ("news_ner.conll", "lab_protocol_ner.conll", "med_forum_posts.conll"))
    big = tmp_path / "big.conll"
    big.write_text("\n".join([text] * 5))
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    source, target = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt"), Corpus.from_path(big)
    table = Workbench(ArtefactStore(tmp_path / "a")).matrix([source], [target], ["tvc", "tvcc"], jobs=2)
    assert Workbench(ArtefactStore(tmp_path / "a")).tokenize(target).n_tokens >= BACKGROUND_SPLIT_TOKENS
    taggers = {line.split()[2] for line in log.read_text().splitlines() if line.startswith("content-words-part")}
    assert len(taggers) == 2 and str(os.getpid()) not in taggers, taggers
    bench = Workbench(ArtefactStore(tmp_path / "b"))
    direct = get_measure("tvcc").score(bench.source(source, 10**9, 1)[0], bench.target(target)).value
    assert table.set_index("measure").loc["tvcc", "value"] == pytest.approx(direct)


def test_memory_held_by_a_workbench_is_bounded(tmp_path, store, monkeypatch):
    monkeypatch.setattr("simcore.matrix.corpus_cache.MEMORY_TARGETS", 2)
    bench = Workbench(store)
    paths = []
    for i in range(4):
        paths.append(tmp_path / f"t{i}.txt")
        paths[-1].write_text(f"target number {i}\n")
    first = bench.target(Corpus.from_path(paths[0]))
    for p in paths[1:]:
        bench.target(Corpus.from_path(p))
    assert len(bench.cache._targets) == 2
    again = bench.target(Corpus.from_path(paths[0]))
    assert again is not first and again.sentences == first.sentences, "rebuilt from the store when needed"


def test_parts_in_parallel_processes_give_the_same_table_as_one_process(tmp_path, monkeypatch):
    from simcore.utils.store import ArtefactStore

    sources = [Corpus.from_path(SAMPLE_DATA / "sources" / f"{n}") for n in ("news.txt", "tweets.jsonl", "lab_protocols.txt")]
    targets = [Corpus.from_path(SAMPLE_DATA / "targets" / f"{n}.conll") for n in ("news_ner", "med_forum_posts")]
    measures = ["tvc", "tvcc", "ppl", "wvv", "jsd", "ttr"]
    serial = Workbench(ArtefactStore(tmp_path / "one")).matrix(sources, targets, measures, compute_noise=True)
    seen = []
    monkeypatch.setattr("simcore.matrix.schedule.PARALLEL_MIN_TOKENS", 0)  # the sample is small: run it in processes all the same
    parallel = Workbench(ArtefactStore(tmp_path / "two")).matrix(
        sources, targets, measures, jobs=2, progress=lambda message, fraction: seen.append((fraction, message)),
        compute_noise=True)
    import pandas as pd

    pd.testing.assert_frame_equal(serial, parallel)  # bit for bit, WVV included
    assert serial["error"].isna().all()
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0  # progress never goes back
    # 3 sources x 6 measures, WVV's parts one per target (each of its cells trains a model): 3 x 5 + 3 x 2
    assert any(m == "scoring in 2 processes (21 of 21 parts done)" for _, m in seen)
    with pytest.raises(SimcoreError, match="jobs"):
        Workbench(ArtefactStore(tmp_path / "three")).matrix(sources, targets, ["tvc"], jobs=0)


def test_groups_of_targets_scored_in_processes_of_their_own_give_the_same_table(tmp_path, monkeypatch):
    """Four targets and two processes: each process scores one group of targets against every source."""
    from simcore.matrix import schedule
    from simcore.utils.store import ArtefactStore

    sources = [Corpus.from_path(SAMPLE_DATA / "sources" / n) for n in ("news.txt", "biomed_abstracts.txt")]
    targets = [Corpus.from_path(p) for p in sorted((SAMPLE_DATA / "targets").glob("*.conll"))]
    targets.append(Corpus.from_path(SAMPLE_DATA / "upload_example" / "med_forum_posts_sample.txt"))
    groups = schedule._target_groups(targets, 2)
    assert sorted(t.name for g in groups for t in g) == sorted(t.name for t in targets) and len(groups) == 2
    sizes = [sum(t.size_bytes for t in g) for g in groups]
    assert max(sizes) - min(sizes) <= max(t.size_bytes for t in targets)  # balanced to within one target
    measures = ["tvc", "tvcc", "ppl", "wvv", "jsd"]
    # the targets tagged in parts by the processes (as a large target is), in both runs
    monkeypatch.setattr("simcore.measures.tvcc.BACKGROUND_MIN_TOKENS", 0)
    monkeypatch.setattr("simcore.models.tagging.BATCH", 32)
    monkeypatch.setattr("simcore.models.tagging.PART_SENTENCES", 64)
    serial = Workbench(ArtefactStore(tmp_path / "one")).matrix(sources, targets, measures, compute_noise=True)
    monkeypatch.setattr(schedule, "PARALLEL_MIN_TOKENS", 0)
    monkeypatch.setattr(schedule, "PARALLEL_MIN_BYTES", 0)  # and read the corpora in the processes too
    seen = []
    parallel = Workbench(ArtefactStore(tmp_path / "two")).matrix(
        sources, targets, measures, jobs=2, compute_noise=True,
        progress=lambda message, fraction: seen.append((fraction, message)))
    pd.testing.assert_frame_equal(serial, parallel)
    assert serial["error"].isna().all() and len(serial) == 2 * 4 * 5
    assert any("reading the corpora in 2 processes" in m for _, m in seen)
    assert any("tagging the targets" in m for _, m in seen)
    assert len(list((tmp_path / "two" / "content-words-part").iterdir())) > len(targets)  # in parts
    # the bar moves while corpora are read and sources prepared, not only when cells are scored
    assert any(0 < f <= schedule.READING_SHARE and "reading" in m for f, m in seen)
    assert any(schedule.READING_SHARE < f <= schedule.SCORING_FROM and "preparing" in m for f, m in seen)
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0


def test_a_measure_that_is_noise_at_the_tables_size_is_not_computed_unless_asked(store):
    sources = [Corpus.from_path(SAMPLE_DATA / "sources" / n) for n in ("news.txt", "tweets.jsonl")]
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    table = Workbench(store).matrix(sources, [target], ["tvc", "wvv"]).set_index(["measure", "source"])
    assert table.loc["wvv"]["value"].isna().all() and table.loc["wvv"]["error"].isna().all()
    assert table.loc["wvv"]["flag"].str.contains("WVV not computed: it is noise below 1,000,000").all()
    assert not (store.root / "word2vec").exists()  # no skip-gram model was trained
    assert table.loc["tvc"]["value"].notna().all()


def test_a_large_source_is_sampled_in_one_pass_the_same_from_every_format(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    from simcore.utils.store import ArtefactStore

    monkeypatch.setattr("simcore.matrix.corpus_cache.STREAM_MIN_BYTES", 0)  # every source counts as large here
    lines = [line for line in (SAMPLE_DATA / "sources" / "news.txt").read_text().splitlines() if line.strip()]
    folders = {}
    for kind in ("text", "parquet", "zst"):
        folder = folders[kind] = tmp_path / kind
        folder.mkdir()
        if kind == "text":
            (folder / "news.txt").write_text("\n".join(lines) + "\n")
        elif kind == "parquet":
            pq.write_table(pa.table({"text": lines}), folder / "news.parquet", row_group_size=50)
        else:
            import json as json_module

            data = "".join(json_module.dumps({"text": line}) + "\n" for line in lines).encode()
            (folder / "news.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    other = Corpus.from_path(SAMPLE_DATA / "sources" / "tweets.jsonl")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    tables = {}
    for kind, folder in folders.items():
        store = ArtefactStore(tmp_path / f"store-{kind}")
        news = Corpus.from_path(next(folder.iterdir()), name="news")
        tables[kind] = Workbench(store).matrix([news, other], [target], ["tvc", "ppl", "jsd"])
        tokenized = [p for p in (store.root / "tokens").iterdir() if p.is_dir()]
        assert len(tokenized) == 1  # the target alone: the (large) sources were never tokenized whole
    columns = ["source", "measure", "value", "sample_tokens", "source_tokens", "ladder", "replicates"]
    for kind in ("parquet", "zst"):
        pd.testing.assert_frame_equal(tables["text"][columns], tables[kind][columns])
    assert tables["text"]["error"].isna().all()


@pytest.mark.parametrize("spawned", [False, True], ids=["forked", "spawned"])
def test_a_large_sources_pass_is_read_in_pieces_by_the_processes_with_the_same_table(tmp_path, monkeypatch,
                                                                                    spawned):
    """With several processes, a large source's streaming pass is split into its shards (each a task, merged
    in the parent, its samples drawn in a process): every value and replicate as in one process. Also when
    the workers are spawned (another thread runs here, so forking is unsafe) and import this module's
    defaults afresh: they decide which sources stream as the parent does (its threshold is lowered here)."""
    from simcore.matrix import schedule
    from simcore.utils.store import ArtefactStore

    monkeypatch.setattr("simcore.matrix.corpus_cache.STREAM_MIN_BYTES", 0)  # every source counts as large here
    lines = [line for line in (SAMPLE_DATA / "sources" / "news.txt").read_text().splitlines() if line.strip()]
    folder = tmp_path / "news"
    folder.mkdir()
    for s in range(5):
        (folder / f"part-{s}.txt").write_text("\n".join(lines[s::5]) + "\n")
    sources = [Corpus.from_path(folder, name="news"), Corpus.from_path(SAMPLE_DATA / "sources" / "tweets.jsonl")]
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    serial = Workbench(ArtefactStore(tmp_path / "one")).matrix(sources, [target], ["tvc", "jsd"], samples=2)
    monkeypatch.setattr(schedule, "PARALLEL_MIN_TOKENS", 0)
    monkeypatch.setattr(schedule, "PARALLEL_MIN_BYTES", 0)

    def no_pass_here(*args, **kwargs):
        raise AssertionError("a whole pass read in one process")

    monkeypatch.setattr("simcore.corpora.sampling.read_candidates", no_pass_here)
    seen = []
    other = threading.Event()
    if spawned:
        threading.Thread(target=other.wait, daemon=True).start()
    try:
        parallel = Workbench(ArtefactStore(tmp_path / "two")).matrix(
            sources, [target], ["tvc", "jsd"], samples=2, jobs=2, progress=lambda message, f: seen.append(message))
    finally:
        other.set()
    pd.testing.assert_frame_equal(serial, parallel)
    assert serial["error"].isna().all()
    # 5 pieces and a draw for news, 1 piece and a draw for tweets (a source of one file), the target read whole
    assert "reading the corpora in 2 processes (9 of 9 parts)" in seen


def test_the_table_carries_what_reading_skipped(tmp_path, store):
    """The notes come back with the table (the CLI prints them from there): a target with a blank token
    and a token that is a space has those two lines skipped, as ``Corpus`` counts them itself."""
    quirky = tmp_path / "quirky.conll"
    quirky.write_bytes(b"a\tO\n \tO\n\tO\nb\tB-X\n\n")
    source, target = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt"), Corpus.from_path(quirky)
    table = Workbench(store).matrix([source], [target], ["tvc"])
    direct = Workbench(store).tokenize(target).read_notes
    assert direct.skipped == 2
    assert table.attrs["read_notes"] == {"target quirky": direct.summary()}
    assert "2 lines skipped" in table.attrs["read_notes"]["target quirky"]
