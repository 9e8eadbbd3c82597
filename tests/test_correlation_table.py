"""simcore.analysis.correlation: small-sample intervals read from the stored table equal the simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simcore.analysis import correlation
from simcore.analysis.correlation import TABLED, simulate_quantiles, simulated_interval

GRID = np.round(np.linspace(-0.995, 0.995, 200), 4)


def reference_quantiles(n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The simulation as first written: both rows ranked again at every grid point."""
    rng = np.random.default_rng([n, len(kind)])
    z1, z2 = rng.standard_normal((4000, n)), rng.standard_normal((4000, n))
    low, high = np.empty(len(GRID)), np.empty(len(GRID))
    for i, rho in enumerate(GRID):
        x, y = z1, rho * z1 + math.sqrt(1 - rho * rho) * z2
        if kind == "spearman":
            x = x.argsort(axis=-1).argsort(axis=-1).astype(float)
            y = y.argsort(axis=-1).argsort(axis=-1).astype(float)
        x, y = x - x.mean(axis=-1, keepdims=True), y - y.mean(axis=-1, keepdims=True)
        r = (x * y).sum(axis=-1) / np.sqrt((x * x).sum(axis=-1) * (y * y).sum(axis=-1))
        low[i], high[i] = np.quantile(r, [0.025, 0.975])
    return low, high


@pytest.fixture
def fresh_tables():
    correlation._stored_quantiles.cache_clear()
    correlation._sampling_quantiles.cache_clear()
    yield
    correlation._stored_quantiles.cache_clear()
    correlation._sampling_quantiles.cache_clear()


def test_the_stored_table_is_the_simulation_bit_for_bit(fresh_tables):
    stored = correlation._stored_quantiles()
    assert set(stored) == {f"{n} {kind}" for n in TABLED for kind in ("pearson", "spearman")}
    for n in TABLED:
        for kind in ("pearson", "spearman"):
            low, high = reference_quantiles(n, kind)
            assert np.array_equal(np.array(stored[f"{n} {kind}"][0]), low), (n, kind)
            assert np.array_equal(np.array(stored[f"{n} {kind}"][1]), high), (n, kind)


@pytest.mark.parametrize("kind", ["pearson", "spearman"])
def test_the_simulation_is_the_reference(kind):
    for got, want in zip(simulate_quantiles(4, kind), reference_quantiles(4, kind)):
        assert np.array_equal(got, want)


def test_without_the_file_the_intervals_are_simulated(fresh_tables, monkeypatch, tmp_path):
    stored = simulated_interval(0.62, 6, "spearman")
    bad = tmp_path / "sampling_quantiles.json"
    bad.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(correlation, "SAMPLING_TABLE", bad)
    correlation._stored_quantiles.cache_clear()
    correlation._sampling_quantiles.cache_clear()
    assert correlation._stored_quantiles() == {}
    assert simulated_interval(0.62, 6, "spearman") == stored
    low, high = reference_quantiles(6, "spearman")
    accepted = GRID[(low <= 0.62 + 1e-9) & (high >= 0.62 - 1e-9)]
    assert stored == (float(accepted.min()), float(accepted.max()))
