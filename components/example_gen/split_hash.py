"""Which split a row goes to: a hash of its key that is the same on every run, machine and
batching, computed for a whole batch of keys at once."""

import numpy as np
import pyarrow as pa

# A polynomial hash of the key's UTF-8 bytes, mixed by splitmix64's finalizer.
_HASH_BASE = np.uint64(0x100000001B3)
_COLUMNS_AT_ONCE = 2048  # key bytes multiplied out per matrix product (bounded memory)


def _right_aligned(data, offsets, lengths) -> np.ndarray:
    """The keys as rows of a uint8 matrix as wide as the longest, each ending at the right
    edge (zeros before it): copied a key at a time when keys are long (a wide table's whole
    rows), else scattered at once (an index per byte costs less than a loop over rows)."""
    rows, width = len(lengths), int(lengths.max(initial=0))
    matrix = np.zeros((rows, width), np.uint8)
    if rows <= width:
        for row in range(rows):
            if lengths[row]:
                matrix[row, width - lengths[row] :] = data[offsets[row] : offsets[row + 1]]
    else:  # byte i of the keys goes to i + (row + 1) * width - the key's end
        ends = offsets[1:] - offsets[0]
        shift = np.arange(1, rows + 1) * width - ends
        at = np.arange(ends[-1]) + np.repeat(shift, lengths)  # rows > width >= 0: some
        matrix.reshape(-1)[at] = data[offsets[0] : offsets[-1]]
    return matrix


def split_indices(keys: pa.Array, bounds: np.ndarray) -> np.ndarray:
    """Index of the split each key falls in: its hash modulo the total weight, placed among
    the cumulative weights `bounds` (e.g. [2, 3] for train 2, eval 1). Stable across runs,
    machines and batchings."""
    keys = keys.cast(pa.large_binary())
    offsets = np.frombuffer(keys.buffers()[1], np.int64)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(keys.buffers()[2], np.uint8)
    lengths = np.diff(offsets)
    # Byte j of a key of n bytes weighs BASE ** (n - 1 - j): right-aligned in a matrix of
    # the longest key's width w, every key's byte in column c weighs BASE ** (w - 1 - c), and
    # the zeros before a shorter key add nothing. Products wrap modulo 2 ** 64, as meant.
    matrix = _right_aligned(data, offsets, lengths)
    width = matrix.shape[1]
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(max(width, 1), _HASH_BASE))
        weights = np.ascontiguousarray(np.concatenate([[np.uint64(1)], powers[:-1]])[:width][::-1])
        sums = np.zeros(len(keys), np.uint64)
        for first in range(0, width, _COLUMNS_AT_ONCE):
            block = slice(first, first + _COLUMNS_AT_ONCE)
            sums += matrix[:, block].astype(np.uint64) @ weights[block]
        sums += lengths.astype(np.uint64)  # "" and "\0" differ
        sums ^= sums >> np.uint64(30)
        sums *= np.uint64(0xBF58476D1CE4E5B9)
        sums ^= sums >> np.uint64(27)
        sums *= np.uint64(0x94D049BB133111EB)
        sums ^= sums >> np.uint64(31)
    return np.searchsorted(bounds, sums % np.uint64(bounds[-1]), side="right")
