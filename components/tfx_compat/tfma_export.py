"""`tfma.export`, as TFX <= 1.15 Estimator modules call it, where TFMA 0.52 has none.

TFMA 0.4x's `tfma.export.export_eval_savedmodel(estimator, export_dir_base,
eval_input_receiver_fn)` wrote an EvalSavedModel, which TFMA 0.52 can no longer read.
Here it writes the Estimator's predict SavedModel, read from the receiver tensors of
`eval_input_receiver_fn` (its `tfma.export.EvalInputReceiver`'s features; the labels are
left out), into a new timestamped folder under `export_dir_base`, as the EvalSavedModel
was: a module's `run_fn` that exports one and copies it to `fn_args.eval_model_dir`
runs unchanged. A warning says what was written; the Evaluator evaluates the serving
model (docs/tfx115-migration.md).
"""

import collections
import logging
from types import ModuleType

log = logging.getLogger(__name__)


class EvalInputReceiver(
    collections.namedtuple("EvalInputReceiver", ["features", "labels", "receiver_tensors"])
):
    """TFMA 0.4x's: the features and labels an eval model reads from `receiver_tensors`."""

    def __new__(
        cls, features, labels, receiver_tensors, input_refs=None, iterator_initializer=None
    ):
        del input_refs, iterator_initializer  # an EvalSavedModel's, unused here
        return super().__new__(cls, features, labels, receiver_tensors)


def export_eval_savedmodel(
    estimator,
    export_dir_base,
    eval_input_receiver_fn,
    serving_input_receiver_fn=None,
    assets_extra=None,
    checkpoint_path=None,
):
    """The Estimator's predict SavedModel from `eval_input_receiver_fn`'s inputs, under
    `export_dir_base/<timestamp>/` (module doc); returns that folder as bytes, as TFMA's
    did."""
    from components.estimator import export

    del serving_input_receiver_fn  # an EvalSavedModel's extra signature

    def receiver():
        received = eval_input_receiver_fn()
        return export.ServingInputReceiver(received.features, received.receiver_tensors)

    path = estimator.export_saved_model(
        export_dir_base, receiver, assets_extra=assets_extra, checkpoint_path=checkpoint_path
    )
    log.warning(
        "tfma.export.export_eval_savedmodel wrote %s: the Estimator's predict SavedModel "
        "read from eval_input_receiver_fn's inputs, not an EvalSavedModel (TFMA 0.52 has "
        "none); the Evaluator evaluates the serving model.",
        path.decode() if isinstance(path, bytes) else path,
    )
    return path


def install():
    """`tfma.export` with the two names above, where TFMA has no `export` of its own."""
    import sys

    import tensorflow_model_analysis as tfma

    if hasattr(tfma, "export"):
        return
    module = ModuleType("tensorflow_model_analysis.export", __doc__)
    module.EvalInputReceiver = EvalInputReceiver
    module.export_eval_savedmodel = export_eval_savedmodel
    sys.modules[module.__name__] = module
    tfma.export = module


def install_config_names():
    """TFMA's configuration messages as `tfma.<Name>`, all of them, as TFMA <= 0.4x (which
    TFX 1.15 pipelines were written against) exported them: TFMA 0.52 exports none, and
    TFX 1.21 puts back only nine (`EvalConfig`, `MetricThreshold`, ...), so a pipeline's
    `tfma.PerSliceMetricThreshold(...)` would fail."""
    import tensorflow_model_analysis as tfma
    from tensorflow_model_analysis.proto import config_pb2

    for name, message in config_pb2.DESCRIPTOR.message_types_by_name.items():
        if not hasattr(tfma, name):
            setattr(tfma, name, getattr(config_pb2, message.name))
