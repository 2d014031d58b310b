"""Executors for the TFX 1.15 stand-ins (component.py): TFX's parameters in, this kit's
executors underneath, TFX's module contracts for user code.

The Trainer runs either contract of a TFX module:
- `run_fn(fn_args)`, TFX's generic one: the function trains and writes a SavedModel
  to `fn_args.serving_model_dir`;
- `trainer_fn(trainer_fn_args, schema)`, the Estimator one of TFX <= 1.15: it returns
  `{"estimator", "train_spec", "eval_spec"[, "eval_input_receiver_fn"]}`; the executor
  runs `train_and_evaluate` with them (the Estimator's model_dir, by TFX's convention
  `fn_args.serving_model_dir`, lies in the ModelRun artifact, as under TFX 1.15) and
  writes the serving model to the Model artifact (`export_trainer_fn_model`), and, given
  an `eval_input_receiver_fn`, the eval model (TFMA 0.4x's EvalSavedModel) to its
  `Format-TFMA/`, as TFX 1.15 did.
`fn_args` is TFX's own `FnArgs`, filled by TFX's `get_common_fn_args`.
"""

import functools
import inspect
import json
import logging
import os

import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx.components.trainer import fn_args_utils
from tfx.dsl.components.base import base_executor
from tfx.proto import transform_pb2
from tfx.types import artifact_utils
from tfx.utils import io_utils, json_utils, path_utils, proto_utils

from components import user_code
from components.example_validator import executor as validator_executor
from components.example_validator.checks import KINDS
from components.tfx_compat import tfma_export
from components.transform import executor as transform_executor

log = logging.getLogger(__name__)

TRAINER_FN_KEYS = ("estimator", "train_spec", "eval_spec")


class ExampleValidatorExecutor(validator_executor.Executor):
    """Every anomaly recorded, none failing the run: TFX's ExampleValidator gates nothing."""

    def Do(self, input_dict, output_dict, exec_properties):
        super().Do(
            input_dict, output_dict, {**exec_properties, "warn_only": json.dumps(list(KINDS))}
        )


def _module_function(exec_properties, name, module_key="module_file"):
    """The function `name` of the user's module file, or `exec_properties[name]` (a dotted
    path); None when neither has it."""
    from components.estimator.install import install

    install()  # a TFX 1.15 module's `tf.estimator` (and `from tensorflow import estimator`)
    tfma_export.install()  # and its `tfma.export.export_eval_savedmodel`
    module_file = exec_properties.get(module_key)
    if exec_properties.get("module_path"):
        raise ValueError("module_path (a packaged user module) is not read here; pass module_file.")
    if module_file:
        function = getattr(user_code.load_file_module(module_file, module_key), name, None)
        return function if callable(function) else None
    reference = exec_properties.get(name)
    return user_code.load(reference, name) if reference else None


def _custom_config(exec_properties):
    return json_utils.loads(exec_properties.get("custom_config") or "null")


class TransformExecutor(transform_executor.Executor):
    """TFX's Transform parameters on this kit's Transform executor."""

    def raw_schema(self, schema):
        return schema  # TFX's: the schema's shapes (SchemaGen's infer_feature_shape) decide

    def load_preprocessing_fn(self, exec_properties, schema_path):
        preprocessing_fn = _module_function(exec_properties, "preprocessing_fn")
        if preprocessing_fn is None:
            raise ValueError(
                f"Transform: module_file {exec_properties.get('module_file')} has no "
                "function preprocessing_fn."
            )
        if exec_properties.get("module_file") and _module_function(
            exec_properties, "stats_options_updater_fn"
        ):
            log.warning(
                "Transform: the module's stats_options_updater_fn is not called: this "
                "Transform computes no statistics before and after the transform (TFDV's)."
            )
        custom_config = _custom_config(exec_properties)
        if "custom_config" in inspect.signature(preprocessing_fn).parameters:
            return functools.partial(preprocessing_fn, custom_config=custom_config), None
        if custom_config:
            log.warning(
                "Transform: custom_config is given but preprocessing_fn takes no custom_config "
                "argument; it is not passed."
            )
        return preprocessing_fn, None  # TFX's columns, one by one

    def Do(self, input_dict, output_dict, exec_properties):
        splits = transform_pb2.SplitsConfig()
        if exec_properties.get("splits_config"):
            proto_utils.json_to_proto(exec_properties["splits_config"], splits)
        # TFX's defaults: analyze train; transform train and eval.
        analyze = list(splits.analyze) or ["train"]
        transform = list(splits.transform) or ["train", "eval"]
        super().Do(
            input_dict,
            output_dict,
            {
                **exec_properties,
                "analyze_splits": json.dumps(analyze),
                "transform_splits": json.dumps(transform),
            },
        )


def _hyperparameters(input_dict):
    artifacts = input_dict.get("hyperparameters")
    if not artifacts:
        return None
    uri = artifact_utils.get_single_uri(artifacts)
    return json.loads(io_utils.read_string_file(io_utils.get_only_uri_in_dir(uri)))


def _has_saved_model(path):
    return any(
        tf.io.gfile.exists(os.path.join(path, name))
        for name in ("saved_model.pb", "saved_model.pbtxt")
    )


def _has_serving_model(model_uri):
    """Whether the Model artifact at `model_uri` holds a SavedModel where TFX's Evaluator
    and Pusher look: Format-Serving/ itself or, as TFX 1.15's Estimator modules left it
    (an Estimator whose model_dir is fn_args.serving_model_dir), the one export under
    Format-Serving/export/<exporter>/<timestamp>/."""
    try:
        return _has_saved_model(path_utils.serving_model_path(model_uri))
    except RuntimeError:  # export/ holds more than one exporter or timestamp
        return False


class TrainerExecutor(base_executor.BaseExecutor):
    """`run_fn` or `trainer_fn` from the user's module (module doc)."""

    def Do(self, input_dict, output_dict, exec_properties):
        self._log_startup(input_dict, output_dict, exec_properties)
        fn_args = fn_args_utils.get_common_fn_args(
            input_dict, exec_properties, working_dir=self._get_tmp_dir()
        )
        model_uri = artifact_utils.get_single_uri(output_dict["model"])
        fn_args.serving_model_dir = path_utils.serving_model_dir(model_uri)
        fn_args.eval_model_dir = path_utils.eval_model_dir(model_uri)
        fn_args.model_run_dir = artifact_utils.get_single_uri(output_dict["model_run"])
        fn_args.schema_file = fn_args.schema_path
        fn_args.transform_output = fn_args.transform_graph_path
        fn_args.hyperparameters = _hyperparameters(input_dict)
        fn_args.custom_config = _custom_config(exec_properties)

        run_fn = _module_function(exec_properties, "run_fn")
        trainer_fn = None if run_fn else _module_function(exec_properties, "trainer_fn")
        if run_fn is None and trainer_fn is None:
            raise ValueError(
                f"Trainer: module_file {exec_properties.get('module_file')} has neither "
                "run_fn(fn_args) nor trainer_fn(trainer_fn_args, schema)."
            )
        if run_fn is not None:
            run_fn(fn_args)
            if not _has_serving_model(model_uri):
                raise RuntimeError(
                    f"Trainer: run_fn wrote no SavedModel to fn_args.serving_model_dir "
                    f"({fn_args.serving_model_dir}), nor one Estimator export under its "
                    "export/<exporter>/<timestamp>/ (Estimator.export_saved_model writes "
                    "into a new timestamped folder under the folder it is given)."
                )
            return
        train_with_trainer_fn(trainer_fn, fn_args)


def train_with_trainer_fn(trainer_fn, fn_args):
    """TFX 1.15's Estimator contract (module doc); the chief writes the serving model."""
    from components import estimator
    from components.estimator.estimator import task_config

    if not fn_args.schema_file:
        raise ValueError("Trainer: trainer_fn(trainer_fn_args, schema) needs the schema input.")
    schema = io_utils.parse_pbtxt_file(fn_args.schema_file, schema_pb2.Schema())
    serving_dir, eval_dir = fn_args.serving_model_dir, fn_args.eval_model_dir
    fn_args.serving_model_dir = path_utils.serving_model_dir(fn_args.model_run_dir)
    fn_args.eval_model_dir = path_utils.eval_model_dir(fn_args.model_run_dir)
    training = trainer_fn(fn_args, schema)
    missing = [key for key in TRAINER_FN_KEYS if key not in (training or {})]
    if missing:
        raise ValueError(
            f"Trainer: trainer_fn returned no {', '.join(missing)}; it returns a dict of "
            f"{', '.join(TRAINER_FN_KEYS)} (and optionally eval_input_receiver_fn)."
        )
    model = training["estimator"]
    # The pipeline serves a canned model's TF2 SavedModel (the transform_features signature
    # is added to it, and a rerun warm-starts from it), not the TF1 graph tf.estimator 2.15's
    # export_saved_model writes (as the kit's does outside the Trainer).
    model._exports_a_graph = False
    estimator.train_and_evaluate(model, training["train_spec"], training["eval_spec"])
    if task_config(model).is_chief:
        export_trainer_fn_model(model, training["eval_spec"], fn_args.transform_output, serving_dir)
        if training.get("eval_input_receiver_fn") is not None:
            export_eval_model(model, training["eval_input_receiver_fn"], fn_args, eval_dir)


def export_eval_model(model, eval_input_receiver_fn, fn_args, eval_dir):
    """TFX 1.15's: the EVAL graph (tfma_export) under the ModelRun's Format-TFMA/, copied
    to the Model artifact's (`eval_dir`), where the Evaluator reads it."""
    log.info("Exporting eval_savedmodel for TFMA.")
    tfma_export.export_eval_savedmodel(
        estimator=model,
        export_dir_base=fn_args.eval_model_dir,
        eval_input_receiver_fn=eval_input_receiver_fn,
    )
    log.info("Exported eval_savedmodel to %s.", fn_args.eval_model_dir)
    source = path_utils.eval_model_path(fn_args.model_run_dir)
    io_utils.copy_dir(source, eval_dir)
    log.info("Eval model copied to: %s.", eval_dir)


def export_trainer_fn_model(model, eval_spec, transform_output, serving_dir):
    """The serving model of a `trainer_fn`: its last exporter's latest export (what TFX
    1.15 pushed), with the `transform_features` signature for TFMA added when there is a
    transform graph and the model is TF2-style (a TF1 one's export is copied as it is)."""
    import tensorflow_transform as tft

    from components.estimator import serving
    from components.exporter.serving import add_transform_features

    exporters = [
        e for e in eval_spec.exporters if getattr(e, "serving_input_receiver_fn", None) is not None
    ]
    if not exporters:
        raise ValueError(
            "Trainer: trainer_fn's eval_spec has no exporter, so nothing says how the model "
            "is served: add exporters=[FinalExporter(name, serving_receiver_fn)]."
        )
    exporter = exporters[-1]
    export_base = os.path.join(model.model_dir, "export", exporter.name)
    exports = (
        sorted(
            (
                name.rstrip("/")
                for name in tf.io.gfile.listdir(export_base)
                if name.rstrip("/").isdigit()
            ),
            key=int,
        )
        if tf.io.gfile.isdir(export_base)
        else []
    )
    if not exports:
        raise RuntimeError(f"Trainer: exporter {exporter.name!r} wrote nothing to {export_base}.")
    source = os.path.join(export_base, exports[-1])
    if transform_output and not model.runs_in_a_graph(exporter.serving_input_receiver_fn):
        add_transform_features(source, tft.TFTransformOutput(transform_output), serving_dir)
        return
    if transform_output:
        log.warning(
            "Trainer: the model serves from a TF1 graph: its export %s is the serving model "
            "as it is, with no transform_features signature (TFMA then needs a raw label_key).",
            source,
        )
    serving.write_atomically(lambda temp_dir: io_utils.copy_dir(source, temp_dir), serving_dir)
