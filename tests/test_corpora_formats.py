"""Parquet, zstd, Arrow folders, Hub-style NER rows and mixed shard folders, on files written by the real
pyarrow and zstandard (never mocked); each quirk is counted in ReadNotes or refused with a message."""

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.formats import format_of
from simcore.corpora.notes import ReadNotes
from simcore.utils.errors import CorpusError, InvalidArgument

LINES = ["The cat sat on the mat.", "A dog ran, barking!", "Prices rose 3.5 % in the U.S. yesterday."]


def tokens_of(path, store, **options):
    tokenized = tokenize_corpus(Corpus.from_path(path, **options), store)
    return list(tokenized.sentences()), tokenized.read_notes


def write_zst(path, text, frames=1):
    data = text.encode()
    step = max(1, len(data) // frames)
    compressor = zstandard.ZstdCompressor(write_checksum=True)  # as the zstd program writes
    path.write_bytes(b"".join(compressor.compress(data[i:i + step]) for i in range(0, len(data), step)))


def test_suffixes_name_the_new_formats():
    assert [format_of(n) for n in ("a.parquet", "a.pq", "data-00000-of-00001.arrow", "a.jsonl.zst", "a.txt.zstd",
                                   "a.conll.zst", "a.parquet.gz")] == [
        "parquet", "parquet", "arrow", "jsonl", "text", "conll", None]


def test_parquet_text_column_streamed_by_row_group_with_nulls_and_empty_groups_counted(tmp_path, store):
    p = tmp_path / "src.parquet"
    with pq.ParquetWriter(p, pa.schema([("id", pa.int64()), ("text", pa.string())])) as writer:
        writer.write_table(pa.table({"id": [1, 2], "text": [LINES[0], None]}))
        writer.write_table(pa.table({"id": pa.array([], pa.int64()), "text": pa.array([], pa.string())}))
        writer.write_table(pa.table({"id": [3, 4], "text": [LINES[1], "   "]}))
    assert pq.ParquetFile(p).num_row_groups == 3
    sentences, notes = tokens_of(p, store)
    assert sentences == [["the", "cat", "sat", "on", "the", "mat", "."], ["a", "dog", "ran", ",", "barking", "!"]]
    assert notes.reasons == {"null cell": 1, "empty row group": 1}
    assert "src.parquet row 2: null 'text'" in notes.examples


def test_parquet_text_field_option_and_wrong_columns(tmp_path, store):
    p = tmp_path / "body.parquet"
    pq.write_table(pa.table({"body": [LINES[0]], "n": [3]}), p)
    assert tokens_of(p, store, text_field="body")[0][0][:2] == ["the", "cat"]
    with pytest.raises(CorpusError, match=r"no 'text' column \(found: body, n\)"):
        tokens_of(p, store)
    with pytest.raises(CorpusError, match="column 'n' holds int64, not text"):
        tokens_of(p, store, text_field="n")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    with pytest.raises(CorpusError, match="not a readable Parquet file"):
        tokens_of(bad, store)


@pytest.mark.parametrize("name,content", [
    ("a.txt.zst", "\n".join(LINES) + "\n"),
    ("a.jsonl.zst", "".join(json.dumps({"text": line}) + "\n" for line in LINES)),
    ("a.csv.zst", "id,text\n" + "".join(f'{i},"{line}"\n' for i, line in enumerate(LINES))),
    ("a.conll.zst", "The\tO\ncat\tO\n\nDog\tB-X\n"),
])
def test_zstd_for_every_text_format_in_several_frames(tmp_path, store, name, content):
    plain = tmp_path / name.removesuffix(".zst")
    plain.write_text(content)
    packed = tmp_path / "z" / name
    packed.parent.mkdir()
    write_zst(packed, content, frames=3)
    assert tokens_of(packed, store)[0] == tokens_of(plain, store)[0]


def test_truncated_and_corrupt_zstd_are_refused_not_cut_short(tmp_path, store):
    text = "".join(f"line {i} with some words\n" for i in range(3_000))
    p = tmp_path / "t.txt.zst"
    write_zst(p, text)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) - 10])
    with pytest.raises(CorpusError, match="(truncated or corrupt|not a readable compressed file).*ends inside a frame"):
        tokens_of(p, store)
    p.write_bytes(data[:100] + bytes(200) + data[300:])
    with pytest.raises(CorpusError, match="truncated or corrupt|not a readable compressed"):
        tokens_of(p, store)


def save_to_disk(folder, table, features=None, shards=1):
    """What `datasets.Dataset.save_to_disk` writes: Arrow IPC stream shards, dataset_info.json, state.json."""
    folder.mkdir()
    rows = table.num_rows
    names = [f"data-{i:05d}-of-{shards:05d}.arrow" for i in range(shards)]
    for i, name in enumerate(names):
        part = table.slice(i * rows // shards, (i + 1) * rows // shards - i * rows // shards)
        with pa.OSFile(str(folder / name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(part, max_chunksize=2)
    (folder / "dataset_info.json").write_text(json.dumps({"features": features or {}}))
    (folder / "state.json").write_text(json.dumps({"_data_files": [{"filename": n} for n in names]}))


NER_FEATURES = {"tokens": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "Sequence"},
                "ner_tags": {"feature": {"names": ["O", "B-PER", "I-PER", "B-LOC"], "_type": "ClassLabel"},
                             "_type": "Sequence"}}
NER = {"tokens": [["Ann", "Lee", "visited", "Rome"], ["Hi", None, "there"]], "ner_tags": [[1, 2, 0, 3], [0, 0, 0]]}


def test_arrow_folder_of_text_skips_its_metadata(tmp_path, store):
    folder = tmp_path / "wiki"
    save_to_disk(folder, pa.table({"text": LINES * 2}), shards=2)
    corpus = Corpus.from_path(folder)
    assert [f.name for f in corpus.files] == ["data-00000-of-00002.arrow", "data-00001-of-00002.arrow"]
    sentences, _ = tokens_of(folder, store)
    assert len(sentences) == 6 and sentences[0][:3] == ["the", "cat", "sat"]


def test_hub_ner_target_takes_tag_names_from_its_features_or_labels(tmp_path, store):
    folder = tmp_path / "ner"
    save_to_disk(folder, pa.table(NER), NER_FEATURES)
    sentences, notes = tokens_of(folder, store)
    assert sentences == [["ann", "lee", "visited", "rome"], ["hi", "there"]]
    assert notes.reasons == {"null token": 1}
    assert list(Corpus.from_path(folder).tagged_sentences()) == [
        (["Ann", "Lee", "visited", "Rome"], ["B-PER", "I-PER", "O", "B-LOC"]), (["Hi", "there"], ["O", "O"])]
    given = Corpus.from_path(folder, labels=("O", "B-X", "I-X", "B-Y"))
    assert next(given.tagged_sentences())[1] == ["B-X", "I-X", "O", "B-Y"]
    # Parquet from the Hub: the names sit in the schema's `huggingface` metadata
    table = pa.table(NER).replace_schema_metadata(
        {"huggingface": json.dumps({"info": {"features": NER_FEATURES}})})
    pq.write_table(table, tmp_path / "ner.parquet")
    assert next(Corpus.from_path(tmp_path / "ner.parquet").tagged_sentences())[1] == ["B-PER", "I-PER", "O", "B-LOC"]
    pq.write_table(pa.table(NER), tmp_path / "bare.parquet")
    with pytest.raises(CorpusError, match="numeric tags and no tag names.*--labels"):
        list(Corpus.from_path(tmp_path / "bare.parquet").tagged_sentences())
    with pytest.raises(CorpusError, match="row 1 has tag 2, but only 2 tag names"):
        list(Corpus.from_path(tmp_path / "bare.parquet", labels=("O", "B-X")).tagged_sentences())
    j = tmp_path / "ner.jsonl"
    j.write_text("".join(json.dumps({"tokens": t, "ner_tags": g}) + "\n" for t, g in zip(*NER.values())))
    assert next(Corpus.from_path(j, labels=("O", "B-PER", "I-PER", "B-LOC")).tagged_sentences())[1][0] == "B-PER"


def test_folder_mixing_formats_and_a_shard_without_the_column(tmp_path, store):
    d = tmp_path / "mixed"
    d.mkdir()
    pq.write_table(pa.table({"text": [LINES[0]]}), d / "a.parquet")
    write_zst(d / "b.jsonl.zst", json.dumps({"text": LINES[1]}) + "\n")
    (d / "c.txt.gz").write_bytes(gzip.compress((LINES[2] + "\n").encode()))
    pq.write_table(pa.table({"body": ["lost words"]}), d / "d.parquet")
    sentences, notes = tokens_of(d, store)
    assert [s[0] for s in sentences] == ["the", "a", "prices"]
    assert notes.reasons == {"shard without the text column": 1}
    assert "d.parquet has no 'text' column (found: body)" in notes.examples[0]


def test_one_text_as_parquet_jsonl_zst_and_plain_text_gives_identical_units(tmp_path, store):
    lines = [f"Unit {i}: words, more words; and {i * 7} others." for i in range(500)]
    plain = tmp_path / "same.txt"
    plain.write_text("\n".join(lines) + "\n")
    pq.write_table(pa.table({"text": lines}), tmp_path / "same.parquet", row_group_size=64)
    write_zst(tmp_path / "same.jsonl.zst", "".join(json.dumps({"text": line}) + "\n" for line in lines), frames=4)
    made = [tokenize_corpus(Corpus.from_path(tmp_path / n), store) for n in ("same.txt", "same.parquet",
                                                                               "same.jsonl.zst")]
    assert len({m.fingerprint for m in made}) == 1
    assert [m.tokens_file.read_bytes() for m in made[1:]] == [made[0].tokens_file.read_bytes()] * 2


def test_the_dashboard_offers_the_new_formats_from_the_server(tmp_path):
    from dashboard.loading import UPLOAD_TYPES
    from simcore.corpora.listing import corpus_files

    folder = tmp_path / "ner"
    save_to_disk(folder, pa.table(NER), NER_FEATURES)
    pq.write_table(pa.table({"text": ["x"]}), tmp_path / "a.parquet")
    write_zst(tmp_path / "b.jsonl.zst", '{"text": "y"}\n')
    assert [p.name for p in corpus_files(tmp_path, "server folder")] == [
        "a.parquet", "b.jsonl.zst", "data-00000-of-00001.arrow"]
    assert {"parquet", "zst", "arrow"} <= set(UPLOAD_TYPES)


HUB_ROWS = {"tokens": [["Ann", "Lee", "visited", "Rome"], None, ["Hi", "there"], ["Bo", None, "ran"],
                       ["in", "Oslo"]],
            "ner_tags": [[1, 2, 0, 3], [0], None, [1, 0, 0], [0, None]]}


def test_null_hub_rows_tokens_and_tags_are_counted_where_the_tags_are_read(tmp_path, store):
    # The shape: test.parquet with tokens and integer ner_tags, dataset_info.json beside it, as a target.
    folder = tmp_path / "hub"
    folder.mkdir()
    pq.write_table(pa.table(HUB_ROWS), folder / "test.parquet")
    (folder / "dataset_info.json").write_text(json.dumps({"features": NER_FEATURES}))
    notes = ReadNotes()
    assert list(Corpus.from_path(folder).tagged_sentences(notes)) == [
        (["Ann", "Lee", "visited", "Rome"], ["B-PER", "I-PER", "O", "B-LOC"]), (["Bo", "ran"], ["B-PER", "O"]),
        (["in"], ["O"])]
    # Worked by hand: row 2 has null tokens, row 3 null tags, row 4 a null token, row 5 a null tag.
    assert notes.reasons == {"row with null 'tokens'": 1, "row with null 'ner_tags'": 1, "null token": 1,
                             "null tag": 1}
    sentences, read = tokens_of(folder, store)  # the metadata file is never read as text
    assert sentences[0] == ["ann", "lee", "visited", "rome"] and read.reasons["null cell"] == 1
    lines = tmp_path / "hub.jsonl"
    lines.write_text("".join(json.dumps({"tokens": t, "ner_tags": g}) + "\n" for t, g in zip(*HUB_ROWS.values())))
    again = ReadNotes()
    assert len(list(Corpus.from_path(lines, labels=("O", "B-PER", "I-PER", "B-LOC")).tagged_sentences(again))) == 3
    assert again.reasons == notes.reasons


def test_character_tokenized_hub_rows_read_as_characters(tmp_path, store):
    chars = list("北京是中华人民共和国的首都。")
    tags = [3, 4] + [0] * (len(chars) - 2)
    features = {**NER_FEATURES, "ner_tags": {"feature": {"names": ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"],
                                                         "_type": "ClassLabel"}, "_type": "Sequence"}}
    folder = tmp_path / "msra"
    save_to_disk(folder, pa.table({"tokens": [chars], "ner_tags": [tags]}), features)
    assert list(Corpus.from_path(folder).tagged_sentences()) == [(chars, ["B-LOC", "I-LOC"] + ["O"] * 12)]
    assert tokens_of(folder, store)[0] == [chars]


@pytest.mark.parametrize(("names", "message"), [(["O", "B-PER\x1b[31m"], "control character"),
                                                (["O", ""], "tag name is empty"), (["O", " "], "tag name is empty")])
def test_label_names_from_dataset_info_are_checked_like_labels(tmp_path, names, message):
    folder = tmp_path / "bad"
    features = {**NER_FEATURES, "ner_tags": {"feature": {"names": names, "_type": "ClassLabel"}, "_type": "Sequence"}}
    save_to_disk(folder, pa.table({"tokens": [["a", "b"]], "ner_tags": [[0, 1]]}), features)
    with pytest.raises(CorpusError, match=f"dataset_info.json: .*{message}.*--labels"):
        list(Corpus.from_path(folder).tagged_sentences())
    with pytest.raises(InvalidArgument, match="labels must be a list of tag names"):
        Corpus.from_path(folder, labels=tuple(names))


def test_deeply_nested_dataset_info_is_simcores_own_error(tmp_path):
    folder = tmp_path / "deep"
    save_to_disk(folder, pa.table({"tokens": [["a"]], "ner_tags": [[0]]}))
    (folder / "dataset_info.json").write_text('{"features": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(CorpusError, match="dataset_info.json is JSON nested too deeply"):
        list(Corpus.from_path(folder).tagged_sentences())


CARD = """---
language:
- de
dataset_info:
  features:
  - name: id
    dtype: string
  - name: tokens
    sequence: string
  - name: ner_tags
    sequence:
      class_label:
        names:
          '0': O
          '1': B-PER
          '2': I-PER
          '3': B-LOC
  splits:
  - name: train
    num_examples: 2
---
# A German NER data set

Angela Merkel is a word of this card, never of the corpus.
"""


def hub_snapshot(folder, shards=1):
    """A Hub dataset repository as downloaded: README.md (the card), data/<split>-0000i-of-0000n.parquet."""
    (folder / "data").mkdir(parents=True)
    (folder / "README.md").write_text(CARD)
    (folder / ".gitattributes").write_text("*.parquet filter=lfs\n")
    rows = {"train": ([["Angela", "Merkel", "kam"], ["Paris", "ruft"]], [[1, 2, 0], [3, 0]]),
            "validation": ([["Bonn", "schläft"]], [[3, 0]]), "test": ([["Ann", "in", "Rom"]], [[1, 0, 3]])}
    for split, (tokens, tags) in rows.items():
        n = shards if split == "train" else 1
        for i in range(n):
            table = pa.table({"id": [str(j) for j in range(len(tokens))][i::n], "tokens": tokens[i::n],
                              "ner_tags": tags[i::n]})
            pq.write_table(table, folder / "data" / f"{split}-{i:05d}-of-{n:05d}.parquet")
    return folder


def test_a_hub_snapshot_folder_reads_as_one_corpus_with_its_cards_tag_names(tmp_path, store):
    folder = hub_snapshot(tmp_path / "germanner")
    corpus = Corpus.from_path(folder)
    assert [f.name for f in corpus.files] == ["test-00000-of-00001.parquet", "train-00000-of-00001.parquet",
                                              "validation-00000-of-00001.parquet"]
    assert list(corpus.tagged_sentences())[:2] == [(["Ann", "in", "Rom"], ["B-PER", "O", "B-LOC"]),
                                                   (["Angela", "Merkel", "kam"], ["B-PER", "I-PER", "O"])]
    sentences, _ = tokens_of(folder, store)
    assert sentences == [["ann", "in", "rom"], ["angela", "merkel", "kam"], ["paris", "ruft"], ["bonn", "schläft"]]


def test_a_datasets_dict_export_reads_as_one_corpus(tmp_path, store):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    save_to_disk(folder / "train", pa.table({"tokens": [["Ann", "Lee"]], "ner_tags": [[1, 2]]}), NER_FEATURES)
    save_to_disk(folder / "test", pa.table({"tokens": [["Rome"]], "ner_tags": [[3]]}), NER_FEATURES)
    assert all(f.suffix == ".arrow" for f in Corpus.from_path(folder).files)
    assert list(Corpus.from_path(folder).tagged_sentences()) == [(["Rome"], ["B-LOC"]), (["Ann", "Lee"],
                                                                                        ["B-PER", "I-PER"])]
    assert tokens_of(folder, store)[0] == [["rome"], ["ann", "lee"]]


def test_a_readme_without_a_card_header_and_a_metadata_file_given_alone(tmp_path, store):
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "README.md").write_text("Plain notes about the corpus.\n")
    (folder / "a.txt").write_text("one line\n")
    assert [f.name for f in Corpus.from_path(folder).files] == ["README.md", "a.txt"]  # no card: a text file
    (folder / "README.md").write_text(CARD)
    assert [f.name for f in Corpus.from_path(folder).files] == ["a.txt"]
