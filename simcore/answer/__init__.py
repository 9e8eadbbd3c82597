"""The answer: per target, the source to pretrain on, how sure that is, and why.

- :mod:`.flags`: the warnings a cell of the matrix carries;
- :mod:`.pairwise`: sources compared in pairs, in every bootstrap replicate;
- :mod:`.recommendation`: the answer per target (:class:`Recommendation`);
- :mod:`.evidence`: the pairs behind the answer, for a reader;
- :mod:`.public`: the answer in the public library (``simcore.recommend``).
"""
