"""Constructed corpora for the selection tests: registers with no content word in common."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from simcore.selection.options import SelectionOptions

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

