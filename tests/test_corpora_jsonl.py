"""JSONL decoding (simcore.corpora.jsonl.decode_record): orjson where it reads what json.loads reads, checked
against json.loads itself on lines where the two decoders differ and on generated lines."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.corpora.jsonl import decode_record


def json_verdict(line: str):
    """What the standard library makes of a line: its record, or its exception's type and message."""
    try:
        return "ok", json.loads(line)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def our_verdict(line: str):
    try:
        return "ok", decode_record(line, "text")
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


def same(ours, theirs) -> bool:
    """The same verdict; for a record whose text is a string, the same keys and text (what the reader
    uses of it: orjson may read another field differently, a huge integer as a float); any other record
    whole, NaN included (json reads NaN, and NaN != NaN)."""
    if not ours[0] == "ok" == theirs[0]:
        return ours == theirs
    record = theirs[1]
    if type(record) is dict and type(record.get("text")) is str:
        return type(ours[1]) is dict and list(ours[1]) == list(record) and ours[1]["text"] == record["text"]
    return json.dumps(ours[1], sort_keys=True) == json.dumps(record, sort_keys=True)


HOSTILE = [
    '{"text": "plain"}\n',
    '{"text": "a", "text": "b"}',  # duplicate keys: the last wins in both
    '{"text": "x\\ud800"}',  # a lone surrogate escape: orjson refuses, json reads it
    '{"text": "\udc80"}',  # a lone surrogate in the line itself
    '{"text": "a", "x": NaN}', '{"text": "a", "x": -Infinity}',  # json's extensions
    '{"text": "a", "x": 1e400}',  # out of a double's range: json gives inf
    '{"text": "a", "x": ' + "9" * 30 + "}",  # orjson would make it a float, json keeps the integer
    '{"text": "a", "x": ' + "9" * 5000 + "}",  # over Python's digit limit: json's ValueError
    '{"text": 12345678901234567890123}', '{"text": null}', '{"text": ["a", "b"]}',  # not strings
    '{"tokens": ["EU", 123456789012345678901234567890], "ner_tags": [1, 0]}',  # Hub-style rows
    "[1, 2]", '"text"', "null", "{oops", '{"text": "a"} trailing', '\ufeff{"text": "a"}', '{"text": "\t"}',
    '{"text": "a", "deep": ' + "[" * 990 + "]" * 990 + "}",  # orjson reads 1,024 levels, json fewer
    '{"text": "a", "deep": ' + "[" * 1010 + "]" * 1010 + "}",
    '{"text": "a", "deep": ' + "[" * 3000 + "]" * 3000 + "}",
    '{"text": "' + "[" * 500 + '"}',  # many brackets inside the text: read by json alone, the same record
]


@pytest.mark.parametrize("line", HOSTILE)
def test_a_hostile_line_decodes_as_json_loads_decodes_it(line):
    assert same(our_verdict(line), json_verdict(line))


def test_a_record_of_huge_numbers_keeps_them_exact():
    record = decode_record('{"text": 7, "n": 123456789012345678901234567890}', "text")
    assert record["n"] == 123456789012345678901234567890 and record["text"] == 7
    assert math.isinf(decode_record('{"text": "a", "x": 1e400}', "text")["x"])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(record=st.dictionaries(st.sampled_from(["text", "tokens", "id", "x"]), json_values, max_size=4),
       noise=st.sampled_from(["", " ", "\n", "}", "x", "\ud800", ",", "NaN"]), ascii_only=st.booleans())
def test_generated_lines_decode_as_json_loads_decodes_them(record, noise, ascii_only):
    line = json.dumps(record, ensure_ascii=ascii_only)
    for variant in (line, line + noise, noise + line, line[: len(line) // 2]):
        assert same(our_verdict(variant), json_verdict(variant))
