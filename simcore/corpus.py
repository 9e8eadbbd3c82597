"""The corpus API under its old name: :mod:`simcore.corpora.corpus` re-exported.

:class:`Corpus`, :class:`TokenizedCorpus`, tokenizing and sampling live in
:mod:`simcore.corpora.corpus`, beside the readers they call; ``from simcore.corpus import ...``
keeps working for every name it offered before.
"""

from .corpora.corpus import (  # noqa: F401 - the names importable from here before
    COMPRESSIONS,
    FORMATS,
    Corpus,
    Progress,
    ReadNotes,
    TokenizedCorpus,
    check_encoding,
    corpus_name,
    display_name,
    format_of,
    join_parts,
    join_sample,
    part_corpus,
    refuse_system_path,
    sample_corpus,
    sample_part,
    sample_units,
    save_upload,
    split_suffixes,
    tokenize_corpus,
    tokenize_part,
)
from .corpora.listing import MAX_FILES  # noqa: F401 - importable from here before

__all__ = ["COMPRESSIONS", "FORMATS", "Corpus", "ReadNotes", "TokenizedCorpus", "check_encoding", "corpus_name",
           "display_name", "format_of", "join_parts", "join_sample", "part_corpus", "refuse_system_path",
           "sample_corpus", "sample_part", "sample_units", "save_upload", "split_suffixes", "tokenize_corpus",
           "tokenize_part"]
