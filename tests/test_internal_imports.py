"""tf.estimator 2.15's objects imported by the package's internal module paths, as public
code imports them (tests/internal_import_programs.py: `tensorflow_estimator.python.estimator`
`.canned.metric_keys`, `.tpu.tpu_estimator`, `.head.binary_class_head`, `.export.export_lib`
and the rest, TF 2.15's `tensorflow.python.estimator` stubs of them), here against 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py internal_import_programs`). Each
program runs once here (a module fixture); `exact` parts must be equal, `close` ones
within 1e-4. The internal modules and names the kit does not give are refused, saying
what to use (2.15 imported them: nothing to record).
"""

import importlib
import re

import pytest

from tests import internal_import_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


# Kept on purpose (docs/guide/estimator.md): numpy_input_fn feeds a tf.data pipeline here,
# not a queue, so training writes no queue-fill summary.
QUEUE_FILL = re.compile(r"^enqueue_input/queue/")
# Public names the kit's namespaces give that 2.15's did not (kept: they are the kit's own
# API too): tf.estimator's stop_if_* hooks at its top level as well as under experimental,
# build_raw_supervised_input_receiver_fn under export as well, and one function for each
# of classifier_ and regressor_parse_example_spec in tf.estimator and tf.compat.v1.estimator
# (2.15 had a V1 and a V2 one). An internal name that gives 2.15's object here may carry them.
KIT_ALIASES = re.compile(
    r"^tf\.estimator\.stop_if_|\.export\.build_raw_supervised|_parse_example_spec$"
)


class TestInternalImports(ComparedWithTf215):
    programs = programs

    def kept(self, name, ours, theirs):
        if "train_tags" in theirs:
            tags = [tag for tag in theirs["train_tags"] if not QUEUE_FILL.search(tag)]
            theirs = {**theirs, "train_tags": tags}
        if name != "names_by_module":
            return ours, theirs
        ours = {**ours}
        for part in ("names", "stubs"):
            ours[part] = {
                module: {
                    attribute: _without_aliases(paths, theirs[part][module].get(attribute))
                    for attribute, paths in names.items()
                }
                for module, names in ours[part].items()
            }
        return ours, theirs


def _without_aliases(paths, recorded):
    """An attribute's public names here, without the kit's aliases 2.15 did not list."""
    if not isinstance(paths, list) or not isinstance(recorded, list):
        return paths
    return [p for p in paths if p in recorded or not KIT_ALIASES.search(p)]


@pytest.fixture
def installed():
    """`import_module`, once tf.estimator 2.15's module paths are the kit's."""
    import components.estimator.install  # noqa: F401

    return importlib.import_module


@pytest.mark.parametrize(
    ("module", "instead"),
    [
        ("tensorflow_estimator.python.estimator.canned.head", "BinaryClassHead"),
        ("tensorflow.python.estimator.canned.head", "BinaryClassHead"),
        ("tensorflow_estimator.python.estimator.util", "inspect.signature"),
        ("tensorflow_estimator.python.estimator.tpu.tpu_context", "TPUEstimatorSpec"),
        ("tensorflow_estimator.python.estimator.api._v1.estimator", "tf.compat.v1.estimator"),
        ("tensorflow_estimator._api.v1", "tf.compat.v1.estimator.X"),
    ],
)
def test_internal_modules_the_kit_does_not_give_are_refused_saying_what_to_use(
    installed, module, instead
):
    with pytest.raises(ImportError, match="internal module") as refused:
        installed(module)
    assert instead in str(refused.value)


def test_internal_names_of_given_modules_are_refused_saying_what_to_use(installed):
    tpu_estimator = installed("tensorflow_estimator.python.estimator.tpu.tpu_estimator")
    assert tpu_estimator.TPUEstimator.__module__.startswith("components.estimator")
    with pytest.raises(AttributeError, match=r"tf\.compat\.v1\.estimator\.X"):
        tpu_estimator._InputPipeline  # noqa: B018


def test_the_heads_metric_and_prediction_keys_are_the_kits(installed):
    from components.estimator import head

    canned = "tensorflow_estimator.python.estimator.canned"
    assert installed(f"{canned}.metric_keys").MetricKeys is head.MetricKeys
    assert installed(f"{canned}.prediction_keys").PredictionKeys is head.PredictionKeys
