"""The kit's log lines where tf.estimator 2.15 wrote its own: TensorFlow's logger.

2.15 logged through `tf.get_logger()` (the `tensorflow` logger), so a program that
called `tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)` (every public
sample did) saw `INFO:tensorflow:Loss for final step: 0.69.` and the like on stderr, and
scripts grepped them.  The kit's modules log under `components.estimator.*`, which that
call does not reach.  `follow_tensorflow_verbosity()` gives the package's logger the
`tensorflow` logger's level (lowered to its own where one is set), and shows each record
that logger would show as it showed 2.15's: named `tensorflow`, through its filters and
handlers, then (as far as it propagates) the root logger's.
"""

import contextlib
import logging
import threading

import numpy as np

PACKAGE = "components.estimator"
TENSORFLOW = "tensorflow"


# numpy 2.3 writes float32 numbers of 1e7 and more in scientific notation (`1.5e+07`),
# and numpy 2 a number's repr with its type (`np.float32(0.475)`); the numpy 1.x under
# 2.15 wrote `15000000.0` (positionally below 1e16) and `0.475`.
_NUMPY_1_STR = {"legacy": "1.25"} if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else {}


def printed_as_numpy_1():
    """numpy's print options in which `%s` (and `%r`) of a number gives what 2.15's log
    lines and printed results showed (under numpy 1.x)."""
    return np.printoptions(**_NUMPY_1_STR)


def as_printed(value):
    """`%s` of `value` (a number, numpy's or a 0-d array) as 2.15's log lines showed it."""
    with printed_as_numpy_1():
        return str(value)


class _FollowsTensorflow(logging.Logger):
    """The package's logger: its level is the `tensorflow` logger's effective level (so
    `tf.get_logger().setLevel("ERROR")` quiets it as it quieted 2.15's lines, whatever
    the root logger's level), lowered to its own where one is set, or to one set on
    `components` above it.  Setting a level sets its own."""

    @property
    def level(self):
        own = self.__dict__.get("_own_level", logging.NOTSET) or _level_set_above(self)
        tensorflow_level = logging.getLogger(TENSORFLOW).getEffectiveLevel()
        return min(own, tensorflow_level) if own else tensorflow_level

    @level.setter
    def level(self, value):
        self.__dict__["_own_level"] = value

    @property
    def propagate(self):
        """As TensorFlow's logger propagates (`tf.get_logger().propagate = False` kept
        2.15's lines from the root's handlers), and not a record its filters refused."""
        if getattr(_REFUSED, "record", False):
            _REFUSED.record = False
            return False
        own = self.__dict__.get("_own_propagate", True)
        return own and logging.getLogger(TENSORFLOW).propagate

    @propagate.setter
    def propagate(self, value):
        self.__dict__["_own_propagate"] = value


# Set (for this thread) while a record TensorFlow's logger refused is being handled.
_REFUSED = threading.local()
# The kit's record TensorFlow's logger's filters are looking at (for this thread).
_KITS = threading.local()


def _level_set_above(logger):
    """The level set on the nearest logger between `logger` and the root, or NOTSET."""
    parent = logger.parent
    while parent is not None and parent is not logging.root:
        if parent.level:
            return parent.level
        parent = parent.parent
    return logging.NOTSET


class _ToTensorflowHandlers(logging.Handler):
    """Shows a record as the `tensorflow` logger showed 2.15's when that logger is enabled
    for its level: named `tensorflow`, through its filters and its handlers; the root
    logger's handlers then get it by propagation, as far as TensorFlow's logger
    propagates."""

    def handle(self, record):
        tensorflow_logger = logging.getLogger(TENSORFLOW)
        if not tensorflow_logger.isEnabledFor(record.levelno):
            return False
        record.name = TENSORFLOW  # one record, 2.15's name, wherever it is shown
        _KITS.record = record
        try:
            refused = tensorflow_logger.disabled or not tensorflow_logger.filter(record)
        finally:
            _KITS.record = None
        if refused:
            _REFUSED.record = True  # the package's logger does not propagate it
            return False
        for handler in tensorflow_logger.handlers:
            if record.levelno >= handler.level:
                handler.handle(record)
        return True

    def emit(self, record):  # handle() does the work
        pass


def follow_tensorflow_verbosity():
    """Idempotent: the package's logger follows the `tensorflow` logger's verbosity."""
    import tensorflow as tf

    # TensorFlow's logger gets its stderr handler (unless the root logger has one) on
    # first use: the package's handler below would otherwise keep Python's last resort
    # from showing the kit's warnings.
    tf.get_logger()
    logger = logging.getLogger(PACKAGE)
    if isinstance(logger, _FollowsTensorflow):
        return logger
    own = logger.__dict__.pop("level", logging.NOTSET)
    logger.__class__ = _FollowsTensorflow
    logger.level = own
    logger.addHandler(_ToTensorflowHandlers())
    logging.Logger.manager._clear_cache()
    return logger


class _Withheld(logging.Filter):
    def __init__(self, prefix):
        super().__init__()
        self.prefix = prefix

    def filter(self, record):
        return not record.getMessage().startswith(self.prefix)


@contextlib.contextmanager
def _filtered(line_filter):
    """TensorFlow's logger shows only the lines `line_filter` lets through meanwhile."""
    logger = logging.getLogger(TENSORFLOW)
    logger.addFilter(line_filter)
    try:
        yield
    finally:
        logger.removeFilter(line_filter)


def withheld(prefix):
    """TensorFlow's own lines starting with `prefix` are not shown meanwhile: for a
    line of TF 2.21's that 2.15 wrote otherwise (the caller logs 2.15's)."""
    return _filtered(_Withheld(prefix))


class _TheKits(logging.Filter):
    def filter(self, record):
        return record is getattr(_KITS, "record", None)


def withheld_but_the_kits():
    """TensorFlow's logger shows no lines but the kit's meanwhile: for a model_fn called a
    second time in one call, whose lines (`tf.compat.v1.logging.info(...)` in it) 2.15
    showed once."""
    return _filtered(_TheKits())


@contextlib.contextmanager
def root_logger_untouched():
    """Meanwhile nothing configures the root logger as a side effect: TF 2.21's
    `tf.saved_model.save` (and its fingerprint) logs through absl, whose first record calls
    `logging.basicConfig()` when the root logger has no handler, after which every record
    of the program (the kit's included, under their own names) went to stderr a second
    time.  2.15's export logged through `tensorflow` alone and left the root as it was."""
    root = logging.getLogger()
    if root.handlers:
        yield
        return
    placeholder = logging.NullHandler()  # the handler absl looks for
    root.addHandler(placeholder)
    try:
        yield
    finally:
        root.removeHandler(placeholder)
