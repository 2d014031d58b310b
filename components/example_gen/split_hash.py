"""Which split a row goes to: a hash of its key that is the same on every run, machine and
batching, computed for a whole batch of keys at once."""

import numpy as np
import pyarrow as pa

# A polynomial hash of the key's UTF-8 bytes, mixed by splitmix64's finalizer.
_HASH_BASE = np.uint64(0x100000001B3)


def split_indices(keys: pa.Array, bounds: np.ndarray) -> np.ndarray:
    """Index of the split each key falls in: its hash modulo the total weight, placed among
    the cumulative weights `bounds` (e.g. [2, 3] for train 2, eval 1). Stable across runs,
    machines and batchings."""
    keys = keys.cast(pa.large_binary())
    offsets = np.frombuffer(keys.buffers()[1], np.int64)[keys.offset : keys.offset + len(keys) + 1]
    data = np.frombuffer(keys.buffers()[2], np.uint8)[offsets[0] : offsets[-1]]
    starts = offsets[:-1] - offsets[0]
    lengths = np.diff(offsets)
    # byte j of a key of length n weighs BASE ** (n - 1 - j): Horner's rule, vectorized
    from_end = np.repeat(starts + lengths, lengths) - np.arange(len(data)) - 1
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(max(int(lengths.max(initial=0)), 1), _HASH_BASE))
        powers = np.concatenate([[np.uint64(1)], powers[:-1]])
        weighted = data.astype(np.uint64) * powers[from_end]
        sums = np.zeros(len(keys), np.uint64)
        nonempty = lengths > 0
        sums[nonempty] = np.add.reduceat(weighted, starts[nonempty])
        sums += lengths.astype(np.uint64)  # "" and "\0" differ
        sums ^= sums >> np.uint64(30)
        sums *= np.uint64(0xBF58476D1CE4E5B9)
        sums ^= sums >> np.uint64(27)
        sums *= np.uint64(0x94D049BB133111EB)
        sums ^= sums >> np.uint64(31)
    return np.searchsorted(bounds, sums % np.uint64(bounds[-1]), side="right")
