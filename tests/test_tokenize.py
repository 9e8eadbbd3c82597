from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.corpora.tokenize import (
    TokenizerOptions,
    normalise,
    normalise_all,
    split_text,
    tokenize,
)


def test_abbreviations_numbers_and_clitics_stay_as_ner_data_sets_have_them():
    assert split_text("The U.S. grew 3.5% in 2019, e.g. in Ohio.") == [
        "The", "U.S.", "grew", "3.5", "%", "in", "2019", ",", "e.g.", "in", "Ohio", "."]
    assert split_text("I don't think it's Dr. Smith's fault...") == [
        "I", "do", "n't", "think", "it", "'s", "Dr.", "Smith", "'s", "fault", "..."]
    assert split_text("well-known AT&T 1,000 _num_") == ["well-known", "AT&T", "1,000", "_num_"]


def test_lowercase_by_default_and_optional():
    assert tokenize("Hello World") == ["hello", "world"]
    assert tokenize("Hello World", TokenizerOptions(lowercase=False)) == ["Hello", "World"]


def test_kenlm_reserved_words_and_inner_spaces_are_rewritten():
    options = TokenizerOptions()
    assert normalise("<s>", options) == "[s]"
    assert normalise("</s>", options) == "[/s]"
    assert normalise("<unk>", options) == "[unk]"
    assert normalise("New York", options) == "new_york"


@settings(max_examples=300, deadline=None)
@given(tokens=st.lists(st.one_of(st.sampled_from(["<s>", "</s>", "<unk>", "<S>", "ΟΔΟΣ", "İ", "a b", "", " "]),
                                 st.text(alphabet="aZ <>/s\u00a0\u200b\t\x00Σ'", max_size=6)), max_size=8),
       lowercase=st.booleans())
def test_normalise_all_is_normalise_token_by_token(tokens, lowercase):
    """The list's fast path (one check of the joined list) gives what normalising each token gives."""
    options = TokenizerOptions(lowercase=lowercase)
    assert normalise_all(tokens, options) == [normalise(t, options) for t in tokens]


def test_text_without_apostrophes_splits_as_with_the_clitic_rules():
    assert split_text("I don't know, it's John's") == ["I", "do", "n't", "know", ",", "it", "'s", "John", "'s"]
    assert split_text("Dont know its Johns") == ["Dont", "know", "its", "Johns"]
