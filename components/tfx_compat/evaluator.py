"""TFX 1.15's Evaluator: TFX's own, whose executor also evaluates TFX 1.15's eval model.

TFX 1.15's Estimator pipelines evaluate with `tfma.EvalConfig(model_specs=[tfma.ModelSpec(
signature_name="eval")], ...)`: TFMA 0.4x read the EvalSavedModel the Trainer wrote to the
Model artifact's `Format-TFMA/` and computed the Estimator's own metrics from it; TFMA 0.52
cannot. For such a config this executor computes them (eval_saved_model.py): per slice of
the raw examples, each of the model's `eval_metric_ops` and `example_count`, for the
candidate and the baseline; TFMA 0.52's validator applies the thresholds; the outputs are
TFMA 0.52's (`metrics-*`, `plots-*`, `attributions-*`, `validations.tfrecord`,
`eval_config.json`, read by `tfma.load_metrics` and `tfma.load_validation_result`) and the
blessing TFX's Evaluator's (a BLESSED or NOT_BLESSED file and its custom properties, read
by the Pusher and the latest-blessed-model resolver). Every other config goes to TFX's own
executor as it is. The component keeps TFX's Evaluator's type name, so ML Metadata
records it as TFX's.
"""

import logging

import tensorflow_model_analysis as tfma
from tfx.components.evaluator import component as tfx_evaluator
from tfx.components.evaluator import executor as tfx_executor
from tfx.dsl.components.base import executor_spec
from tfx.types import artifact_utils
from tfx.utils import json_utils, path_utils, proto_utils

from components.evaluator import outputs
from components.examples_reader import serialized_batches, split_files
from components.tfx_compat import eval_saved_model

log = logging.getLogger(__name__)


def _eval_model_path(model):
    """The eval model in `model`'s Format-TFMA/ (TFX's lookup); an error when it has none."""
    path = path_utils.eval_model_path(model.uri)
    if not path.startswith(path_utils.eval_model_dir(model.uri)):
        raise ValueError(
            f"Evaluator: ModelSpec(signature_name='eval') reads the eval model in "
            f"{path_utils.eval_model_dir(model.uri)}, which the Trainer writes when the module's "
            "trainer_fn returns an eval_input_receiver_fn; this model has none."
        )
    return path


def _examples(examples, exec_properties):
    splits = json_utils.loads(exec_properties.get("example_splits") or "null")
    if not splits:
        splits = ["eval"]
        log.info("The 'example_splits' parameter is not set, using 'eval' split.")
    serialized = []
    for split in splits:
        for path in split_files(examples, split):
            for batch in serialized_batches(path):
                serialized.extend(batch)
    if not serialized:
        raise ValueError(f"Evaluator: {examples.uri} has no examples in the splits {splits}.")
    return serialized


class Executor(tfx_executor.Executor):
    """TFX's Evaluator executor, which also evaluates TFX 1.15's eval model (module doc)."""

    def Do(self, input_dict, output_dict, exec_properties):
        eval_config = tfma.EvalConfig()
        if exec_properties.get("eval_config"):
            proto_utils.json_to_proto(exec_properties["eval_config"], eval_config)
        if not eval_saved_model.reads_eval_saved_model(eval_config):
            return super().Do(input_dict, output_dict, exec_properties)
        self._log_startup(input_dict, output_dict, exec_properties)
        self._evaluate(input_dict, output_dict, exec_properties, eval_config)

    def _evaluate(self, input_dict, output_dict, exec_properties, given_config):
        model = artifact_utils.get_single_instance(input_dict["model"])
        baseline = (input_dict.get("baseline_model") or [None])[0]
        eval_config = tfma.utils.update_eval_config_with_defaults(
            given_config, has_baseline=baseline is not None, rubber_stamp=True
        )
        models = _load(model, baseline)
        candidate = next(iter(models))
        thresholds = eval_saved_model.check_metrics(
            eval_config,
            {*models[candidate].names, eval_saved_model.EXAMPLE_COUNT},
            models[candidate].path,
        )
        examples = artifact_utils.get_single_instance(input_dict["examples"])
        log.info("Evaluating model.")
        metrics_by_slice = {
            key: {name: m.metrics(serialized) for name, m in models.items()}
            for key, serialized in eval_saved_model.slices(
                _examples(examples, exec_properties), eval_config.slicing_specs
            ).items()
        }
        validation = eval_saved_model.validation_result(
            eval_config,
            thresholds,
            metrics_by_slice,
            candidate,
            "baseline" if baseline is not None else None,
        )
        evaluation = artifact_utils.get_single_instance(output_dict["evaluation"])
        keys = list(metrics_by_slice)
        plots = {key: {} for key in keys}
        outputs.write_slices(evaluation.uri, keys, metrics_by_slice, plots, validation)
        evaluated = [outputs.EvaluatedModel(n, m.path) for n, m in models.items()]
        outputs.write_eval_config(evaluation.uri, given_config, evaluated)
        log.info("Evaluation complete. Results written to %s.", evaluation.uri)
        if not thresholds:
            log.info("No threshold configured, will not validate model.")
            return
        blessing = artifact_utils.get_single_instance(output_dict["blessing"])
        if "current_component_id" in exec_properties:
            blessing.set_string_custom_property(
                "component_id", exec_properties["current_component_id"]
            )
        outputs.bless(blessing, evaluation.uri, model, baseline)
        log.info("Blessing result %s written to %s.", validation.validation_ok, blessing.uri)


def _load(model, baseline):
    """{TFMA's model name: EvalModel}: the candidate first, then the baseline, if any."""
    artifacts = {"candidate": model, "baseline": baseline} if baseline is not None else {"": model}
    models = {}
    for name, artifact in artifacts.items():
        path = _eval_model_path(artifact)
        log.info("Using %s as %s model.", path, name)
        models[name] = eval_saved_model.EvalModel(path)
    return models


_TFX_EVALUATOR = tfx_evaluator.Evaluator  # (install.py puts the class below in its place)


class Evaluator(_TFX_EVALUATOR):
    """TFX's Evaluator, run by the executor above; ML Metadata knows it by TFX's name."""

    EXECUTOR_SPEC = executor_spec.BeamExecutorSpec(Executor)

    @classmethod
    def get_class_type(cls):
        return _TFX_EVALUATOR.get_class_type()
