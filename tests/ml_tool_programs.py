"""Experiment-tracking and tuning tools that reach into an Estimator, written in the shape
their integrations had (the tools themselves are not installed), on 16 made-up rows and a
few steps:

- `mlflow_autolog_estimator`: MLflow 1.x's `mlflow.tensorflow.autolog()`: gorilla-style
  patches of `EventFileWriter.add_event`/`EventFileWriterV2.add_event` (the metrics it
  logs: each `simple_value` with its tag and step), `FileWriter.add_summary`,
  `Estimator.train` (its step arguments, its return value, the model_dir's event files),
  `export_saved_model` (its return value decoded as the exported dir, loaded with the
  `serve` tag and the `predict` signature MLflow logged), for a TF1 `model_fn` and the
  V2 `LinearClassifier`;
- `tfdbg_hooks_run_options`: a tfdbg-shaped hook (`RunOptions` with `FULL_TRACE` and
  partition graphs, `run_metadata` read in `after_run`, `original_args.fetches`) on
  train, evaluate and predict, and tfdbg's own `DumpingDebugHook` (with a `watch_fn`):
  its dumps' fetches and watched nodes;
- `optuna_pruning_hook_and_hypertune_exporter`: Optuna's `TensorFlowPruningHook`
  (`read_eval_metrics` of `estimator.eval_dir()` every step, `request_stop` on a prune)
  in `train_and_evaluate`, beside a `cloudml-hypertune`-style exporter reporting each
  evaluation's metric;
- `wandb_hook_and_hparams`: W&B's `WandbHook` (`merge_all` fetched each step, the
  summary parsed) on train and evaluate, and TensorBoard's HParams plugin
  (`hp.hparams_config`, `hp.hparams` and the metric written beside an Estimator's events).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (tags, steps, names, fetches, listings) and `close` values (zero-
started models on unshuffled data: 1e-4). `tests/test_ml_tools.py` compares them with
2.15's recording (`tests/tf215/record_family.py ml_tool_programs`, into
`tests/data/tf215/ml_tools.json`).
"""

import glob
import os

import numpy as np

from tests.early_stopping_programs import read_eval_metrics
from tests.program_registry import registry
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "ml_tools.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _input_fn(tf):
    def input_fn():
        x = np.linspace(0, 1, 16, dtype=np.float32).reshape(-1, 1)
        y = (x > 0.5).astype(np.int32)
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4).repeat()

    return input_fn


def _model_fn(tf):
    """A TF1 model_fn: a zero-started dense layer, a loss summary and a histogram."""

    def model_fn(features, labels, mode):
        zeros = tf.compat.v1.zeros_initializer()
        logits = tf.compat.v1.layers.dense(features["x"], 2, kernel_initializer=zeros)
        pred = tf.argmax(logits, 1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"class": pred})
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        tf.compat.v1.summary.scalar("my_loss", loss)
        tf.compat.v1.summary.histogram("logits", logits)
        accuracy = tf.compat.v1.metrics.accuracy(labels, pred)
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": accuracy}
        )

    return model_fn


class _Patches:
    """gorilla-style patches (`original` handed to the wrapper), undone on exit."""

    def __init__(self):
        self.undo = []

    def patch(self, cls, name, wrapper):
        original = getattr(cls, name)
        self.undo.append((cls, name, cls.__dict__.get(name)))

        def patched(self, *args, **kwargs):
            return wrapper(original, self, *args, **kwargs)

        setattr(cls, name, patched)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for cls, name, own in reversed(self.undo):
            if own is None:  # (it was inherited)
                delattr(cls, name)
            else:
                setattr(cls, name, own)


def _autolog(tf, patches, logged):
    """MLflow 1.x's autolog patches, recording into `logged`."""
    from tensorflow.python.summary.writer.event_file_writer import EventFileWriter
    from tensorflow.python.summary.writer.event_file_writer_v2 import EventFileWriterV2
    from tensorflow.python.summary.writer.writer import FileWriter

    def add_event(original, self, event):
        for value in event.summary.value:
            if value.HasField("simple_value"):
                where = os.path.basename(self.get_logdir())
                logged["metrics"].append([where, value.tag, int(event.step), value.simple_value])
        return original(self, event)

    def add_summary(original, self, *args, **kwargs):
        logged["flushed"].add(os.path.basename(self.get_logdir()))
        return original(self, *args, **kwargs)

    def train(original, self, *args, **kwargs):
        logged["params"].append({k: kwargs[k] for k in ("steps", "max_steps") if k in kwargs})
        result = original(self, *args, **kwargs)
        # (the event files MLflow logged as artifacts)
        logged["artifacts"] = sorted(f[:22] for f in os.listdir(self.model_dir) if "tfevents" in f)
        return result

    def export_saved_model(original, self, *args, **kwargs):
        serialized = original(self, *args, **kwargs)
        logged["exported"].append(type(serialized).__name__)
        return serialized

    for cls in (EventFileWriter, EventFileWriterV2):
        patches.patch(cls, "add_event", add_event)
    patches.patch(FileWriter, "add_summary", add_summary)
    for cls in (tf.estimator.Estimator, tf.compat.v1.estimator.Estimator):
        patches.patch(cls, "train", train)
        patches.patch(cls, "export_saved_model", export_saved_model)
    patches.patch(tf.compat.v1.estimator.Estimator, "export_savedmodel", export_saved_model)


def _loaded_predict_signature(tf, export_dir):
    """What MLflow's loader read: the `serve` MetaGraph's signatures, `predict`'s keys."""
    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        meta_graph = tf.compat.v1.saved_model.loader.load(sess, ["serve"], export_dir)
        signature = meta_graph.signature_def.get("predict")
        return {
            "signatures": sorted(meta_graph.signature_def),
            "predict": signature and [sorted(signature.inputs), sorted(signature.outputs)],
        }


def _autologged_run(tf, estimator, workdir, name):
    input_fn = _input_fn(tf)
    logged = {"metrics": [], "flushed": set(), "params": [], "exported": []}
    with _Patches() as patches:
        _autolog(tf, patches, logged)
        trained = estimator.train(input_fn, steps=5)
        estimator.evaluate(input_fn, steps=2)
        estimator.evaluate(input_fn, steps=2, name="val")
        column = tf.feature_column.numeric_column("x")
        spec = tf.compat.v1.feature_column.make_parse_example_spec([column])
        receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
        exported = estimator.export_saved_model(os.path.join(workdir, name + "_export"), receiver)
    # (global_step/sec is a rate whose steps race the step's increment: left out)
    metrics = sorted(m for m in logged.pop("metrics") if not m[1].endswith("/sec"))
    return {
        "trained_is_estimator": trained is estimator,
        "metrics": [m[:3] for m in metrics],
        "flushed": sorted(logged.pop("flushed")),
        **logged,
        "loaded": _loaded_predict_signature(tf, exported.decode("utf-8")),
    }, [m[3] for m in metrics]


@program
def mlflow_autolog_estimator(tf, workdir):
    config = tf.estimator.RunConfig(save_summary_steps=2, log_step_count_steps=3)
    custom = tf.estimator.Estimator(_model_fn(tf), os.path.join(workdir, "custom"), config=config)
    canned = tf.estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x")], os.path.join(workdir, "canned"), config=config
    )
    exact, close = {}, {}
    for name, estimator in (("custom", custom), ("canned", canned)):
        exact[name], values = _autologged_run(tf, estimator, workdir, name)
        exact[name]["model_dir"] = listing(estimator.model_dir)
        close[name] = values
    return {"exact": exact, "close": close}


def _run_options_hook(tf, log):
    """A tfdbg-shaped hook: RunOptions asking for a full trace and partition graphs, the
    run_metadata read after the run, the fetches the Estimator ran."""

    class TraceHook(tf.estimator.SessionRunHook):
        def begin(self):
            self.global_step = tf.compat.v1.train.get_global_step()

        def before_run(self, run_context):
            log.append(["fetches", repr(run_context.original_args.fetches)])
            options = tf.compat.v1.RunOptions(
                trace_level=tf.compat.v1.RunOptions.FULL_TRACE, output_partition_graphs=True
            )
            return tf.estimator.SessionRunArgs({"gs": self.global_step}, options=options)

        def after_run(self, run_context, run_values):
            metadata = run_values.run_metadata
            traced = [bool(metadata.step_stats.dev_stats), bool(metadata.partition_graphs)]
            # (the step itself is left out: read beside the train op, it races its increment)
            log.append(["ran", type(metadata).__name__, *traced, sorted(run_values.results)])

    return TraceHook()


def _dumped(tf_debug, dump_root):
    """Each run's dump under `dump_root`: its fetches and the nodes it watched."""
    runs = []
    for run_dir in sorted(glob.glob(os.path.join(dump_root, "run_*"))):
        dump = tf_debug.DebugDumpDir(run_dir)
        nodes = sorted({t.node_name for t in dump.dumped_tensor_data})
        runs.append({"fetches": dump.run_fetches_info, "nodes": nodes})
    return runs


@program
def tfdbg_hooks_run_options(tf, workdir):
    from tensorflow.python import debug as tf_debug

    input_fn = _input_fn(tf)
    estimator = tf.estimator.Estimator(_model_fn(tf), os.path.join(workdir, "model"))
    first_two = lambda: input_fn().map(lambda features, labels: features).take(2)  # noqa: E731
    seen = {}
    for mode, call in (
        ("train", lambda hooks: estimator.train(input_fn, steps=2, hooks=hooks)),
        ("evaluate", lambda hooks: estimator.evaluate(input_fn, steps=2, hooks=hooks)),
        ("predict", lambda hooks: list(estimator.predict(first_two, hooks=hooks))),
    ):
        seen[mode] = []
        call([_run_options_hook(tf, seen[mode])])
        seen[mode] = seen[mode][:4]
    dumps = {}
    for mode in ("train", "evaluate"):
        root = os.path.join(workdir, "dump_" + mode)
        watched = os.path.join(workdir, "watched_" + mode)
        hooks = [
            tf_debug.DumpingDebugHook(root),
            tf_debug.DumpingDebugHook(
                watched,
                watch_fn=lambda fetches, feeds: tf_debug.WatchOptions(
                    node_name_regex_allowlist=r"dense/.*"
                ),
            ),
        ]
        if mode == "train":
            estimator.train(input_fn, steps=1, hooks=hooks)
        else:
            estimator.evaluate(input_fn, steps=1, hooks=hooks)
        dumps[mode] = {
            "all": _dumped(tf_debug, root)[0]["fetches"],
            "watched": _dumped(tf_debug, watched),
        }
    return {"exact": {"hook": seen, "dumps": dumps}, "close": {}}


def _pruning_hook(tf, estimator, metric, run_every_steps, reports):
    """Optuna's TensorFlowPruningHook, its trial a list of (step, value) reports."""

    class TensorFlowPruningHook(tf.estimator.SessionRunHook):
        def __init__(self):
            self._current_summary_step = -1
            self._timer = tf.estimator.SecondOrStepTimer(every_steps=run_every_steps)

        def begin(self):
            self._global_step_tensor = tf.compat.v1.train.get_global_step()

        def before_run(self, run_context):
            del run_context
            return tf.estimator.SessionRunArgs(self._global_step_tensor)

        def after_run(self, run_context, run_values):
            global_step = run_values.results
            if not self._timer.should_trigger_for_step(global_step):
                return
            self._timer.update_last_triggered_step(global_step)
            eval_metrics = read_eval_metrics(tf, estimator.eval_dir())
            if eval_metrics:
                summary_step = next(reversed(eval_metrics))
                if summary_step > self._current_summary_step:
                    value = eval_metrics[summary_step][metric]
                    reports.append(["report", int(summary_step), value])
                    self._current_summary_step = summary_step
                    if summary_step >= 4:  # (the trial's should_prune())
                        reports.append(["pruned", int(summary_step)])
                        run_context.request_stop()

    return TensorFlowPruningHook()


def _hypertune_exporter(tf, reported):
    class HypertuneExporter(tf.estimator.Exporter):
        name = "hypertune"

        def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
            reported.append(
                [
                    os.path.basename(export_path),
                    os.path.basename(checkpoint_path),
                    sorted(eval_result),
                    int(eval_result["global_step"]),
                    float(eval_result["accuracy"]),
                    [isinstance(is_the_final_export, np.bool_), bool(is_the_final_export)],
                ]
            )

    return HypertuneExporter()


def _exporter_named_otherwise(tf):
    """An exporter whose `export` names its last parameter otherwise (2.15 passes them
    by keyword)."""

    class ReportingExporter(tf.estimator.Exporter):
        name = "reporting"

        def export(self, estimator, export_path, checkpoint_path, eval_result, is_final):
            return None

    return ReportingExporter()


def _misnamed_exporter_error(tf, workdir, input_fn):
    estimator = tf.estimator.Estimator(_model_fn(tf), os.path.join(workdir, "misnamed"))
    eval_spec = tf.estimator.EvalSpec(
        input_fn, steps=1, exporters=[_exporter_named_otherwise(tf)], throttle_secs=0
    )
    try:
        tf.estimator.train_and_evaluate(
            estimator, tf.estimator.TrainSpec(input_fn, max_steps=1), eval_spec
        )
    except TypeError as error:
        return ["TypeError", str(error).splitlines()[0]]
    return None


@program
def optuna_pruning_hook_and_hypertune_exporter(tf, workdir):
    input_fn = _input_fn(tf)
    config = tf.estimator.RunConfig(save_checkpoints_steps=2)
    estimator = tf.estimator.Estimator(_model_fn(tf), os.path.join(workdir, "m"), config=config)
    reports, reported = [], []
    hook = _pruning_hook(tf, estimator, "accuracy", 1, reports)
    result = tf.estimator.train_and_evaluate(
        estimator,
        tf.estimator.TrainSpec(input_fn, max_steps=10, hooks=[hook]),
        tf.estimator.EvalSpec(
            input_fn,
            steps=2,
            exporters=[_hypertune_exporter(tf, reported)],
            throttle_secs=0,
            start_delay_secs=0,
        ),
    )
    evaluations = read_eval_metrics(tf, estimator.eval_dir())
    return {
        "exact": {
            "returned": [sorted(result[0]), result[1]],
            "reports": [r[:2] for r in reports],
            "hypertune": [r[:4] + r[5:] for r in reported],
            "evaluations": {str(k): sorted(v) for k, v in evaluations.items()},
            "checkpoint": os.path.basename(estimator.latest_checkpoint()),
            "misnamed_exporter": _misnamed_exporter_error(tf, workdir, input_fn),
        },
        "close": {
            "reports": [r[2] for r in reports if r[0] == "report"],
            "hypertune": [r[4] for r in reported],
            "evaluations": {str(k): v for k, v in evaluations.items()},
        },
    }


def _wandb_hook(tf, rows):
    """W&B's WandbHook: every summary merged, fetched each step and parsed."""

    class WandbHook(tf.estimator.SessionRunHook):
        def begin(self):
            self._summary_op = tf.compat.v1.summary.merge_all()
            self._global_step = tf.compat.v1.train.get_or_create_global_step()

        def before_run(self, run_context):
            fetches = {"summary": self._summary_op, "global_step": self._global_step}
            return tf.estimator.SessionRunArgs(fetches)

        def after_run(self, run_context, run_values):
            summary = tf.compat.v1.Summary()
            summary.ParseFromString(run_values.results["summary"])
            values = sorted([v.tag, v.WhichOneof("value")] for v in summary.value)
            rows.append(values)  # (its step, read beside the train op, races the increment)

    return WandbHook()


def _event_values(tf, directory):
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "events*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for v in event.summary.value:
                found.append([event.step, v.tag, v.metadata.plugin_data.plugin_name])
    return sorted(found)


@program
def wandb_hook_and_hparams(tf, workdir):
    from tensorboard.plugins.hparams import api as hp

    input_fn = _input_fn(tf)
    hp_dir = os.path.join(workdir, "hp")
    learning_rate = hp.HParam("learning_rate", hp.Discrete([0.1, 0.2]))
    with tf.summary.create_file_writer(hp_dir).as_default():
        hp.hparams_config(hparams=[learning_rate], metrics=[hp.Metric("accuracy")])
    run_dir = os.path.join(hp_dir, "run-0")
    estimator = tf.estimator.Estimator(_model_fn(tf), run_dir)
    train_rows, eval_rows = [], []
    estimator.train(input_fn, steps=2, hooks=[_wandb_hook(tf, train_rows)])
    result = estimator.evaluate(input_fn, steps=1, hooks=[_wandb_hook(tf, eval_rows)])
    with tf.summary.create_file_writer(run_dir).as_default():
        hp.hparams({learning_rate: 0.1})
        tf.summary.scalar("accuracy", result["accuracy"], step=int(result["global_step"]))
    return {
        "exact": {
            "wandb": {"train": train_rows, "evaluate": eval_rows},
            "files": listing(hp_dir),
            "run_events": _event_values(tf, run_dir),
        },
        "close": {"evaluate": {k: float(v) for k, v in result.items()}},
    }
