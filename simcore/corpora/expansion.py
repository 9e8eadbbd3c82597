"""What a Parquet or Arrow column expands to once decoded, counted without decoding it.

A dictionary-encoded column stores each distinct value once and a small index per row: a 500-byte
Parquet file (or a 1 MB Arrow file) can hold one 1 MB string referenced two thousand times, which a
reader that turns rows into Python strings expands to gigabytes. A footer's sizes are the encoded
ones, so the readers (:mod:`.columnar`) read such columns as dictionaries, count here the bytes
their rows decode to (each row's value length, from the dictionary, summed over the indices) and
refuse a file past the bomb limit before reading a row; a batch too large to turn into Python
strings at once is turned into strings that share the dictionary's (:func:`python_values`).
"""

from __future__ import annotations

from typing import Any

BATCH_DECODE_BYTES = 64 << 20  # a batch decoding to more than this is converted sharing its dictionary


def decoded_bytes(array: Any) -> int:
    """The bytes ``array``'s values take once decoded: string and binary lengths, a dictionary's value
    lengths once per row that refers to them, list elements summed; fixed-width values their width."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        return sum(decoded_bytes(chunk) for chunk in array.chunks)
    kind = array.type
    if len(array) == 0:
        return 0
    if pa.types.is_dictionary(kind):
        sizes = _value_sizes(array.dictionary)
        taken = pc.take(sizes, array.indices)  # a null index takes a null
        return int(pc.sum(taken).as_py() or 0)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return decoded_bytes(pc.list_flatten(array)) + 8 * len(array)
    if _is_text(kind):
        return int(pc.sum(pc.binary_length(array)).as_py() or 0)
    return int(array.nbytes)


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind))


def _value_sizes(values: Any) -> Any:
    """Each dictionary value's decoded size, as an int64 array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if _is_text(values.type):
        return pc.fill_null(pc.binary_length(values), 0).cast(pa.int64())
    return pa.array([decoded_bytes(values.slice(i, 1)) for i in range(len(values))], pa.int64())


def has_dictionary(kind: Any) -> bool:
    """True when a column's type is, or holds, a dictionary."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return True
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return has_dictionary(kind.value_type)
    return False


def python_values(array: Any) -> list[Any]:
    """``array.to_pylist()``; for a batch decoding past :data:`BATCH_DECODE_BYTES`, with every row
    that refers to one dictionary value given the same Python string (memory: the dictionary once)."""
    import pyarrow as pa

    if not has_dictionary(array.type) or decoded_bytes(array) <= BATCH_DECODE_BYTES:
        return array.to_pylist()
    if pa.types.is_dictionary(array.type):
        values = array.dictionary.to_pylist()
        return [None if i is None else values[i] for i in array.indices.to_pylist()]
    flat = python_values(array.values)
    offsets = array.offsets.to_pylist()
    valid = array.is_valid().to_pylist()
    return [flat[offsets[i]:offsets[i + 1]] if valid[i] else None for i in range(len(array))]
