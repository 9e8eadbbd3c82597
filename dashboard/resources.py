"""Server-wide resources shared by every session: the artefact store and the workbenches.

Both live in ``st.cache_resource`` (one per server process); the expensive artefacts themselves are in
simcore's on-disk store, shared with the CLI.
"""

from __future__ import annotations

import json
import threading

import streamlit as st

from simcore.corpora.corpus import keep_facts_in
from simcore.corpora.tokenize import TokenizerOptions
from simcore.matrix.workbench import Workbench
from simcore.measures.options import MeasureOptions
from simcore.utils.store import ArtefactStore, default_root


@st.cache_resource(show_spinner=False)
def _store(root: str) -> ArtefactStore:
    return ArtefactStore(root)


def get_store() -> ArtefactStore:
    """The artefact store under $SIMCORE_CACHE (or ~/.cache/simcore), shared by all sessions and the CLI."""
    store = _store(str(default_root()))
    keep_facts_in(store)  # corpus files' hashes and languages on disk: a new server reads them back
    return store


class Bench:
    """A workbench and the lock that serialises computations on it (Workbench is not thread-safe)."""

    def __init__(self, workbench: Workbench) -> None:
        self.workbench = workbench
        self.lock = threading.Lock()


@st.cache_resource(show_spinner=False, max_entries=8)
def _bench(root: str, options_json: str, tokenizer_json: str) -> Bench:
    options = MeasureOptions.from_dict(json.loads(options_json))
    tokenizer = TokenizerOptions(**json.loads(tokenizer_json))
    return Bench(Workbench(_store(root), tokenizer=tokenizer, options=options))


def get_bench(options: MeasureOptions | None = None, tokenizer: TokenizerOptions | None = None) -> Bench:
    """The shared workbench (and its lock) for these options; call it from a page script, not a worker."""
    options = options or MeasureOptions()
    tokenizer = tokenizer or TokenizerOptions()
    return _bench(str(default_root()), json.dumps(options.subset(tuple(options.__dataclass_fields__)), sort_keys=True),
                  json.dumps(tokenizer.as_dict(), sort_keys=True))


def get_workbench(options: MeasureOptions | None = None, tokenizer: TokenizerOptions | None = None) -> Workbench:
    """The shared workbench for these options (its prepared corpora stay in memory between reruns)."""
    return get_bench(options, tokenizer).workbench


def workbench_lock(options: MeasureOptions | None = None, tokenizer: TokenizerOptions | None = None) -> threading.Lock:
    return get_bench(options, tokenizer).lock
