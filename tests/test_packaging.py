"""Packaging: pyproject lists the runtime requirements, and an editable install gives `simcore` and
`import simcore` outside the repository (checked in a throwaway virtual environment)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from .conftest import ROOT


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ ;\[]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_pyproject_lists_every_runtime_requirement_and_the_command():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert {_name(r) for r in pinned} == {_name(d) for d in project["dependencies"]}
    assert project["scripts"] == {"simcore": "simcore.cli.main:main"}
    from simcore.cli.main import main

    assert callable(main)


def test_editable_install_works_from_another_directory(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # as scripts/install.sh does it (pip builds the editable wheel with setuptools from the package index)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "-e", str(ROOT)]
    done = subprocess.run(pip, capture_output=True, text=True)
    if done.returncode != 0 and re.search(r"connection|resolve|network|No matching distribution", done.stderr, re.I):
        pytest.skip(f"the package index cannot be reached for setuptools: {done.stderr[-200:]}")
    assert done.returncode == 0, done.stderr
    command = venv / "bin" / "simcore"
    assert command.exists()
    # the dependencies come from this environment (the throwaway venv holds simcore only)
    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import simcore; print(simcore.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()) == ROOT / "simcore" / "__init__.py"
    helped = subprocess.run([str(command), "matrix", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert helped.returncode == 0 and "--sources" in helped.stdout
    bad = subprocess.run([str(command), "matrix", "--sources", str(tmp_path / "nowhere"), "--targets",
                          str(tmp_path / "nowhere")], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
