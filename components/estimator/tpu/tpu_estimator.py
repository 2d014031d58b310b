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
Running on TPUs (`use_tpu=True`) is refused: TensorFlow 2.21 drives TPUs with
`tf.distribute.TPUStrategy`.
"""

import collections
import contextlib
import enum
import functools
import inspect
import logging
import math

import tensorflow as tf
from tensorflow.python.ops import summary_ops_v2

from components.estimator import graph_mode
from components.estimator import hooks as hooks_lib
from components.estimator.estimator import Estimator, _accepted_args
from components.estimator.ignored import warn_once
from components.estimator.model_fn import EstimatorSpec, ModeKeys
from components.estimator.tpu.config import RunConfig, parse_iterations_per_loop
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
    arguments or a dict of them."""
    if not isinstance(host_call, (tuple, list)) or len(host_call) != 2:
        raise ValueError(
            f"TPUEstimatorSpec.{name} must be a pair (fn, tensors), got {host_call!r}."
        )
    fn, tensors = host_call
    if not callable(fn):
        raise TypeError(f"TPUEstimatorSpec.{name}[0] must be callable, got {fn!r}.")
    if not isinstance(tensors, (tuple, list, dict)):
        raise ValueError(
            f"TPUEstimatorSpec.{name}[1] must be a list, tuple or dict of tensors, "
            f"got {type(tensors).__name__}."
        )
    if isinstance(tensors, (tuple, list)):
        parameters = inspect.signature(fn).parameters.values()
        if not any(p.kind == p.VAR_POSITIONAL for p in parameters):
            count = sum(1 for p in parameters if p.kind != p.VAR_KEYWORD)
            if count != len(tensors):
                raise RuntimeError(
                    f"TPUEstimatorSpec.{name}: {len(tensors)} tensors for a function of "
                    f"{count} arguments ({getattr(fn, '__name__', fn)})."
                )


def _call_host_fn(name, host_call):
    fn, tensors = host_call
    if isinstance(tensors, dict):
        try:
            return fn(**tensors)
        except TypeError as error:
            raise TypeError(
                f"TPUEstimatorSpec.{name}: calling {getattr(fn, '__name__', fn)} with the "
                f"keys of its tensors {sorted(tensors)} failed ({error}); the keys must be "
                "its argument names."
            ) from error
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
                raise TypeError(f"TPUEstimatorSpec: hooks must be SessionRunHooks, got {hook!r}.")
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


def _refuse_tpu():
    raise ValueError(
        "TPUEstimator(use_tpu=True): this kit runs TPUEstimator programs on CPUs and GPUs "
        "only, as tf.estimator 2.15 ran them with use_tpu=False (TensorFlow 2.21 drives "
        "TPUs with tf.distribute.TPUStrategy, not TPUEstimator's graph rewrite). Pass "
        "use_tpu=False to train here, or port the model to Keras under TPUStrategy for TPUs."
    )


def _check_params(model_fn, params, config, embedding_config_spec):
    """What 2.15 refused, and what only a TPU would run, said at construction."""
    if not isinstance(config, RunConfig):
        raise ValueError(
            "TPUEstimator: config must be a tf.compat.v1.estimator.tpu.RunConfig (this "
            f"kit's components.estimator.tpu.RunConfig), got {type(config).__name__}."
        )
    reserved = sorted(set(_RESERVED_PARAMS) & set(params or {}))
    if reserved:
        raise ValueError(
            f"TPUEstimator: params {reserved} are set by TPUEstimator itself "
            "(params['batch_size'] is the mode's batch size): rename them."
        )
    if "params" not in _accepted_args(model_fn):
        raise ValueError(
            f"TPUEstimator: model_fn {getattr(model_fn, '__name__', model_fn)} must take a "
            "`params` argument: TPUEstimator passes the batch size as params['batch_size']."
        )
    if embedding_config_spec is not None:
        _check_embedding_config_spec(config, embedding_config_spec)


def _check_embedding_config_spec(config, spec):
    """What 2.15 checked of an `EmbeddingConfigSpec` off TPUs, which it then left out:
    the TPU embedding columns `model_fn` uses look up their tables as embedding columns
    do, trained by `model_fn`'s optimizer (its `optimization_parameters` go unused)."""
    if not isinstance(spec, EmbeddingConfigSpec):
        raise TypeError(
            "TPUEstimator: embedding_config_spec must be a "
            "tf.compat.v1.estimator.tpu.experimental.EmbeddingConfigSpec, got "
            f"{type(spec).__name__}."
        )
    if spec.partition_strategy == "mod":  # (2.15: 'mod' shards only TPU tables)
        raise ValueError(
            "Mod sharding of embedding tables not supported on CPU: "
            "EmbeddingConfigSpec(partition_strategy='mod') runs only on a TPU; leave "
            "partition_strategy as 'div' to run with use_tpu=False."
        )
    tpu_config = config.tpu_config
    if tpu_config.num_shards == 1 and tpu_config.num_cores_per_replica is None:
        raise ValueError(
            "TPUEstimator: setting TPUConfig.num_shards==1 is unsupported when "
            "embedding_config_spec is not None (as in tf.estimator 2.15); leave num_shards "
            "as None."
        )


class ExportSavedModelApiVersion(enum.Enum):
    """2.15's choice of how the TPU MetaGraph was exported; the kit writes only the
    `serve` MetaGraph, where both versions are the same."""

    V1 = 1
    V2 = 2


class TPUEstimator(Estimator):
    """tf.estimator 2.15's `TPUEstimator` with `use_tpu=False`: see the module's docstring."""

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
        if use_tpu:
            _refuse_tpu()
        _check_params(model_fn, params, config, embedding_config_spec)
        if export_saved_model_api_version not in (*ExportSavedModelApiVersion, 1, 2):
            raise ValueError(
                "TPUEstimator: export_saved_model_api_version must be "
                "ExportSavedModelApiVersion.V1 or V2 (or 1 or 2), got "
                f"{export_saved_model_api_version!r}."
            )
        # (batch_axis and eval_on_tpu only place work on TPU cores: nothing to do here.)
        self._batch_sizes = {
            ModeKeys.TRAIN: train_batch_size,
            ModeKeys.EVAL: eval_batch_size,
            ModeKeys.PREDICT: predict_batch_size,
        }
        self._export_to_tpu, self._export_to_cpu = export_to_tpu, export_to_cpu
        self._log_every_n_steps, self._log_every_n_secs = _examples_log_period(config)
        self._exporting = False
        if params is None:  # (2.15 said it here, before its Estimator's `Using config`)
            log.warning(
                "Estimator's model_fn (%s) includes params argument, but params are not "
                "passed to Estimator.",
                model_fn,
            )
            params = {}
        # The Estimator's own step logging and counter give way to examples/sec, as in 2.15.
        super().__init__(
            model_fn,
            model_dir=model_dir,
            config=config.replace(log_step_count_steps=None),
            params=params,
            warm_start_from=warm_start_from,
        )
        self._graph_mode = True  # TPUEstimator model_fns are TF1 code: always a graph
        log.info("_TPUContext: eval_on_tpu %s", eval_on_tpu)
        if eval_on_tpu:
            log.warning("eval_on_tpu ignored because use_tpu is False.")

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
            return super().evaluate(input_fn, *args, **kwargs)

    @functools.wraps(Estimator.predict)
    def predict(self, input_fn, *args, **kwargs):
        with _error_rendezvous("prediction_loop"):
            _check_master(self._config, self._config.master)
            yield from super().predict(input_fn, *args, **kwargs)
        log.info("prediction_loop marked as finished")  # (2.15 said it twice at the end)

    def _mode_graph(self, mode, hooks, input_fn=None, receiver_fn=None):
        """Every mode runs in a graph with a session, as under 2.15."""
        self._exporting = receiver_fn is not None
        try:
            return graph_mode.ModeGraph(self, mode, input_fn=input_fn, receiver_fn=receiver_fn)
        finally:
            self._exporting = False

    def _input_fn_result(self, input_fn, mode, input_context=None):
        """`input_fn(params)` with params['batch_size'] the mode's batch size."""
        args = _accepted_args(input_fn)
        if "params" not in args:
            raise ValueError(
                f"TPUEstimator: input_fn {getattr(input_fn, '__name__', input_fn)} must take a "
                "`params` argument: TPUEstimator passes the batch size as params['batch_size']."
            )
        kwargs = {"params": self._params_with_batch_size(mode)}
        for name, value in (("mode", mode), ("config", self._config)):
            if name in args:
                kwargs[name] = value
        if "input_context" in args:
            kwargs["input_context"] = input_context
        with tf.device("/device:CPU:0"):
            return input_fn(**kwargs)

    def _params_with_batch_size(self, mode):
        params = self.params
        if self._batch_sizes[mode] is not None and not self._exporting:
            params["batch_size"] = self._batch_sizes[mode]
        return params

    def _call_model_fn_in_graph(self, features, labels, mode):
        log.info("Calling model_fn.")
        kwargs = self._model_fn_kwargs(features, labels, mode)
        kwargs["params"] = {**self._params_with_batch_size(mode), "use_tpu": False}
        log.info("Running %s on CPU/GPU", _RUNNING[mode])
        spec = self._model_fn(**kwargs)
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

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, *args, **kwargs):
        """The CPU MetaGraph (tags `serve`), as 2.15 wrote first.  2.15 also wrote a
        `serve, tpu` one (export_to_tpu), which runs only on a TPU: left out, with a note."""
        if not self._export_to_cpu:
            raise ValueError(
                "TPUEstimator(export_to_cpu=False): the export would hold only the TPU "
                "MetaGraph, which this kit does not write (it serves only on a TPU); "
                "leave export_to_cpu=True."
            )
        if self._export_to_tpu:
            warn_once(
                "TPUEstimator.export_to_tpu",
                "TPUEstimator: export_to_tpu is ignored: the export holds the `serve` "
                "MetaGraph only (tf.estimator 2.15 also wrote a `serve, tpu` one, which runs "
                "only on a TPU). Load it with tags=['serve'], as servers on CPUs and GPUs do.",
            )
        return super().export_saved_model(
            export_dir_base, serving_input_receiver_fn, *args, **kwargs
        )

    export_savedmodel = export_saved_model


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
