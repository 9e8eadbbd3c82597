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
