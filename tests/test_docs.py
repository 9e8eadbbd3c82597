"""The documentation: the MkDocs site builds with --strict (a broken link or anchor, or a page the nav
leaves out, fails the suite), the Layout page matches the tree, the Measures page matches the registry,
and the README's and CONTRIBUTING.md's links reach files that exist."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simcore.measures.lookup import all_measures, family, get_measure

from .conftest import ROOT

DOCS = ROOT / "docs"


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, timeout=300)


def test_the_site_builds_strictly(tmp_path: Path):
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "layout" / "index.html").is_file()


@pytest.mark.parametrize("broken", ["[gone](no-such-page.md)", "[gone](measures.md#no-such-heading)"])
def test_a_broken_link_fails_the_build(tmp_path: Path, broken: str):
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    page = tmp_path / "docs" / "layout.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\nSee {broken}.\n", encoding="utf-8")
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "no-such-" in done.stdout + done.stderr


def _named_paths(text: str) -> set[str]:
    """Every `path` in backticks on the page that names a file or folder of the repository."""
    return {m for m in re.findall(r"`([^`\s]+)`", text)
            if "/" in m and not m.startswith(("http", "$", "~")) and "<" not in m and "*" not in m}


def test_the_layout_page_matches_the_tree():
    text = (DOCS / "layout.md").read_text(encoding="utf-8")
    named = _named_paths(text)
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/layout.md names paths that do not exist: {missing}"
    packages = sorted(f"simcore/{p.parent.relative_to(ROOT / 'simcore').as_posix()}/"
                      for p in (ROOT / "simcore").rglob("__init__.py") if p.parent != ROOT / "simcore")
    unlisted = [p for p in packages if p not in named]
    assert not unlisted, f"docs/layout.md leaves out the packages {unlisted}"
    assert {"scripts/", "bench/", "tests/", ".ci/", "docs/", "pages/", "dashboard/"} <= named


def test_the_measures_page_is_what_the_measures_declare():
    text = (DOCS / "measures.md").read_text(encoding="utf-8").split("<!-- measures-table -->")[1]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()[3:]
            if line.startswith("|")]
    by_label = {get_measure(n).label: get_measure(n) for n in all_measures() if not n.startswith("toy")}
    assert sorted(r[0] for r in rows) == sorted(by_label)
    for label, _what, closer, unit, default, carries, settles in rows:
        m = by_label[label]
        assert closer == {1: "higher", -1: "lower", 0: "–"}[m.direction], label
        assert unit == m.shown_unit and default == ("yes" if m.default else "no"), label
        assert carries == (m.family or "–") and (not m.family or m.name in family(m.family)), label
        assert settles == (f"{m.reliable_tokens:,}" if m.reliable_tokens else "–"), label


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_the_links_at_the_root_reach_files(name: str):
    text = (ROOT / name).read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if not t.startswith("http")]
    assert targets and all((ROOT / t).exists() for t in targets), [t for t in targets if not (ROOT / t).exists()]
    assert not [p for p in _named_paths(text) if p.endswith((".py", ".md", "/")) and not (ROOT / p).exists()]
