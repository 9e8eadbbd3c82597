from simcore.tokenize import TokenizerOptions, normalise, split_text, tokenize


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
