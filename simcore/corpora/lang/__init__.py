"""The language layer: which language and script a corpus is in, how its text is cut into words,
and how its content words are told apart. No import from the corpus or matrix modules: they use it.

- :mod:`.scripts`: dominant Unicode script of a text or of token lists.
- :mod:`.detect`: :func:`detect_language` (given code, script, or py3langid on a bounded sample).
- :mod:`.segment`: :func:`segmenter_for` (English regex, ICU for scripts without spaces, spaCy's
  tokenizer per language), :func:`char_tokens` and :func:`is_char_tokenized` for character targets.
- :mod:`.content`: :func:`content_words_method` for TVcC (tagger, stop words, or none with a reason).

Each choice has a ``fingerprint()`` dict (empty for English, so English artefacts keep their keys).
"""

from .content import ContentWordMethod, content_words_method
from .detect import (
    UNDETERMINED,
    LanguageGuess,
    across_languages,
    detect_language,
    known_language,
    known_languages,
    language_name,
    validate_language,
)
from .scripts import NO_SPACE_SCRIPTS, script_of, script_of_tokens
from .segment import Segmenter, char_tokens, is_char_tokenized, segmentation_fingerprint, segmenter_for

__all__ = [
    "NO_SPACE_SCRIPTS", "UNDETERMINED", "ContentWordMethod", "LanguageGuess", "Segmenter", "across_languages",
    "char_tokens", "known_language",
    "content_words_method", "detect_language", "is_char_tokenized", "known_languages", "language_name", "script_of",
    "script_of_tokens", "segmentation_fingerprint", "segmenter_for", "validate_language",
]
