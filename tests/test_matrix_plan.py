"""The matrix's plan (simcore.matrix.plan): its parts, sizes, order, skipped measures and weights,
worked by hand from the rules in docs/answer.md (one size for the table, pairs of sources on the
ladder, WVV not computed below 1M tokens unless asked, cheap measures first)."""

from __future__ import annotations

import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.plan import checked_request, plan_matrix
from simcore.utils.errors import SimcoreError

from .conftest import SAMPLE_DATA


@pytest.fixture
def sources() -> list[Corpus]:
    return [Corpus.from_path(SAMPLE_DATA / "sources" / name)
            for name in ("news.txt", "tweets.jsonl", "lab_protocols.txt")]


def test_the_plan_of_three_sources_worked_by_hand(sources):
    a, b, c = sources
    sizes = {a.name: 20_000, b.name: 500_000, c.name: 5_000_000}
    plan = plan_matrix(sources, sizes, ["wvv", "ppl", "tvc"])
    assert plan.common == 20_000  # the smallest source
    # rungs at least 3x the table's size: 100k, 300k, 1M, ...; b and c both reach 300k, a pairs at 20k
    assert plan.ladders == {a.name: [], b.name: [300_000], c.name: [300_000]}
    assert plan.order == ["tvc", "ppl", "wvv"] and plan.skipped == ["wvv"]  # 20k < 1M: WVV is noise
    expected = [(m, s.name, z) for m in ("tvc", "ppl")
                for s, zs in ((a, [20_000]), (b, [20_000, 300_000]), (c, [20_000, 300_000])) for z in zs]
    assert [(m, s.name, z) for s, m, z in plan.parts] == expected
    # cost (TVC 1, PPL 3) times size over the table's size
    assert plan.weight[(b.name, "tvc", 300_000)] == 15.0 and plan.weight[(c.name, "ppl", 300_000)] == 45.0
    assert plan.total == (1 + 1 + 15 + 1 + 15) * (1 + 3)
    assert plan.measures_at(b.name, 300_000) == ["ppl", "tvc"]  # in the order asked
    assert plan.samples_of(b.name) == [20_000, 300_000] and plan.samples_of(a.name) == [20_000]


def test_noise_is_planned_when_asked_and_without_its_ladder(sources):
    a, b, c = sources
    sizes = {a.name: 20_000, b.name: 500_000, c.name: 5_000_000}
    plan = plan_matrix(sources, sizes, ["wvv", "tvc"], compute_noise=True)
    assert plan.skipped == []
    assert sorted(z for s, m, z in plan.parts if m == "wvv") == [20_000] * 3  # WVV has no ladder
    assert plan.weight[(a.name, "wvv", 20_000)] == 20.0


def test_a_chosen_size_has_no_ladder_and_an_unreadable_source_fails_alone(sources):
    a, b, c = sources
    plan = plan_matrix(sources, {a.name: 20_000, b.name: 500_000}, ["tvc"], sample_tokens=50_000)
    assert plan.common == 50_000
    # a is smaller than the size chosen: b meets it at a's whole size, not on the ladder
    assert plan.ladders == {a.name: [], b.name: [20_000]}
    assert [(s.name, z) for s, _, z in plan.parts] == [(a.name, 50_000), (b.name, 50_000), (b.name, 20_000),
                                                       (c.name, 50_000)]  # c: its cell says why
    assert plan_matrix(sources, {}, ["tvc"]).common == 1  # no source read: nothing to compare


def test_a_bad_request_is_one_line(sources):
    for kwargs, message in (({"samples": 0}, "samples must be"), ({"sample_tokens": 2.5}, "sample_tokens"),
                            ({"jobs": 0, "max_jobs": 4}, "jobs must be")):
        with pytest.raises(SimcoreError, match=message):
            checked_request(sources, sources[:1], ["tvc"], **kwargs)
    with pytest.raises(SimcoreError, match="measures must be names"):
        checked_request(sources, sources[:1], [3])
    with pytest.raises(SimcoreError, match="at least one source and one target"):
        checked_request(sources, [], "tvc")
