"""`TPUEstimator` and `TPUEstimatorSpec` as tf.estimator 2.15 ran them with `use_tpu=False`.

BERT's original code and much of Google Research's trained on CPUs and GPUs this
way.  2.15 then called `model_fn` once per mode in a graph, as any Estimator did,
with `params["batch_size"]` the mode's batch size and `params["use_tpu"]` False,
and turned the `TPUEstimatorSpec` into an `EstimatorSpec`: `scaffold_fn()` gave the
Scaffold, `eval_metrics=(metric_fn, tensors)` the metric ops, and `host_call`'s ops
ran with every session call.  This module does the same on the Estimator's
graph-mode path (graph_mode), which runs such TF1 `model_fn`s.

`iterations_per_loop` only batches steps on a TPU: on CPUs and GPUs 2.15 ran one step
per session call, so every hook saw every step, and so does this kit; it sets how
often the examples/sec line is logged, as in 2.15.  An `embedding_config_spec` (TPU
embedding tables, tpu/embedding.py) is checked as 2.15 checked it off TPUs and then
left out, as 2.15 left it: its TPU embedding columns look up as embedding columns do.
With `use_tpu=True` (its default) on a machine without a TPU, 2.15 made the
TPUEstimator and exported, evaluated with `eval_on_tpu=False` as above, and raised its
RuntimeError (`Cannot find any TPU cores in the system. ...`) to train, predict or
evaluate on TPUs; so does this kit, which runs no TPUEstimator on TPUs (TensorFlow 2.21
drives TPUs with `tf.distribute.TPUStrategy`) and says so in that error.
"""

import collections
import contextlib
import enum
import functools
import inspect
import logging
import math

import numpy as np
import tensorflow as tf
from tensorflow.python.autograph.core import ag_ctx
from tensorflow.python.ops import summary_ops_v2

from components.estimator import graph_mode, inputs, run_config
from components.estimator import hooks as hooks_lib
from components.estimator.estimator import Estimator, _accepted_args, tf1_export_savedmodel
from components.estimator.ignored import warn_once
from components.estimator.model_fn import EstimatorSpec, ModeKeys
from components.estimator.tpu.config import (
    InputPipelineConfig,
    RunConfig,
    parse_iterations_per_loop,
)
from components.estimator.tpu.embedding import EmbeddingConfigSpec

log = logging.getLogger(__name__)
_V1 = tf.compat.v1

# params keys TPUEstimator sets itself: a program may not pass them.
_RESERVED_PARAMS = ("batch_size", "context")
# How 2.15 named each mode in `Running <mode> on CPU/GPU`, and its loop in its error
# rendezvous (`<loop> marked as finished`).
_RUNNING = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "eval", ModeKeys.PREDICT: "infer"}


def _check_host_call(name, host_call):
    """`eval_metrics` or `host_call`: `(fn, tensors)`, tensors a list matching fn's
    arguments or a dict of them; refused in 2.15's words."""
    if not isinstance(host_call, (tuple, list)):
        raise ValueError(f"{name} should be tuple or list (fn, tensors), got {host_call!r}.")
    if len(host_call) != 2:
        raise ValueError(f"{name} should have two elements. Got {host_call!r}, not (fn, tensors).")
    fn, tensors = host_call
    if not callable(fn):
        raise TypeError(f"{name}[0] should be callable. Got {fn!r}.")
    if not isinstance(tensors, (tuple, list, dict)):
        raise ValueError(
            f"{name}[1] should be tuple or list, or dict. Got {type(tensors).__name__}, "
            "not the tensors fn takes."
        )
    if isinstance(tensors, (tuple, list)):
        # Its positional parameters, as 2.15 counted them: not keyword-only ones, nor
        # those a functools.partial binds (by position or by keyword).
        parameters = inspect.signature(fn).parameters.values()
        if not any(p.kind == p.VAR_POSITIONAL for p in parameters):
            count = sum(
                1 for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            )
            if count != len(tensors):
                raise RuntimeError(
                    f"In TPUEstimatorSpec.{name}, length of tensors {len(tensors)} does not "
                    f"match method args of the function, which takes {count}."
                )


def _call_host_fn(name, host_call):
    fn, tensors = host_call
    if isinstance(tensors, dict):
        try:
            return fn(**tensors)
        except TypeError as error:  # (2.15 warned so, and raised the error itself)
            log.warning(
                "Exception while calling %s: %s. It is likely the tensors (%s[1]) do not "
                "match the function's arguments",
                name,
                error,
                name,
            )
            raise
    return fn(*tensors)


_TPU_SPEC_FIELDS = [
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metrics",
    "export_outputs",
    "scaffold_fn",
    "host_call",
    "training_hooks",
    "evaluation_hooks",
    "prediction_hooks",
]


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", _TPU_SPEC_FIELDS)):
    """What a TPUEstimator `model_fn` returns: an `EstimatorSpec` whose metrics
    (`eval_metrics`), host-side ops (`host_call`) and Scaffold (`scaffold_fn`) are
    functions, called where the host builds them."""

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metrics=None,
        export_outputs=None,
        scaffold_fn=None,
        host_call=None,
        training_hooks=None,
        evaluation_hooks=None,
        prediction_hooks=None,
    ):
        for name, host_call_value in (("eval_metrics", eval_metrics), ("host_call", host_call)):
            if host_call_value is not None:
                _check_host_call(name, host_call_value)
        hook_lists = [tuple(h or ()) for h in (training_hooks, evaluation_hooks, prediction_hooks)]
        for hook in (hook for hooks in hook_lists for hook in hooks):
            if not isinstance(hook, (_V1.train.SessionRunHook, hooks_lib.Hook)):
                raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
        # Checked when made, as 2.15 checked it ('Missing train_op.', a loss of one element
        # made a scalar, a PREDICT spec's export_outputs completed), as an EstimatorSpec is.
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            checked = EstimatorSpec(
                mode, predictions, loss, train_op, export_outputs=export_outputs
            )
            loss, export_outputs = checked.loss, checked.export_outputs
        return super().__new__(
            cls,
            mode,
            predictions,
            loss,
            train_op,
            eval_metrics,
            export_outputs,
            scaffold_fn,
            host_call,
            *hook_lists,
        )

    def as_estimator_spec(self):
        """The `EstimatorSpec` 2.15 made of it on CPUs and GPUs (in `model_fn`'s graph)."""
        eval_metric_ops = None
        if self.eval_metrics is not None:
            eval_metric_ops = _call_host_fn("eval_metrics", self.eval_metrics)
        host_hooks = ()
        if self.host_call is not None:
            host_hooks = (_HostCallHook(_call_host_fn("host_call", self.host_call)),)
        return EstimatorSpec(
            mode=self.mode,
            predictions=self.predictions,
            loss=self.loss,
            train_op=self.train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs,
            scaffold=self.scaffold_fn() if self.scaffold_fn else None,
            training_hooks=self.training_hooks + host_hooks,
            evaluation_hooks=self.evaluation_hooks + host_hooks,
            prediction_hooks=self.prediction_hooks + host_hooks,
        )


class _HostCallHook(_V1.train.SessionRunHook):
    """Runs `host_call`'s ops with every session call.  Its `tf.summary` writers (v2
    summaries in a graph) are opened once the session exists and flushed at the end."""

    def __init__(self, fetches):
        self._fetches = fetches

    def begin(self):
        graph = _V1.get_default_graph()
        self._open_writers = graph.get_collection(
            summary_ops_v2._SUMMARY_WRITER_INIT_COLLECTION_NAME
        )
        self._flush_writers = [
            summary_ops_v2.legacy_raw_flush(writer=op.inputs[0]) for op in self._open_writers
        ]

    def after_create_session(self, session, coord):
        if self._open_writers:  # (a host_call without tf.summary opens none)
            session.run(self._open_writers)

    def before_run(self, run_context):
        return _V1.train.SessionRunArgs(self._fetches)

    def end(self, session):
        if self._flush_writers:
            session.run(self._flush_writers)


class _ExamplesPerSecondHook(_V1.train.StepCounterHook):
    """Logs (and writes as summaries) global_step/sec and examples/sec, as 2.15's
    TPUEstimator did instead of the Estimator's step counter."""

    def __init__(self, batch_size, every_n_steps, every_n_secs, output_dir):
        super().__init__(
            every_n_steps=every_n_steps, every_n_secs=every_n_secs, output_dir=output_dir
        )
        self._batch_size = batch_size

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
        steps_per_sec = elapsed_steps / elapsed_time
        rates = {"global_step/sec": steps_per_sec}
        if self._batch_size is not None:
            rates["examples/sec"] = steps_per_sec * self._batch_size
        if self._summary_writer is not None:
            summary = _V1.Summary(
                value=[_V1.Summary.Value(tag=tag, simple_value=v) for tag, v in rates.items()]
            )
            self._summary_writer.add_summary(summary, global_step)
        for tag, value in rates.items():
            log.info("%s: %g", tag, value)


# What the RuntimeErrors of `use_tpu=True` add to 2.15's words.
_TPU_HINT = (
    " TPUEstimator(use_tpu=True) runs on TPUs only, and this kit runs TPUEstimator "
    "programs on CPUs and GPUs only, as tf.estimator 2.15 ran them with use_tpu=False "
    "(TensorFlow 2.21 drives TPUs with tf.distribute.TPUStrategy, not TPUEstimator's graph "
    "rewrite): pass use_tpu=False to train here (eval_on_tpu=False evaluates here), or port "
    "the model to Keras under TPUStrategy for TPUs."
)


def _check_params(config, params):
    """What 2.15 refused first, in its words."""
    if not isinstance(config, RunConfig):
        raise ValueError(
            "`config` must be provided with type `tpu_config.RunConfig`\n"
            "That is tf.compat.v1.estimator.tpu.RunConfig (this kit's "
            f"components.estimator.tpu.RunConfig); got {type(config).__name__}."
        )
    if params is not None and any(key in params for key in _RESERVED_PARAMS):
        raise ValueError(
            f"{list(_RESERVED_PARAMS)} are reserved keys but existed in params {params}."
        )


def _set_param(params, key, value):
    """`params` (the Estimator's copy) with `key` set, as 2.15 set its keys: a dict's item,
    or a hyperparameter of an HParams object (tf.contrib.training.HParams and the copies
    tensor2tensor and research code keep, with `set_hparam` and `add_hparam`), which
    `model_fn` and `input_fn` then read as `params.batch_size`."""
    if hasattr(params, "set_hparam"):
        if key in params:
            params.set_hparam(key, value)
        else:
            params.add_hparam(key, value)
    else:
        params[key] = value
    return params


def _check_positive_integer(value, name):
    if not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be int, got {type(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


def _check_tpu_arguments(config, batch_sizes, embedding_config_spec):
    """What 2.15 checked at construction with `use_tpu=True`, in its order and words (the
    rest it checked once it had found the TPU, which it never did on CPUs)."""
    train, evaluation, prediction = batch_sizes
    if train is None:
        raise ValueError("`train_batch_size` cannot be `None`")
    _check_positive_integer(train, "train_batch_size")
    per_host = config.tpu_config.per_host_input_for_training
    if per_host is InputPipelineConfig.PER_SHARD_V1 and config.tpu_config.num_cores_per_replica:
        raise ValueError(
            "Model parallelism only supports per host input for training. "
            "Please adjust TPURunconfig.per_host_input_for_training."
        )
    for name, value in (("eval_batch_size", evaluation), ("predict_batch_size", prediction)):
        if value is not None:
            _check_positive_integer(value, name)
    host_inputs = (InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.PER_HOST_V2)
    if embedding_config_spec and per_host not in host_inputs:
        raise ValueError(
            "Only PER_HOST_V1 and PER_HOST_V2 is supported when using TPU Embedding; "
            f"got {per_host}."
        )


def _check_embedding_config_spec(spec, on_cpu):
    """What 2.15 checked of an `EmbeddingConfigSpec` before its Estimator was made; off
    TPUs it then left the spec out: the TPU embedding columns `model_fn` uses look up
    their tables as embedding columns do, trained by `model_fn`'s optimizer (its
    `optimization_parameters` go unused)."""
    if not isinstance(spec, EmbeddingConfigSpec):
        raise TypeError(
            "TPUEstimator: embedding_config_spec must be a "
            "tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec, got "
            f"{type(spec).__name__}."
        )
    if on_cpu and spec.partition_strategy == "mod":  # (2.15: 'mod' shards only TPU tables)
        raise ValueError(
            "Mod sharding of embedding tables not supported on CPU: "
            "EmbeddingConfigSpec(partition_strategy='mod') runs only on a TPU; leave "
            "partition_strategy as 'div' to run with use_tpu=False."
        )


def _check_num_shards(config, embedding_config_spec):
    """2.15's refusal, or warning, of `num_shards=1` once its Estimator was made; True
    when it warned (2.15 then took one TPU core as given, and eval_on_tpu as True)."""
    tpu_config = config.tpu_config
    if tpu_config.num_shards != 1 or tpu_config.num_cores_per_replica is not None:
        return False
    if embedding_config_spec is not None:
        raise ValueError(
            "Setting TPUConfig.num_shards==1 is unsupported when embedding_config_spec is "
            "not None. Leave num_shards as None."
        )
    log.warning(
        "Setting TPUConfig.num_shards==1 is an unsupported behavior. Please fix as soon as "
        "possible (leaving num_shards as None.)"
    )
    return True


class ExportSavedModelApiVersion(enum.Enum):
    """2.15's choice of how the TPU MetaGraph was exported; the kit writes only the
    `serve` MetaGraph, where both versions are the same."""

    V1 = 1
    V2 = 2


class TPUEstimator(Estimator):
    """tf.estimator 2.15's `TPUEstimator` on CPUs and GPUs: see the module's docstring."""

    def __init__(
        self,
        model_fn=None,
        model_dir=None,
        config=None,
        params=None,
        use_tpu=True,
        train_batch_size=None,
        eval_batch_size=None,
        predict_batch_size=None,
        batch_axis=None,
        eval_on_tpu=True,
        export_to_tpu=True,
        export_to_cpu=True,
        warm_start_from=None,
        embedding_config_spec=None,
        export_saved_model_api_version=ExportSavedModelApiVersion.V1,
    ):
        _check_params(config, params)
        self._batch_sizes = {
            ModeKeys.TRAIN: train_batch_size,
            ModeKeys.EVAL: eval_batch_size,
            ModeKeys.PREDICT: predict_batch_size,
        }
        if use_tpu:
            _check_tpu_arguments(config, self._batch_sizes.values(), embedding_config_spec)
        if embedding_config_spec is not None:
            _check_embedding_config_spec(embedding_config_spec, not (use_tpu and eval_on_tpu))
        # (batch_axis only places work on TPU cores: nothing to do here.)
        self._use_tpu, self._eval_on_tpu = bool(use_tpu), bool(eval_on_tpu)
        self._tpu_devices = {}  # master -> the devices it listed (2.15's cached metadata)
        self._export_to_tpu, self._export_to_cpu = export_to_tpu, export_to_cpu
        self._log_every_n_steps, self._log_every_n_secs = _examples_log_period(config)
        self._exporting = False
        takes_params = model_fn is not None and "params" in _accepted_args(model_fn)
        if params is None and takes_params:  # (2.15 said it here, before `Using config`)
            log.warning(
                "Estimator's model_fn (%s) includes params argument, but params are not "
                "passed to Estimator.",
                model_fn,
            )
        # The Estimator's own step logging and counter give way to examples/sec, as in 2.15.
        super().__init__(
            model_fn,
            model_dir=model_dir,
            config=config.replace(log_step_count_steps=None),
            # None (an empty dict then) for a model_fn without params given none: 2.15's
            # TPUEstimator refused that model_fn when it called it, in its own words.
            params={} if params is None and takes_params else params,
            warm_start_from=warm_start_from,
        )
        self._graph_mode = True  # TPUEstimator model_fns are TF1 code: always a graph
        if _check_num_shards(config, embedding_config_spec):
            self._eval_on_tpu = eval_on_tpu = True  # (2.15's one-core context dropped it)
        log.info("_TPUContext: eval_on_tpu %s", eval_on_tpu)
        if eval_on_tpu and not use_tpu:
            log.warning("eval_on_tpu ignored because use_tpu is False.")
        if export_saved_model_api_version not in (*ExportSavedModelApiVersion, 1, 2):
            raise ValueError(
                "export_saved_model_api_version should be 1 or 2; got "
                f"{export_saved_model_api_version}. (ExportSavedModelApiVersion.V1 or V2.)"
            )
        self._leaks_use_tpu = export_to_tpu and export_saved_model_api_version in (
            ExportSavedModelApiVersion.V1,
            1,
        )

    # 2.15 ran each call under its TPU error rendezvous, whose lines these log; a session
    # on a master other than '' fails first, as it did there (`_check_master`).
    @functools.wraps(Estimator.train)
    def train(self, input_fn, *args, **kwargs):
        with _error_rendezvous("training_loop"):
            _check_master(self._config, self._config.master)
            return super().train(input_fn, *args, **kwargs)

    @functools.wraps(Estimator.evaluate)
    def evaluate(self, input_fn, *args, **kwargs):
        with _error_rendezvous("evaluation_loop"):
            _check_master(self._config, self._config.evaluation_master)
            if self._on_tpu(ModeKeys.EVAL):  # (2.15 looked for the TPU first here)
                self._find_tpu(ModeKeys.EVAL)
            self._note_eval_on_cpu(ModeKeys.EVAL, 1)
            return super().evaluate(input_fn, *args, **kwargs)

    @functools.wraps(Estimator.predict)
    def predict(self, input_fn, *args, **kwargs):
        with _error_rendezvous("prediction_loop"):
            _check_master(self._config, self._config.master)
            yield from super().predict(input_fn, *args, **kwargs)
        log.info("prediction_loop marked as finished")  # (2.15 said it twice at the end)

    def _mode_graph(self, mode, hooks, input_fn=None, receiver_fn=None, before_input=None):
        """Every mode runs in a graph with a session, as under 2.15 (`before_input` is
        for the Estimator's TF2 path, which a TPUEstimator never takes)."""
        self._exporting = receiver_fn is not None
        if self._exporting and self._export_to_tpu and mode != ModeKeys.PREDICT:
            log.warning(
                "TPUEstimator only handles mode PREDICT for exporting when `export_to_tpu` "
                "is `True`; Mode %s will be ignored for TPU.",
                mode,
            )
        try:
            built = graph_mode.ModeGraph(self, mode, input_fn=input_fn, receiver_fn=receiver_fn)
        finally:
            self._exporting = False
        if receiver_fn is not None and mode == ModeKeys.PREDICT and self._leaks_use_tpu:
            # 2.15 built its `serve, tpu` MetaGraph (export_to_tpu, API V1) with the
            # Estimator's own params, setting use_tpu=False in them: every later input_fn
            # and `est.params` had it.
            _set_param(self._params, "use_tpu", False)
        return built

    def _input_fn_result(self, input_fn, mode, input_context=None):
        """`input_fn(params)` with params['batch_size'] the mode's batch size."""
        args = _accepted_args(input_fn)
        if "params" not in args:
            raise ValueError(
                f"input_fn ({input_fn}) does not include params argument, required by "
                'TPUEstimator to pass batch size as params["batch_size"]'
            )
        if self._on_tpu(mode):  # (2.15 looked for the TPU here to train or predict)
            self._find_tpu(mode)
        self._note_eval_on_cpu(mode, 1)
        sliced = InputPipelineConfig.SLICED
        if (
            mode != ModeKeys.TRAIN
            and self._config.tpu_config.eval_training_input_configuration == sliced
        ):
            raise ValueError(
                "Invalid TPUConfig `eval_training_input_configuration` value. SLICED mode only "
                "works on use_tpu = True. (It slices evaluation and prediction input over TPU "
                "cores: leave it PER_HOST_V1 on CPUs and GPUs.)"
            )
        self._note_eval_on_cpu(mode, 2)
        kwargs = {"params": self._params_with_batch_size(mode)}
        if "mode" in args:
            kwargs["mode"] = mode
        if "config" in args:  # (a copy a call, as 2.15 gave it)
            kwargs["config"] = run_config.handed_out(self._config)
        if "input_context" in args:
            kwargs["input_context"] = input_context
        with tf.device("/device:CPU:0"), inputs.read_by_an_estimator():
            return input_fn(**kwargs)

    def _params_with_batch_size(self, mode):
        params = self.params
        if self._batch_sizes[mode] is not None and not self._exporting:
            _set_param(params, "batch_size", self._batch_sizes[mode])
        return params

    def _call_model_fn_in_graph(self, features, labels, mode, autograph=False):
        """`model_fn` as 2.15 called it off TPUs; under a `train_distribute` strategy
        (`autograph`), converted by AutoGraph, as the strategy's replica call converted it."""
        log.info("Calling model_fn.")
        self._note_eval_on_cpu(mode, 1)
        log.info("Running %s on CPU/GPU", _RUNNING[mode])
        self._note_eval_on_cpu(mode, 4)
        kwargs = self._model_fn_kwargs(features, labels, mode)
        if "params" not in kwargs:
            raise ValueError(
                f"model_fn ({self._model_fn}) does not include params argument, required by "
                "TPUEstimator to pass batch size as params['batch_size']"
            )
        kwargs["params"] = _set_param(self._params_with_batch_size(mode), "use_tpu", False)
        model_fn = self._model_fn
        if autograph:
            enabled = ag_ctx.ControlStatusCtx(status=ag_ctx.Status.ENABLED)
            model_fn = tf.__internal__.autograph.tf_convert(model_fn, enabled)
        spec = model_fn(**kwargs)
        if isinstance(spec, TPUEstimatorSpec):
            spec = spec.as_estimator_spec()
        log.info("Done calling model_fn.")
        if mode == ModeKeys.TRAIN and (self._log_every_n_steps or self._log_every_n_secs):
            examples = _ExamplesPerSecondHook(
                self._batch_sizes[ModeKeys.TRAIN],
                every_n_steps=self._log_every_n_steps,
                every_n_secs=self._log_every_n_secs,
                output_dir=self.model_dir if self._config.save_summary_steps else None,
            )
            spec = spec._replace(training_hooks=(*spec.training_hooks, examples))
        return self._checked_spec(spec, mode)

    def _on_tpu(self, mode):
        """Whether 2.15 ran `mode` on TPUs: with use_tpu, but for evaluations with
        eval_on_tpu=False, which ran on CPUs and GPUs as with use_tpu=False."""
        return self._use_tpu and not (mode == ModeKeys.EVAL and not self._eval_on_tpu)

    def _note_eval_on_cpu(self, mode, times):
        """2.15's line each time its context chose the CPU for an evaluation under
        use_tpu=True, eval_on_tpu=False (`times` at each of the kit's matching points)."""
        if self._use_tpu and mode == ModeKeys.EVAL and not self._on_tpu(mode):
            for _ in range(times):
                log.info("_is_running_on_cpu: eval_on_tpu disabled")

    def _find_tpu(self, mode):
        """What 2.15 did to run `mode` on TPUs here: ask the master for its devices
        (once per master), find no TPU and raise its RuntimeError."""
        config = self._config
        master = config.evaluation_master if mode == ModeKeys.EVAL else config.master
        tpu_config = config.tpu_config
        if tpu_config.num_shards == 1 and tpu_config.num_cores_per_replica is None:
            raise RuntimeError(  # (2.15 assumed one core, built a TPU graph, failed in it)
                "TPUConfig(num_shards=1) with use_tpu=True: tf.estimator 2.15 assumed one "
                "TPU core without looking for it, and its TPU graph failed to run here." + _TPU_HINT
            )
        devices = self._tpu_devices.get(master)
        if devices is None:
            devices = _devices_without_tpus(master, config, tpu_config.num_cores_per_replica)
            self._tpu_devices[master] = devices
        raise RuntimeError(
            "Cannot find any TPU cores in the system. Please double check Tensorflow master "
            f"address and TPU worker(s). Available devices are {devices}." + _TPU_HINT
        )

    @functools.wraps(Estimator.export_saved_model)  # (2.15's parameters, to inspect too)
    def export_saved_model(self, *args, **kwargs):
        # The CPU MetaGraph (tags `serve`), as 2.15 wrote first.  2.15 also wrote a
        # `serve, tpu` one (export_to_tpu), which runs only on a TPU: left out, with a note.
        self._refuse_tpu_only_export()
        given = inspect.signature(Estimator.export_saved_model).bind(self, *args, **kwargs)
        if given.arguments["serving_input_receiver_fn"]:
            self._checkpoint_first(Estimator.export_saved_model, *args, **kwargs)
        self._some_metagraph_to_export()
        if self._export_to_tpu:
            warn_once(
                "TPUEstimator.export_to_tpu",
                "TPUEstimator: export_to_tpu is ignored: the export holds the `serve` "
                "MetaGraph only (tf.estimator 2.15 also wrote a `serve, tpu` one, which runs "
                "only on a TPU). Load it with tags=['serve'], as servers on CPUs and GPUs do.",
            )
        return super().export_saved_model(*args, **kwargs)

    @functools.wraps(Estimator.experimental_export_all_saved_models)
    def experimental_export_all_saved_models(self, *args, **kwargs):
        self._refuse_tpu_only_export()
        self._checkpoint_first(Estimator.experimental_export_all_saved_models, *args, **kwargs)
        self._some_metagraph_to_export()
        return super().experimental_export_all_saved_models(*args, **kwargs)

    def _refuse_tpu_only_export(self):
        if not self._export_to_cpu and self._export_to_tpu:
            raise ValueError(
                "TPUEstimator(export_to_cpu=False): the export would hold only the TPU "
                "MetaGraph, which this kit does not write (it serves only on a TPU); "
                "leave export_to_cpu=True."
            )

    def _some_metagraph_to_export(self):
        """2.15's refusal of an export with neither MetaGraph (once the checkpoint is
        found, before model_fn is called)."""
        if not self._export_to_cpu and not self._export_to_tpu:
            raise ValueError("One of export_to_cpu and export_to_tpu must be true.")

    def _checkpoint_first(self, method, *args, **kwargs):
        """2.15's `Couldn't find trained model at ...` before model_fn ran (and logged its
        lines), for an export given no `checkpoint_path` in a model_dir with none."""
        given = inspect.signature(method).bind(self, *args, **kwargs).arguments
        if not given.get("checkpoint_path"):
            self._require_checkpoint()

    export_savedmodel = tf1_export_savedmodel  # (2.15's TPUEstimator was a V1 Estimator)


@contextlib.contextmanager
def _error_rendezvous(loop):
    """The lines 2.15's TPU error rendezvous logged around train, evaluate and predict:
    `<loop> marked as finished` at the end, then `Reraising captured error` if it failed."""
    failed = False
    try:
        yield
    except Exception:
        failed = True
        raise
    finally:
        log.info("%s marked as finished", loop)
        if failed:
            log.warning("Reraising captured error")


def _check_master(config, master):
    """A session on `master`, as 2.15 opened one: '' runs here; a `grpc://` server (a TPU
    or a remote TensorFlow) is refused; any other target fails as in 2.15, with
    TensorFlow's NotFoundError (no session factory for it, e.g. 'local')."""
    if not master or config.cluster_spec.jobs:  # (a TF_CONFIG cluster's own servers)
        return
    if master.startswith("grpc://"):
        raise ValueError(
            f"TPUEstimator: RunConfig(master={master!r}) names a TensorFlow server to run "
            "on; this kit runs TPUEstimator's sessions in this process only (on its CPUs "
            "and GPUs). Leave master and evaluation_master out, or ''."
        )
    with tf.Graph().as_default():
        _V1.Session(target=master).close()


def _devices_without_tpus(master, config, num_cores_per_replica):
    """The devices `master` lists, logged as 2.15 logged its TPU system metadata when it
    found no TPU; with model parallelism (num_cores_per_replica) 2.15 raised here."""
    log.info("Querying Tensorflow master (%s) for TPU system metadata.", master)
    with tf.Graph().as_default(), _V1.Session(master, config=config.session_config) as session:
        listed = session.list_devices()
    cores = [d for d in listed if tf.DeviceSpec.from_string(d.name).device_type == "TPU"]
    if cores:
        raise RuntimeError(
            f"TPUEstimator(use_tpu=True) found {len(cores)} TPU cores at master "
            f"{master!r}, which this kit does not run TPUEstimator on." + _TPU_HINT
        )
    if num_cores_per_replica:
        raise RuntimeError(
            f"Cannot find any TPU cores in the system (master address {master}). This usually "
            "means the master address is incorrect or the TPU worker has some problems. "
            f"Available devices: {listed}." + _TPU_HINT
        )

    def order(device):
        spec = tf.DeviceSpec.from_string(device.name)
        return (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index)

    devices = tuple(sorted(listed, key=order))
    log.info(
        "Failed to find TPU: TPUSystemMetadata(num_cores=0, num_hosts=0, "
        "num_of_cores_per_host=0, topology=None, devices=%s)",
        devices,
    )
    return devices


def _examples_log_period(config):
    """(every n steps, every n secs) of the examples/sec log, as 2.15 set them: a time
    `iterations_per_loop` logs at that period; a count divides `log_step_count_steps`
    (2.15 logged after each TPU loop of that many steps)."""
    iterations = parse_iterations_per_loop(config.tpu_config.iterations_per_loop)
    if iterations.unit == "seconds":
        return None, iterations.value
    if config.log_step_count_steps is None:
        return None, None
    return math.ceil(config.log_step_count_steps / iterations.value), None
