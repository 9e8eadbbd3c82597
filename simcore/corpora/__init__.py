"""Readers for every corpus format simcore takes, one module per format, and the streaming sample.

- :mod:`.formats`: file names to formats; :mod:`.compression`: gzip, bzip2, xz and zstd streams.
- :mod:`.text` (plain text, bounded line reading), :mod:`.jsonl`, :mod:`.csv`, :mod:`.conll`.
- :mod:`.columnar`: Parquet (streamed by row group) and Arrow files (``datasets.save_to_disk``).
- :mod:`.hub_ner`: Hub-style NER rows (token lists, integer tags named by the data set's features).
- :mod:`.notes`: :class:`ReadNotes`, what a reader skipped or repaired, counted by reason.
- :mod:`.options`: :class:`ReadOptions`, what a reader knows of the corpus it reads.
- :mod:`.corpus`: :class:`Corpus` (files, formats, fingerprint, units), tokenizing into a
  :class:`TokenizedCorpus`, sampling, sharded parts.
- :mod:`.sampling`: one streaming pass that draws every sample of a source (bottom-k by a seeded hash).
- :mod:`.globbing`: corpus paths given as glob patterns.
- :mod:`.tokenize`: simcore's English tokenizer and normalisation, for both sides of every comparison.
- :mod:`.stats`: per-corpus statistics (the dashboard's Corpora page).
"""

from .formats import FORMATS, format_of, split_suffixes
from .notes import ReadNotes

__all__ = ["FORMATS", "ReadNotes", "format_of", "split_suffixes"]
