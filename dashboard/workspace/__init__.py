"""Workspaces: what one user added and computed in the dashboard, kept on disk so a reload finds it.

A workspace is a folder of plain files (``workspace.json`` and CSV tables) under an unguessable id, and
downloads as one zip of the same files (plus the bytes of uploaded corpora). By job:

- :mod:`.format`: the file format (names, ids, limits; a state written as files: :func:`snapshot`);
- :mod:`.folders`: the folders on disk (:class:`Workspaces`: atomic writes, a lock, list, rename, delete);
- :mod:`.opening`: files back into a state (:func:`restore`, :class:`Locator`), as untrusted data;
- :mod:`.merging`: two tabs of one workspace merged three-way (:func:`merge`);
- :mod:`.archive`: the zip to download and open again (:func:`to_zip`, :func:`read_zip`).

No Streamlit here: :mod:`dashboard.session` calls these functions.
"""

from .archive import read_zip, to_zip
from .folders import Workspaces
from .format import (
                     FORMAT,
                     MANIFEST,
                     MAX_MEMBER_BYTES,
                     MAX_MEMBERS,
                     MAX_NAME,
                     MAX_ZIP_BYTES,
                     PROBE_FILE,
                     PROBE_LABEL,
                     PROBE_RESULTS,
                     RESULTS_FILE,
                     VERSION,
                     WorkspaceError,
                     clean_name,
                     has_content,
                     matrix_csv,
                     new_id,
                     parse_manifest,
                     read_matrix_csv,
                     snapshot,
                     valid_id,
)
from .merging import merge
from .opening import Locator, restore

__all__ = ["FORMAT", "MANIFEST", "MAX_MEMBERS", "MAX_MEMBER_BYTES", "MAX_NAME", "MAX_ZIP_BYTES", "PROBE_FILE",
           "PROBE_LABEL", "PROBE_RESULTS", "RESULTS_FILE", "VERSION", "Locator", "WorkspaceError", "Workspaces",
           "clean_name", "has_content", "matrix_csv", "merge", "new_id", "parse_manifest", "read_matrix_csv",
           "read_zip", "restore", "snapshot", "to_zip", "valid_id"]
