"""Demo mode (scripts/demo.sh sets SIMCORE_DEMO=1): every new session starts with the sample loaded."""

from streamlit.testing.v1 import AppTest

from .conftest import ROOT, SAMPLE_DATA


def test_demo_sessions_start_with_the_sample(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMCORE_DEMO", "1")
    monkeypatch.setenv("SIMCORE_CACHE", str(tmp_path / "store"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception
    state = at.session_state["simcore_state"]
    assert len(state.sources) == len(list((SAMPLE_DATA / "sources").iterdir()))
    assert sorted(state.targets) == ["lab_protocol_ner", "med_forum_posts", "news_ner"]
    assert "demo.sh" in (ROOT / "scripts" / "demo.sh").name and "SIMCORE_DEMO=1" in (ROOT / "scripts" / "demo.sh").read_text()
    job = state.jobs["matrix"]  # its answer is being worked out (the next tests look at it)
    job.cancel()
    assert job.wait(90)


def _sample_matrix():
    """A made-up matrix of the sample's names where the answer is known: news for news_ner, clinical notes
    for the forum posts, lab protocols for the protocols (lowest PPL and JSD)."""
    import pandas as pd

    from simcore.analysis.tables import to_long

    best = {"news_ner": "news", "med_forum_posts": "clinical_notes", "lab_protocol_ner": "lab_protocols"}
    sources = sorted(p.name.split(".")[0] for p in (SAMPLE_DATA / "sources").iterdir())
    rows = [{"target": t, "source": s, "ppl": 100.0 if s == best[t] else 500.0 + i,
             "jsd": 0.1 if s == best[t] else 0.5 + i / 100, "tvc": 0.9 if s == best[t] else 0.5}
            for t in best for i, s in enumerate(sources)]
    return to_long(pd.DataFrame(rows)), best


def test_demo_home_shows_the_answer_on_arrival_with_buttons(tmp_path, monkeypatch):
    """With the answer in the store (computed for an earlier visitor, before a restart), Home shows it at once:
    no link to find, no "Next: compute the similarity matrix" above it, and the next steps are buttons."""
    from dashboard import compute
    from dashboard.state import AppState, LoadedCorpus
    from dashboard.workspace.format import matrix_csv
    from simcore.matrix.corpus_cache import corpora_in
    from simcore.matrix.plan import DEFAULT_MEASURES
    from simcore.utils.store import ArtefactStore

    monkeypatch.setenv("SIMCORE_DEMO", "1")
    monkeypatch.setenv("SIMCORE_CACHE", str(tmp_path / "store"))
    long, best = _sample_matrix()
    sample = AppState()
    for bucket, folder in ((sample.sources, "sources"), (sample.targets, "targets")):
        for corpus in corpora_in(SAMPLE_DATA / folder):
            bucket[corpus.name] = LoadedCorpus(corpus, "sample")
    job = compute.demo_job(sample)
    assert job.measures == list(DEFAULT_MEASURES)
    data = matrix_csv(long)
    ArtefactStore(tmp_path / "store").build("demo-answer", compute.answer_key(sample, job),
                                           lambda out: (out / "matrix.csv").write_bytes(data) and None)
    answers, _ = compute._answers()
    answers.clear()  # a restarted server: only the store has it
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.run()
        assert not at.exception and not at.error
        assert "matrix" not in at.session_state["simcore_state"].jobs  # nothing to compute
        text = " ".join(m.value for m in at.markdown)
        for source in best.values():
            assert f"pretrain on **{source.replace('_', chr(92) + '_')}**" in text, text
        assert "Next: compute the similarity matrix" not in text + " ".join(s.value for s in at.success)
        assert {"next_ranking", "next_pred", "next_sim"} <= {b.key for b in at.button}
        at.button(key="next_ranking").click().run()
        assert not at.exception
    finally:
        answers.clear()


def test_demo_without_an_answer_on_the_server_works_it_out_in_the_background(tmp_path, monkeypatch):
    from dashboard import compute

    monkeypatch.setenv("SIMCORE_DEMO", "1")
    monkeypatch.setenv("SIMCORE_CACHE", str(tmp_path / "store"))
    compute._answers()[0].clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    job = at.session_state["simcore_state"].jobs["matrix"]
    try:
        assert job.running and job.title == "Working out the sample's answer"
        assert job.message.startswith(("starting", "waiting")) and job.total == 6 * 3 * 6  # said at once
        assert any("Working it out in the background" in c.value for c in at.caption)
    finally:
        job.cancel()
        assert job.wait(90)


def test_demo_home_drops_the_working_line_once_the_answer_is_in(tmp_path, monkeypatch):
    """While the job runs, Home says it is working the answer out; once PPL and JSD are in for every pair the
    answer is shown and that line is gone (it stood above the finished answer)."""
    from dashboard import compute

    monkeypatch.setenv("SIMCORE_DEMO", "1")
    monkeypatch.setenv("SIMCORE_CACHE", str(tmp_path / "store"))
    compute._answers()[0].clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    job = at.session_state["simcore_state"].jobs["matrix"]
    try:
        assert any("Working it out in the background" in c.value for c in at.caption)
        long, best = _sample_matrix()
        job.partial.extend(long[long["measure"].isin(["ppl", "jsd"])].to_dict("records"))
        assert job.running
        at.run()
        assert not at.exception
        text = " ".join(m.value for m in at.markdown)
        for source in best.values():
            assert f"pretrain on **{source.replace('_', chr(92) + '_')}**" in text, text
        assert not any("Working it out in the background" in c.value for c in at.caption)
    finally:
        job.cancel()
        assert job.wait(90)
