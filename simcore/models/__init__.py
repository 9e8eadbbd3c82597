"""Models shared by the features above them (the measures, selection, the probes).

- :mod:`.kenlm_tools`: KenLM's ``lmplz`` and ``build_binary``, run as subprocesses;
- :mod:`.tagging`: part-of-speech tags (spaCy) for content words;
- :mod:`.sentence_encoder`: the transformer sentence encoder (all-MiniLM-L6-v2 or a local model).
"""
