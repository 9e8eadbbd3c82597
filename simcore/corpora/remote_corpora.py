"""Corpora named by a URL: a folder of corpora (``--sources s3://bucket/sources/``) and a glob of shards.

The folder (or the pattern) is listed once, with every object's size and version; each corpus
then gets its files from that listing, checked as a local corpus's are, and is never listed again.
A corpus that cannot be listed or read costs only its own cells, as a local one does.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..utils.errors import CorpusError
from .corpus import Corpus, corpus_name
from .listing import MAX_FILES
from .remote import RemoteFile, check_objects, has_magic, list_objects, location

# a folder of corpora may hold this many objects in all (each corpus MAX_FILES)
MAX_FOLDER_OBJECTS = 10 * MAX_FILES


def _root(url: str, storage_options: Any) -> RemoteFile:
    root = location(url, storage_options)
    if not isinstance(root, RemoteFile):
        raise CorpusError(f"{url} is a local path, not a remote URL")
    return root


def corpora_in_url(url: str, storage_options: Any = None, **options: Any) -> list[Corpus]:
    """Every object or sub-folder directly under ``url`` as one corpus named by its stem (what
    :func:`simcore.matrix.corpus_cache.corpora_in` makes of a local folder), from one listing."""
    root = _root(url, storage_options)
    if has_magic(root.url):
        raise CorpusError(f"{root.display}: give a folder of corpora here; a pattern is one corpus (--source-glob)")
    listed = list_objects(root, root.display, MAX_FOLDER_OBJECTS)
    if len(listed) == 1 and listed[0].url == root.url:
        raise CorpusError(f"{root.display} is an object, not a folder of corpora")
    groups: dict[str, list[RemoteFile]] = defaultdict(list)
    prefix = root.url.rstrip("/") + "/"
    for f in listed:
        first = f.url[len(prefix):].split("/", 1)[0]
        groups[first].append(f)
    if not groups:
        raise CorpusError(f"{root.display} holds no corpora")
    corpora = []
    for entry in sorted(groups):
        where = root / entry
        name = corpus_name(where)
        files = groups[entry]
        try:
            checked = check_objects(files, where, name, options.get("max_bytes"))
            corpora.append(Corpus(name=name, path=files[0] if files[0].url == where.url else where,
                                  files=tuple(checked), **options))
        except CorpusError as exc:
            corpora.append(Corpus.unreadable(name, where, str(exc)))
    names = [c.name for c in corpora]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise CorpusError(f"{root.display}: several entries share the name {', '.join(sorted(duplicates))}")
    return corpora


def corpus_from_url_glob(pattern: str, name: str | None = None, storage_options: Any = None,
                         **options: Any) -> Corpus:
    """One corpus of every object a URL pattern matches (``s3://bucket/crawl/part-*.jsonl.zst``), sorted."""
    root = _root(pattern, storage_options)
    label = name or root.display
    files = list_objects(root, label, MAX_FILES)
    if not files:
        raise CorpusError(f"no files match {root.display}")
    literal = root.url[: next(i for i, c in enumerate(root.url) if c in "*?[")] if has_magic(root.url) else root.url
    folder = RemoteFile(literal.rsplit("/", 1)[0], options=root.options)
    check_objects(files, folder, label, options.get("max_bytes"))
    return Corpus(name=name or corpus_name(folder), path=folder, files=tuple(files), **options)
