"""Dictionary-encoded Parquet and Arrow bombs: a file of a few hundred bytes (Parquet) or about 1 MB
(Arrow) whose rows all refer to one 1 MB string, 2 GB of text once decoded. A footer gives the
encoded size, so these are judged by what their rows decode to: each file, as a source, a target and
a selection pool, is refused with one line by the CLI running under a 2 GiB address-space limit."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from simcore.corpora.expansion import decoded_bytes, python_values

ROOT = Path(__file__).resolve().parent.parent
VALUE = "a " * 500_000  # 1 MB
ROWS = 2_100            # 2.1 GB decoded
LIMIT = 2 << 30


def _parquet_text(d: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": [VALUE] * ROWS}), d / "bomb.parquet", compression="zstd",
                   use_dictionary=True, row_group_size=ROWS)
    return d / "bomb.parquet"


def _parquet_tokens(d: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"tokens": [[VALUE, VALUE]] * (ROWS // 2), "ner_tags": [[1, 0]] * (ROWS // 2)}),
                   d / "bomb.parquet", compression="zstd", use_dictionary=True)
    (d / "dataset_info.json").write_text(json.dumps({"features": {"ner_tags": {"feature": {"names": ["O", "B-X"]}}}}))
    return d / "bomb.parquet"


def _arrow_table():
    import pyarrow as pa

    return pa.table({"text": pa.DictionaryArray.from_arrays(pa.array([0] * ROWS, pa.int32()), pa.array([VALUE]))})


def _arrow_stream(d: Path) -> Path:
    import pyarrow as pa

    table = _arrow_table()
    with pa.OSFile(str(d / "bomb.arrow"), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return d / "bomb.arrow"


def _arrow_file(d: Path) -> Path:
    import pyarrow as pa

    table = _arrow_table()
    with pa.OSFile(str(d / "bomb.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return d / "bomb.arrow"


def _saved_folder(d: Path) -> Path:
    """What ``datasets.save_to_disk`` writes: Arrow stream shards, dataset_info.json and state.json."""
    folder = d / "bomb"
    folder.mkdir()
    _arrow_stream(folder).rename(folder / "data-00000-of-00001.arrow")
    (folder / "dataset_info.json").write_text(json.dumps({"features": {"text": {"dtype": "string"}}}))
    (folder / "state.json").write_text(json.dumps({"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}))
    return folder


BOMBS = {"parquet text": _parquet_text, "parquet tokens": _parquet_tokens, "arrow stream": _arrow_stream,
         "arrow file": _arrow_file, "save_to_disk folder": _saved_folder}


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _cli(args: list[str], tmp_path: Path) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "simcore", *args, "--cache", str(tmp_path / "cache")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, preexec_fn=_limited)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("role", ["source", "target", "pool"])
@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_dictionary_bomb_is_refused_in_bounded_memory(tmp_path, bomb, role):
    if bomb == "parquet tokens" and role == "source":
        pytest.skip("Hub NER rows are targets")
    (tmp_path / "in").mkdir()
    path = BOMBS[bomb](tmp_path / "in")
    sample = ROOT / "sample_data"
    news, ner = sample / "sources" / "news.txt", sample / "targets" / "news_ner.conll"
    if role == "pool":
        args = ["select", "--pool", str(path), "--target", str(ner), "--method", "ppl", "--top", "5",
                "--out", str(tmp_path / "kept.txt"), "--quiet"]
    else:
        for side, given in (("sources", path if role == "source" else news), ("targets", ner if role == "source" else path)):
            (tmp_path / side).mkdir()
            (tmp_path / side / given.name).symlink_to(given)
        args = ["matrix", "--sources", str(tmp_path / "sources"), "--targets", str(tmp_path / "targets"),
                "--measures", "tvc", "--sample-tokens", "2000", "--bootstrap", "0", "--jobs", "1",
                "--out", str(tmp_path / "m.csv")]
    code, streams = _cli(args, tmp_path)
    assert "decode to more than" in streams, streams[-2000:]
    assert code == 2 and "Traceback" not in streams and "out of memory" not in streams


def test_decoded_bytes_by_hand():
    import pyarrow as pa

    words = pa.DictionaryArray.from_arrays(pa.array([0, 1, 1, None, 1], pa.int32()), pa.array(["ab", "cde"]))
    assert decoded_bytes(words) == 2 + 3 + 3 + 3
    lists = pa.array([["ab", "c"], None, ["dddd"]])
    assert decoded_bytes(lists) == 7 + 8 * 3
    assert decoded_bytes(pa.array(["x" * 10, None])) == 10


def test_a_large_dictionary_batch_shares_its_strings():
    import pyarrow as pa

    big = "w " * 20_000_000  # 40 MB: two rows pass the batch bound
    array = pa.DictionaryArray.from_arrays(pa.array([0, 0, None, 0], pa.int32()), pa.array([big]))
    values = python_values(array)
    assert values[0] is values[1] is values[3] and values[2] is None
    assert python_values(pa.array(["a", None])) == ["a", None]


def test_a_dashboard_upload_goes_through_the_same_check(tmp_path):
    """An uploaded file is stored by its hash and read by the same readers: the bomb is refused."""
    from simcore.corpora.corpus import Corpus, save_upload
    from simcore.utils.errors import CorpusError
    from simcore.utils.store import ArtefactStore

    (tmp_path / "in").mkdir()
    for make in (_parquet_text, _arrow_stream):
        path = make(tmp_path / "in")
        stored = save_upload(path.read_bytes(), path.name, ArtefactStore(tmp_path / "store"))
        with pytest.raises(CorpusError, match="decode to more than"):
            next(iter(Corpus.from_path(stored).units()))
