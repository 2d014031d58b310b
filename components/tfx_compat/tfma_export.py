"""`tfma.export`, as TFX <= 1.15 Estimator modules call it, where TFMA 0.52 has none.

TFMA 0.4x's `tfma.export.export_eval_savedmodel(estimator, export_dir_base,
eval_input_receiver_fn)` wrote an EvalSavedModel: the Estimator's EVAL graph over the
receiver's serialized labelled examples, with its metrics' update and value ops. Here it
writes that graph as the kit's Estimator exports an EVAL mode (a MetaGraph tagged `eval`
whose `eval` signature takes the receiver tensors and gives the loss, the predictions and
`metrics/<name>/update_op`, `metrics/<name>/value` for each of the model_fn's
`eval_metric_ops`), and the serving graph as well when `serving_input_receiver_fn` is
given, into a new timestamped folder under `export_dir_base`, as TFMA did. The TFX 1.15
Trainer writes it to the Model artifact's `Format-TFMA/`, and the stand-in Evaluator
(evaluator.py) computes those metrics from it for a `ModelSpec(signature_name="eval")`.
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
        del input_refs, iterator_initializer  # TFMA 0.4x's own evaluation loop's, unused here
        return super().__new__(cls, features, labels, receiver_tensors)


def export_eval_savedmodel(
    estimator,
    export_dir_base,
    eval_input_receiver_fn,
    serving_input_receiver_fn=None,
    assets_extra=None,
    checkpoint_path=None,
):
    """The Estimator's EVAL graph over `eval_input_receiver_fn`'s inputs (and its serving
    graph over `serving_input_receiver_fn`'s, if given), under
    `export_dir_base/<timestamp>/` (module doc); returns that folder as bytes, as TFMA's
    did."""
    from components.estimator import export
    from components.estimator.model_fn import ModeKeys

    def receiver():
        received = eval_input_receiver_fn()
        return export.SupervisedInputReceiver(
            received.features, received.labels, received.receiver_tensors
        )

    receivers = {ModeKeys.EVAL: receiver}
    if serving_input_receiver_fn is not None:
        receivers[ModeKeys.PREDICT] = serving_input_receiver_fn
    return estimator.experimental_export_all_saved_models(
        export_dir_base, receivers, assets_extra=assets_extra, checkpoint_path=checkpoint_path
    )


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
