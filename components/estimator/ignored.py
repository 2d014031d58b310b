"""One warning per process for a tf.estimator argument that is accepted but not honoured.

Code ported from tf.estimator keeps running, and its author learns once, by
name, which settings have no effect here and what happens instead.
"""

import warnings

_warned = set()


def warn_once(argument, message):
    """Warns `message` unless a warning about `argument` was already given in this process."""
    if argument in _warned:
        return
    _warned.add(argument)
    warnings.warn(message, UserWarning, stacklevel=3)
