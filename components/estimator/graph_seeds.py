"""The op seeds tf.estimator 2.15's graphs gave random ops that name no seed, given again on
the TF2 path, so that a seeded canned model draws 2.15's numbers.

Under 2.15, `RunConfig(tf_random_seed=S)` was the graph seed of each call's new graph, and
each random op without a seed of its own took as op seed the number of such ops the graph
had before it: input_fn's first (a `Dataset.shuffle()` with no seed), then model_fn's (a
canned DNN's kernel initializers and dropout, in the order it built them), from 0 again
in the next call's graph. The TF2 path calls input_fn eagerly, where TensorFlow draws op
seeds from a generator seeded by S instead, and traces model_fn in a function, which counts
its own. `counting(S)` makes the eager ones count from 0 as that graph did, and
`op_seeds()` hands the canned model the next pair of that count for a draw of its own (in
a TF1 graph: the graph's own), so every draw runs the kernel 2.15 ran with 2.15's seeds."""

import contextlib
import random
import weakref

import tensorflow as tf
from tensorflow.python.eager import context
from tensorflow.python.framework import random_seed
from tensorflow.python.ops import gen_random_ops
from tf_keras.src import backend as keras_backend


class _Count:
    """Stands in for the eager context's generator of op seeds: 0, 1, 2, ..."""

    def __init__(self, owner):
        self.drawn = 0
        self.owner = owner

    def randint(self, low, high):
        del low, high  # (the generator's range: a count stays far below it)
        drawn, self.drawn = self.drawn, self.drawn + 1
        return drawn


_counts = []  # the counts of the calls under way, innermost last
# The owners (Estimators) whose traced functions hold a stateful kernel of counted seeds.
_restarting = weakref.WeakSet()


@contextlib.contextmanager
def counting(seed, owner, first_trace=False):
    """Within: random ops that run eagerly without a seed of their own take the op seeds a
    new TF1 graph of graph seed `seed` gave them (0, 1, ...), and `op_seeds()` continues
    that count. Nothing when nothing runs eagerly (a TF1 graph counts its own); when
    `seed` is None, the program's global seed (`tf.random.set_seed`) is off within, as
    2.15's new graph did not see it (a `shuffle(seed=1)` then orders as 2.15's did). The
    generator and seed before it are back afterwards.

    On `owner`'s first trace the eager context's cached kernels are dropped first, as
    2.15's new graph had none: the initial values run eagerly, and a random kernel of the
    same seeds cached by an earlier Estimator's call would go on with its numbers.

    Where `owner`'s traced function holds a stateful kernel of such seeds (dropout), the
    kernels cached by earlier calls are dropped first, so that its draws start again from
    their seeds as in 2.15's new graph of each call (it costs the function's new
    instantiation, a fraction of a second a call: only then)."""
    if not tf.executing_eagerly():
        yield
        return
    if seed is None:  # (2.15's graph had no seed: not the program's global one either)
        with _eager_seed_kept() as eager:
            eager._seed = None
            yield
        return
    with _eager_seed_kept() as eager:
        if first_trace or owner in _restarting:
            tf.random.set_seed(seed)  # (it also drops the cached kernels)
        eager._seed = seed
        count = _Count(owner)
        eager._rng = count
        _counts.append(count)
        try:
            yield
        finally:
            _counts.remove(count)


@contextlib.contextmanager
def keras_seeded(seed):
    """Within: tf_keras draws its layers' seeds from a generator of `seed`, and eager ops
    from the global seed `seed`, as `tf_keras.utils.set_random_seed(seed)` has them, but
    the program's own `random` and `numpy.random` are not touched (2.15 never touched
    them), and the generator and global seed before are back afterwards."""
    drawn = keras_backend._SEED_GENERATOR
    before = getattr(drawn, "generator", None)
    with _eager_seed_kept():
        tf.random.set_seed(seed)
        drawn.generator = random.Random(seed)
        try:
            yield
        finally:
            drawn.generator = before


@contextlib.contextmanager
def _eager_seed_kept():
    """The eager context (yielded), its global seed and generator of op seeds put back
    on exit (`_rng` is made by the first `tf.random.set_seed`: None stands for none)."""
    eager = context.context()
    before = (eager._seed, getattr(eager, "_rng", None))
    try:
        yield eager
    finally:
        eager._seed, eager._rng = before


def op_seeds():
    """The (graph seed, op seed) pair 2.15's graph gave its next random op that names no
    seed, counted; None where nothing is counted (no `tf_random_seed`)."""
    if tf.executing_eagerly() or tf.inside_function():
        if not _counts:
            return None
        with tf.init_scope():  # (the eager count, also while tracing)
            return random_seed.get_seed(None)
    if tf.compat.v1.get_default_graph().seed is None:
        return None
    return random_seed.get_seed(None)


def kernel_initializer():
    """A canned DNN's kernel initializer: where seeds are counted, 2.15's (TF1's Glorot
    uniform, drawing the graph's next op seeds when it runs); else Keras's default."""
    if op_seeds_counted():
        return tf.compat.v1.glorot_uniform_initializer()
    return "glorot_uniform"


def op_seeds_counted():
    """Whether `op_seeds()` gives pairs here (without drawing one)."""
    if tf.executing_eagerly() or tf.inside_function():
        return bool(_counts)
    return tf.compat.v1.get_default_graph().seed is not None


def dropout(inputs, rate):
    """2.15's dropout of a canned DNN's layer in training, drawing from `op_seeds()`: a
    stateful uniform kernel of that pair (each step its next numbers); None where seeds
    are not counted."""
    seeds = op_seeds()
    if seeds is None:
        return None
    if tf.inside_function() and _counts:
        _restarting.add(_counts[-1].owner)

    def uniform(shape, dtype):
        return gen_random_ops.random_uniform(shape, dtype, seed=seeds[0], seed2=seeds[1])

    return tf.nn.experimental.general_dropout(inputs, rate, uniform_sampler=uniform)
