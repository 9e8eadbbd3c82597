"""dashboard.charts.scatter_spec: the Vega-Lite spec written directly equals altair's for the same chart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.charts import SpecIncomplete, scatter, scatter_spec
from dashboard.paths import TABLE3
from simcore.analysis.correlation import join
from simcore.analysis.tables import to_long


def altair_spec(points: pd.DataFrame, measure: str, targets: list[str] | None, capped: str | None) -> dict:
    """altair's own ``to_dict`` of :func:`scatter`, without its default view size (as
    ``st.altair_chart`` draws it)."""
    spec = scatter(points, measure, targets=targets, capped_column=capped).to_dict()
    view = spec.get("config", {}).get("view", {})
    for size in ("continuousWidth", "continuousHeight"):
        view.pop(size, None)
    if "view" in spec.get("config", {}) and not view:
        del spec["config"]["view"]
    if "config" in spec and not spec["config"]:
        del spec["config"]
    return spec


def table3_points() -> pd.DataFrame:
    table = pd.read_csv(TABLE3)
    results = table[["target", "source", "lm_f1", "lm_delta"]].rename(
        columns={"lm_f1": "f1", "lm_delta": "improvement"})
    return join(to_long(table), results)


@pytest.mark.parametrize("measure", ["ppl", "wvv", "tvc", "tvcc"])
def test_table3_scatters_are_altairs(measure):
    points = table3_points()
    part = points[points["measure"] == measure]
    targets = sorted(points["target"].unique())
    assert scatter_spec(part, measure, targets, "capped") == altair_spec(part, measure, targets, "capped")


def test_capped_runs_one_target_and_a_name_not_in_the_registry():
    points = table3_points()
    part = points[points["measure"] == "tvc"].copy()
    part["capped"] = np.arange(len(part)) % 3 == 0
    spec = scatter_spec(part, "tvc", None, "capped")
    assert spec == altair_spec(part, "tvc", None, "capped")
    assert len(spec["layer"]) == 5  # the rings and the pooled line
    one = part[part["target"] == part["target"].iloc[0]].assign(measure="my_measure", capped=0)
    spec = scatter_spec(one, "my_measure", None, "capped")
    assert spec == altair_spec(one, "my_measure", None, "capped")
    assert len(spec["layer"]) == 3 and spec["layer"][0]["encoding"]["x"]["title"] == "my_measure"
    missing = part.assign(value=np.where(np.arange(len(part)) % 4 == 0, np.nan, part["value"]))
    assert scatter_spec(missing, "tvc", None, None) == altair_spec(missing, "tvc", None, None)


def test_more_rows_than_altair_inlines_are_refused():
    rng = np.random.default_rng(0)
    many = pd.DataFrame({"source": [f"s{i}" for i in range(5001)], "target": "t", "measure": "tvc",
                         "value": rng.random(5001), "improvement": rng.random(5001)})
    with pytest.raises(SpecIncomplete):
        scatter_spec(many, "tvc", None, None)
