"""Two tabs of one workspace: what another session saved is merged into this one three-way."""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd

from ..state import AppState
from .format import MAX_NAME, PROBE_FILE, PROBE_LABEL, PROBE_RESULTS, RESULTS_FILE, parse_manifest
from .opening import Locator, restore


def _names(manifest: dict[str, Any], key: str, role: str | None = None, field_: str = "name") -> set[str]:
    entries = manifest.get(key)
    if role is not None:
        entries = entries.get(role) if isinstance(entries, dict) else None
    return {e[field_] for e in entries or [] if isinstance(e, dict) and isinstance(e.get(field_), str)} \
        if isinstance(entries, list) else set()


def _table_sha(manifest: dict[str, Any], file: str) -> str | None:
    tables = manifest.get("tables")
    return tables.get(file) if isinstance(tables, dict) and manifest.get(file.split(".")[0]) else None


def _sha(table: Any) -> str | None:
    return hashlib.sha256(table.to_csv(index=False).encode("utf-8")).hexdigest() if isinstance(table, pd.DataFrame) \
        else None


def _created(manifest: dict[str, Any]) -> dict[float, str]:
    """A manifest's matrices by when they were made (a matrix's identity across tabs: names can be taken twice)."""
    entries = manifest.get("matrices")
    return {float(e["created"]): e["name"] for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)
            and isinstance(e.get("created"), (int, float))} if isinstance(entries, list) else {}


def _merge_matrices(base: dict[str, Any], theirs: dict[str, Any], other: AppState, state: AppState,
                    changes: list[str]) -> None:
    was, now = _created(base), _created(theirs)
    ours = {m.created: name for name, m in state.matrices.items()}
    for created, name in was.items():
        if created not in now and created in ours:
            state.remove_matrix(ours.pop(created))
            changes.append(f"matrix {name} removed")
        elif created in now and now[created] != name and ours.get(created) == name:
            ours[created] = state.rename_matrix(name, now[created])
            changes.append(f"matrix {name} renamed {ours[created]}")
    for matrix in other.matrices.values():
        if matrix.created not in was and matrix.created not in ours:
            changes.append(f"matrix {state.add_matrix(matrix)} added")


def merge(base: dict[str, Any], files: dict[str, bytes], state: AppState, locator: Locator) -> list[str]:
    """Bring what another session (a second tab) saved to this workspace into ``state``, three-way.

    ``base`` is the manifest this session last read or wrote, ``files`` the workspace on disk now. What
    the other session added since ``base`` is added here (a name this state also took in the meantime
    keeps this state's), what it removed is removed, and a table or choice it changed replaces this
    state's unless this state changed it too. Returns one line per change, for the page.
    """
    theirs = parse_manifest(files)
    other = AppState()
    restore(files, other, locator)
    changes: list[str] = []
    for role, ours, got in (("source", state.sources, other.sources), ("target", state.targets, other.targets)):
        before = _names(base, "corpora", role)
        for name, loaded in got.items():
            if name not in before and name not in ours:
                ours[name] = loaded
                changes.append(f"{role} {name} added")
            elif name not in before and ours[name].corpus.path.resolve() != loaded.corpus.path.resolve():
                changes.append(f"{role} {name} of the other tab not taken: this tab has another corpus by that name")
        for name in sorted(before - _names(theirs, "corpora", role)):
            if ours.pop(name, None) is not None:
                changes.append(f"{role} {name} removed")
    _merge_matrices(base, theirs, other, state, changes)
    for file, what in ((RESULTS_FILE, "NER results"), (PROBE_FILE, "probe results")):
        was, now = _table_sha(base, file), _table_sha(theirs, file)
        mine = _sha(state.results if file == RESULTS_FILE else state.extra.get(PROBE_RESULTS))
        if now == was or mine != was:
            continue  # the other session left it alone, or this one changed it too: this one's stays
        if file == RESULTS_FILE:
            state.results, state.results_label = other.results, other.results_label
            state.results_columns = other.results_columns
            state.extra["results_version"] = int(state.extra.get("results_version") or 0) + 1
        else:
            for key in (PROBE_RESULTS, PROBE_LABEL):
                state.extra[key] = other.extra.get(key)
        changes.append(f"{what} {'replaced' if now else 'removed'}")
    runs = state.extra.setdefault("selection_runs", {})
    before = _names(base, "selections", field_="label")
    for label, run in (other.extra.get("selection_runs") or {}).items():
        if label not in before and label not in runs:
            runs[label] = run
            changes.append(f"selection {label} added")
    for label in sorted(before - _names(theirs, "selections", field_="label")):
        if runs.pop(label, None) is not None:
            changes.append(f"selection {label} removed")
    for key in ("name_map", "forms"):
        was = base.get(key) if isinstance(base.get(key), dict) else {}
        mine = state.extra.setdefault(key, {})
        for part, value in other.extra.get(key, {}).items():
            if value != was.get(part) and mine.get(part) == was.get(part):
                mine[part] = value
    name = theirs.get("name")
    if isinstance(name, str) and name != base.get("name") and state.workspace_name == base.get("name"):
        state.workspace_name = name[:MAX_NAME]
        changes.append(f"renamed {name[:MAX_NAME]}")
    return changes
