"""The usage examples of tf.estimator 2.15's API docstrings (tests/docstring_example_programs.py)
here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py docstring_example_programs`):
KMeans's training loop (cluster_centers, score, predict_cluster_index, transform, its
export's signatures), MultiHead (its doctest, and a model_fn with logits as a dict and as
one tensor), the parse-example-spec helpers feeding a DNNClassifier. Each program runs
once here (a module fixture); `exact` parts must be equal (the kit's known additions
left out, tests/tf215_recordings.py), `close` ones within 1e-4.
"""

import re

from tests import docstring_example_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs, without_known

# An object's repr names its class's module, the kit's here (not a difference in kind).
_OBJECT = re.compile(r"<[\w.]+\.(\w+) object>")


def _same_kind(value):
    """`value` without the kit's known additions, objects named by their class alone."""
    value = without_known(value)
    if isinstance(value, list):
        return [_OBJECT.sub(r"<\1 object>", v) if isinstance(v, str) else v for v in value]
    return value


ours = program_runs(programs)


class TestDocstringExamples(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        return _same_kinds(ours), _same_kinds(theirs)


def _same_kinds(exact):
    return {key: _same_kind(value) for key, value in exact.items()}
