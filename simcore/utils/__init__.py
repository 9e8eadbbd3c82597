"""Shared by everything in simcore: errors, the artefact store, outputs, processes, safe text.

- :mod:`.errors`: :class:`SimcoreError` and its kinds (every message one line);
  :mod:`.redact`: secrets masked in every message;
- :mod:`.store`: the artefact store (atomic, locked, checked builds keyed by fingerprints);
  :mod:`.versions`: the library versions that are part of a stored artefact's key;
- :mod:`.output_paths`: outputs that must not touch inputs, written whole;
- :mod:`.lifecycle`: worker processes that end with their parent;
- :mod:`.terminal`: text escaped for a terminal; :mod:`.option_checks`: checks of option objects
  built by library users.
"""
