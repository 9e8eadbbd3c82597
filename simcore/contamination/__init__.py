"""Contamination: which sources already hold a target's text, said in the answer, and removed on request.

- :mod:`simcore.contamination.ngrams`: a target's n-grams as 64-bit keys, and the scanner that finds
  them in a source's units (a cheap test on every unit, the exact one on the few that pass);
- :mod:`simcore.contamination.scan`: a source's overlap with every target, in the pass that reads it,
  stored per fingerprint;
- :mod:`simcore.contamination.verdict`: what the answer, the warnings and the dashboard say of a
  contaminated pair;
- :mod:`simcore.contamination.decontaminate`: a clean copy of a source (``simcore decontaminate``).
"""
