"""The one-pass sample (bottom-k by a seeded hash): checked against the definition computed another way
(every key hashed and sorted here), for any order of shards, and across formats holding the same text."""

import hashlib
import itertools
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.sampling import Candidates, read_candidates, sample_source, shard_candidates
from simcore.utils.errors import InvalidArgument
from simcore.utils.store import ArtefactStore

LINES = [f"Unit {i} says: {'word ' * (i % 7)}and {i * 13 % 101} more." for i in range(400)]


def expected_bottom_k(lines, target, index, seed):
    """The definition, by brute force: sort every unit by its key, keep the shortest prefix reaching ``target``."""
    def key(line):
        block, j = divmod(index, 8)
        raw = hashlib.blake2b(line.encode(), digest_size=8 * min(8, SAMPLES - 8 * block),
                              key=seed.to_bytes(8, "big", signed=True), person=block.to_bytes(4, "big")).digest()
        return int.from_bytes(raw[8 * j: 8 * j + 8], "big")
    chosen, total = [], 0
    for line in sorted(lines, key=key):
        if total >= target:
            break
        chosen.append(line)
        total += len(line.split())
    return chosen


SAMPLES = 3


def write_shards(folder, lines, n):
    folder.mkdir()
    for s in range(n):
        (folder / f"part-{s}.txt").write_text("".join(line + "\n" for line in lines[s::n]))
    return Corpus.from_path(folder)


def test_kept_units_are_the_smallest_keys_reaching_the_target(tmp_path):
    corpus = write_shards(tmp_path / "c", LINES, 1)
    found = read_candidates(corpus, 500, SAMPLES, 7)
    assert found.words == sum(len(line.split()) for line in LINES) and found.units == 400
    for i in range(SAMPLES):
        assert found.ordered(i) == expected_bottom_k(LINES, 500, i, 7)
    assert found.ordered(0) != found.ordered(1)


def test_the_same_candidates_whatever_the_shards_and_their_order(tmp_path):
    whole = read_candidates(write_shards(tmp_path / "one", LINES, 1), 700, SAMPLES, 3)
    sharded = write_shards(tmp_path / "four", LINES, 4)
    parts = [shard_candidates(sharded, f, 700, SAMPLES, 3) for f in sharded.files]
    for order in itertools.permutations(parts):
        merged = Candidates(700, SAMPLES, 3)
        for part in order:
            merged.merge(part)
        assert [merged.ordered(i) for i in range(SAMPLES)] == [whole.ordered(i) for i in range(SAMPLES)]
        assert merged.words == whole.words


def test_every_size_in_one_pass_exact_nested_and_whole_above_the_source(tmp_path, store):
    corpus = write_shards(tmp_path / "c", LINES, 3)
    result = sample_source(corpus, [300, 100, 1000, 10**6], SAMPLES, 13, store)
    full = tokenize_corpus(corpus, store)
    assert sorted(result.samples) == [100, 300, 1000, 10**6]
    for size in (100, 300, 1000):
        assert [s.n_tokens for s in result.samples[size]] == [size] * SAMPLES
    small, large = (list(result.samples[n][1].sentences()) for n in (300, 1000))
    flat = [t for s in large for t in s]
    assert [t for s in small for t in s] == flat[:300], "a smaller sample is the start of the larger one"
    assert result.whole == (10**6,)
    assert {s.n_tokens for s in result.samples[10**6]} == {full.n_tokens}
    assert sorted(map(tuple, result.samples[10**6][0].sentences())) == sorted(map(tuple, full.sentences()))
    again = sample_source(write_shards(tmp_path / "other", LINES[::-1], 5), [300], SAMPLES, 13, store)
    assert [s.tokens_file.read_bytes() for s in again.samples[300]] == [
        s.tokens_file.read_bytes() for s in result.samples[300]]
    assert sample_source(corpus, [300], SAMPLES, 14, store).samples[300][0].tokens_file.read_bytes() != \
        result.samples[300][0].tokens_file.read_bytes()


def test_the_same_text_as_parquet_jsonl_zst_and_plain_text_gives_the_same_samples(tmp_path, store):
    (tmp_path / "a.txt").write_text("".join(line + "\n" for line in LINES))
    pq.write_table(pa.table({"text": LINES}), tmp_path / "a.parquet", row_group_size=50)
    (tmp_path / "a.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(
        "".join(json.dumps({"text": line}) + "\n" for line in LINES).encode()))
    results = [sample_source(Corpus.from_path(tmp_path / n), [200, 800], 2, 5, store)
               for n in ("a.txt", "a.parquet", "a.jsonl.zst")]
    for size in (200, 800):
        for i in range(2):
            texts = {r.samples[size][i].tokens_file.read_bytes() for r in results}
            assert len(texts) == 1
    assert len({r.fingerprint for r in results}) == 3, "the fingerprint follows the bytes"


def test_fingerprint_follows_every_byte_and_arguments_are_checked(tmp_path, store):
    p = tmp_path / "a.txt"
    p.write_text("one two three\nfour five\n")
    first = sample_source(Corpus.from_path(p), [2], 1, 1, store).fingerprint
    p.write_text("one two three\nfour fivf\n")
    assert sample_source(Corpus.from_path(p), [2], 1, 1, store).fingerprint != first
    for sizes, samples, seed in (([0], 1, 1), ([], 1, 1), ("10", 1, 1), ([5], 0, 1), ([5], 1, 2**70)):
        with pytest.raises(InvalidArgument):
            sample_source(Corpus.from_path(p), sizes, samples, seed, store)


def test_a_shard_without_the_text_column_is_counted_in_the_pass(tmp_path, store):
    folder = tmp_path / "shards"
    folder.mkdir()
    pq.write_table(pa.table({"text": LINES[:200]}), folder / "a.parquet")
    pq.write_table(pa.table({"body": LINES[200:]}), folder / "b.parquet")
    result = sample_source(Corpus.from_path(folder), [100], 1, 2, store)
    assert result.units == 200 and result.notes.reasons == {"shard without the text column": 1}


def test_a_second_pass_over_unchanged_files_reads_nothing(tmp_path, store, monkeypatch):
    corpus = write_shards(tmp_path / "c", LINES, 2)
    first = sample_source(corpus, [300, 100], 2, 4, store)
    import simcore.corpora.sampling as sampling

    monkeypatch.setattr(sampling, "read_candidates", lambda *a, **k: pytest.fail("read again"))
    again = sample_source(corpus, [100, 300], 2, 4, store)
    assert again == first
    (corpus.files[0]).write_text("changed text\n")
    monkeypatch.undo()
    assert sample_source(Corpus.from_path(tmp_path / "c"), [100, 300], 2, 4, store).fingerprint != first.fingerprint


def test_a_large_plain_file_is_read_in_line_aligned_ranges_with_the_same_samples(tmp_path, store, monkeypatch):
    import simcore.corpora.sampling as sampling
    from simcore.corpora import text as text_reader

    monkeypatch.setattr(text_reader, "LINE_BOUND", 300)
    long_line = "long " * 200  # 1,000 characters: split at the line bound, within one range
    for name, content in (("big.txt", "".join(line + "\n" for line in LINES[:200] + [long_line] + LINES[200:])),
                          ("big.jsonl", "".join(json.dumps({"text": line}) + "\n" for line in LINES))):
        p = tmp_path / name
        p.write_text(content)
        corpus = Corpus.from_path(p)
        whole = sample_source(corpus, [300, 1000], 2, 9, store)
        monkeypatch.setattr(sampling, "RANGE_BYTES", 2000)
        work = sampling.pieces(corpus)
        assert len(work) > 5 and work[0][1] == 0 and work[-1][2] == p.stat().st_size
        assert all(a[2] == b[1] for a, b in zip(work, work[1:])), "contiguous ranges"
        raw = p.read_bytes()
        assert all(raw[start - 1:start] == b"\n" for _, start, _ in work[1:]), "each range starts a line"
        split = sample_source(corpus, [300, 1000], 2, 9, store)
        assert (split.words, split.units) == (whole.words, whole.units)
        assert split.notes.reasons == whole.notes.reasons
        for size in (300, 1000):
            assert [s.tokens_file.read_bytes() for s in split.samples[size]] == [
                s.tokens_file.read_bytes() for s in whole.samples[size]]
        monkeypatch.setattr(sampling, "RANGE_BYTES", 1 << 30)


@pytest.mark.parametrize("lines", [[f"{line} ({i})" for i in range(12) for line in LINES], LINES[:40]],
                         ids=["larger source", "source smaller than the top size"])
def test_a_later_call_for_smaller_sizes_reads_nothing_and_gives_the_same_bytes(tmp_path, store, monkeypatch, lines):
    import simcore.corpora.sampling as sampling

    corpus = write_shards(tmp_path / "c", lines, 2)
    fresh = sample_source(corpus, [300, 10_000, 30_000], 2, 4, ArtefactStore(tmp_path / "fresh"))
    sample_source(corpus, [30_000], 2, 4, store)
    monkeypatch.setattr(sampling, "read_candidates", lambda *a, **k: pytest.fail("read again"))
    later = sample_source(corpus, [10_000, 300], 2, 4, store)
    assert later.whole == tuple(s for s in (300, 10_000) if s in fresh.whole)
    assert (later.fingerprint, later.words, later.units) == (fresh.fingerprint, fresh.words, fresh.units)
    for size in (300, 10_000):
        assert [s.tokens_file.read_bytes() for s in later.samples[size]] == [
            s.tokens_file.read_bytes() for s in fresh.samples[size]]
        assert [s.meta for s in later.samples[size]] == [s.meta for s in fresh.samples[size]]


@pytest.mark.parametrize("samples", [1, SAMPLES])
def test_pieces_read_under_the_bounds_merged_so_far_keep_less_and_merge_the_same(tmp_path, samples):
    """A piece read with the bounds of the candidates merged before it (as the parallel pass does) keeps
    only units under them, and the merge is the brute-force bottom-k all the same."""
    sharded = write_shards(tmp_path / "eight", LINES, 8)
    merged, kept = Candidates(300, samples, 5), []
    for f in sharded.files:
        part = shard_candidates(sharded, f, 300, samples, 5, ceilings=merged.bounds())
        kept.append(sum(len(h) for h in part.heaps))
        merged.merge(part)
    assert merged.words == sum(len(line.split()) for line in LINES) and merged.units == 400
    whole = read_candidates(write_shards(tmp_path / "one", LINES, 1), 300, samples, 5)
    assert [merged.ordered(i) for i in range(samples)] == [whole.ordered(i) for i in range(samples)]
    if samples == SAMPLES:  # the brute force's keys are those of SAMPLES samples (a key depends on the count)
        assert [merged.ordered(i) for i in range(samples)] == [expected_bottom_k(LINES, 300, i, 5)
                                                               for i in range(samples)]
    plain = [sum(len(h) for h in shard_candidates(sharded, f, 300, samples, 5).heaps) for f in sharded.files]
    assert kept[0] == plain[0] and sum(kept[1:]) < sum(plain[1:]) / 2  # the later pieces return far less
    assert Candidates(300, samples, 5).bounds() is None  # not full: no bound yet


def test_a_size_is_tokenized_when_asked_for_from_the_stored_kept_units(tmp_path, store):
    """A source larger than the pass's top: no size is tokenized by the pass itself; each, when asked
    for, is its kept units in key order tokenized and cut (computed here with ``tokenize``), also after
    the pass is read back from the store, and the top size never tokenized unless asked for."""
    from simcore.corpora.tokenize import tokenize

    corpus = write_shards(tmp_path / "c", LINES, 2)
    result = sample_source(corpus, [50, 400], SAMPLES, 5, store)
    assert result.whole == () and not (store.root / "sample").exists()

    def expected(size, i):
        lines, left = [], size
        for line in expected_bottom_k(LINES, 400, i, 5):
            tokens = tokenize(line)
            if left > 0 and tokens:
                lines.append(" ".join(tokens[:left]))
                left -= len(tokens)
        return "".join(line + "\n" for line in lines)

    for i in range(SAMPLES):
        assert result.samples[50][i].tokens_file.read_text() == expected(50, i)
    assert len(list((store.root / "sample").iterdir())) == SAMPLES  # 50 only: 400 not drawn
    again = sample_source(corpus, [400, 50], SAMPLES, 5, store)
    for i in range(SAMPLES):
        assert again.samples[400][i].tokens_file.read_text() == expected(400, i)
        assert again.samples[50][i].tokens_file.read_bytes() == result.samples[50][i].tokens_file.read_bytes()


@pytest.mark.parametrize("samples", [1, SAMPLES])
def test_settling_in_batches_keeps_what_the_heap_keeps(tmp_path, monkeypatch, samples):
    """offer() puts units aside and settles them in batches (here every 50 units, so hundreds of
    settles): the same kept units as pushing each on the heap and popping (add), and the
    definition."""
    import simcore.corpora.sampling as sampling

    monkeypatch.setattr(sampling, "SETTLE_EVERY", 50)
    corpus = write_shards(tmp_path / "c", LINES, 1)
    batched = read_candidates(corpus, 500, samples, 11)
    heap = Candidates(500, samples, 11)
    for line in LINES:
        heap.add(line)
    assert [batched.ordered(i) for i in range(samples)] == [heap.ordered(i) for i in range(samples)]
    assert batched.totals == heap.totals and batched.bounds() == heap.bounds()
    if samples == SAMPLES:
        assert [batched.ordered(i) for i in range(samples)] == [expected_bottom_k(LINES, 500, i, 11)
                                                                for i in range(samples)]


def test_settling_on_a_real_gzip_source_keeps_what_the_heap_keeps(shared_data, monkeypatch):
    """The same on a real source (its repeated lines share keys): every line pushed on the heap."""
    import simcore.corpora.sampling as sampling

    monkeypatch.setattr(sampling, "SETTLE_EVERY", 1000)
    path = shared_data / "sources" / "news_1bwb.txt.gz"
    corpus = Corpus("news", path)
    batched = read_candidates(corpus, 30_000, 2, 3)
    heap = Candidates(30_000, 2, 3)
    for unit in corpus.units():
        heap.add(unit)
    assert [batched.ordered(i) for i in range(2)] == [heap.ordered(i) for i in range(2)]
    assert (batched.words, batched.units, batched.totals) == (heap.words, heap.units, heap.totals)
