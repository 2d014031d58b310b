"""Downstream tools run on what Estimators write, as teams ran them on tf.estimator 2.15's
model_dirs and exports, on tiny models trained two steps.

Each program trains a model (a TF1 `model_fn` with `tf.compat.v1.losses` and a summary, a
TF1 `model_fn` with a loss of its own, a TF2-style `model_fn` with a Keras layer, the V2
`DNNClassifier`, the V1 `LinearClassifier`, a `TPUEstimator(use_tpu=False)`), exports it
over a raw receiver of one float tensor `x`, and runs the tools on both:

- checkpoint tools: `inspect_checkpoint.print_tensors_in_checkpoint_file` (the listing,
  one tensor, a missing one), `NewCheckpointReader`'s shape and dtype maps,
  `tf.train.list_variables`, `get_checkpoint_state(...).all_model_checkpoint_paths`, the
  `checkpoint` file's text, `checkpoints_iterator(timeout=...)`, and for the TF1
  `model_fn`s `import_meta_graph` on the `.meta` (its collections, its `losses`, its
  saver, the restored global step);
- events: `tf.compat.v1.train.summary_iterator` over model_dir and `eval/` (tags, steps,
  kinds) and TensorBoard's `EventAccumulator` (tags, scalars);
- freezing as TF1 users did: `loader.load`, `convert_variables_to_constants` with the
  signature's output node names, `extract_sub_graph`, `optimize_for_inference`, the
  frozen graph's op types and what it computes;
- TFLite: `TFLiteConverter.from_saved_model` (with `signature_keys=` too) and
  `tf.compat.v1.lite.TFLiteConverter.from_saved_model(signature_key=, tag_set=)`, the
  interpreter's input and output details, signatures and outputs (a canned head's
  string classes: the op the converter refuses);
- `saved_model_cli run` on an export a user added TF Serving's warmup requests to
  (`assets.extra/tf_serving_warmup_requests`).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (names, listings, shapes, collections, errors as [type, op]) and
`close` values (seeded or zero-started models: losses, frozen and TFLite outputs).
`tests/test_tooling.py` compares them with 2.15's recording
(`tests/tf215/record_family.py tooling_programs`, into `tests/data/tf215/tooling.json`).
"""

import contextlib
import glob
import io
import os
import re
import subprocess
import sys

import numpy as np

from tests.program_registry import registry

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "tooling.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
SCORED = np.array([[0.5, -0.5], [0.1, 0.2]], np.float32)


def _input_fn(tf):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (16, 2)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)

    def input_fn(params=None):
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        if params and "batch_size" in params:  # (TPUEstimator's)
            return data.repeat().batch(params["batch_size"], drop_remainder=True)
        return data.batch(8)

    return input_fn


def _raw_receiver(tf):
    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    return receiver_fn


def _floats(value):
    return np.round(np.asarray(value, np.float64), 5).tolist()


def _printed(call):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        call()
    return out.getvalue().splitlines()


# ------------------------------------------------------------------ checkpoints
def checkpoint_tools(tf, model_dir):
    """What the checkpoint tools show of model_dir's latest checkpoint."""
    from tensorflow.python.tools import inspect_checkpoint

    latest = tf.train.latest_checkpoint(model_dir)
    reader = tf.compat.v1.train.NewCheckpointReader(latest)
    state = tf.compat.v1.train.get_checkpoint_state(model_dir)
    with open(os.path.join(model_dir, "checkpoint")) as f:
        checkpoint_file = f.read().replace(model_dir, "<model_dir>").splitlines()

    def printed(name):
        return _printed(
            lambda: inspect_checkpoint.print_tensors_in_checkpoint_file(latest, name, False)
        )

    return {
        "latest": os.path.basename(latest),
        "print_tensors": printed(""),
        "print_global_step": printed("global_step"),
        "print_missing": printed("nope"),
        "shape_map": sorted([k, v] for k, v in reader.get_variable_to_shape_map().items()),
        "dtype_map": sorted([k, v.name] for k, v in reader.get_variable_to_dtype_map().items()),
        "list_variables": [[k, list(s)] for k, s in tf.train.list_variables(model_dir)],
        "all_model_checkpoint_paths": [
            os.path.relpath(p, model_dir) for p in state.all_model_checkpoint_paths
        ],
        "checkpoint_file": checkpoint_file,
        "checkpoints_iterator": [
            os.path.basename(p) for p in tf.train.checkpoints_iterator(model_dir, timeout=0.1)
        ],
        "meta_files": sorted(os.path.basename(p) for p in glob.glob(f"{model_dir}/*.meta")),
    }


def meta_graph(tf, model_dir):
    """`import_meta_graph` on the latest checkpoint's `.meta`, then restored."""
    v1 = tf.compat.v1
    latest = tf.train.latest_checkpoint(model_dir)
    with tf.Graph().as_default() as graph:
        saver = v1.train.import_meta_graph(latest + ".meta")
        seen = {
            "collections": sorted(graph.get_all_collection_keys()),
            "losses": [t.name for t in v1.losses.get_losses()],
            "total_loss": v1.losses.get_total_loss(add_regularization_losses=False).name,
            "trainable": sorted(v.name for v in v1.trainable_variables()),
            "train_op": [op.name for op in graph.get_collection("train_op")],
            "top_level_ops": sorted(
                {op.name for op in graph.get_operations() if "/" not in op.name}
            ),
            "graph_pbtxt_ops": _graph_text_ops(tf, model_dir),
            "saver": [
                saver.saver_def.filename_tensor_name,
                saver.saver_def.restore_op_name,
                saver.saver_def.max_to_keep,
                saver.saver_def.sharded,
            ],
        }
        with v1.Session() as sess:
            saver.restore(sess, latest)
            seen["global_step"] = int(sess.run(v1.train.get_global_step()))
    return seen


def _graph_text_ops(tf, model_dir):
    """The op types of model_dir's `graph.pbtxt` (TensorBoard's and freeze_graph's input)."""
    from google.protobuf import text_format

    with open(os.path.join(model_dir, "graph.pbtxt")) as f:
        graph_def = text_format.Parse(f.read(), tf.compat.v1.GraphDef())
    return sorted({node.op for node in graph_def.node})


# ------------------------------------------------------------------ events
def events(tf, model_dir):
    """{folder: {tag: [[step, kind], ...]}} of summary_iterator, and EventAccumulator's
    tags; the scalars' values apart ({folder/tag: [[step, value], ...]})."""
    from tensorboard.backend.event_processing import event_accumulator

    seen, scalars = {}, {}
    for path in sorted(glob.glob(f"{model_dir}/**/events.out.tfevents*", recursive=True)):
        folder = os.path.relpath(os.path.dirname(path), model_dir)
        tags = seen.setdefault(folder, {})
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append([event.step, value.WhichOneof("value")])
            for field in ("graph_def", "meta_graph_def", "file_version"):
                if event.HasField(field):
                    tags.setdefault(f"<{field}>", []).append(event.step)
        accumulator = event_accumulator.EventAccumulator(os.path.dirname(path))
        accumulator.Reload()
        shown = accumulator.Tags()
        seen[f"{folder} (EventAccumulator)"] = {
            k: sorted(v) if isinstance(v, list) else v for k, v in shown.items()
        }
        for tag in shown["scalars"]:
            scalars[f"{folder}/{tag}"] = [[s.step, s.value] for s in accumulator.Scalars(tag)]
    return seen, scalars


class LossesSeenHook:
    """A training hook that looks at the graph's `losses` collection as it begins."""

    @staticmethod
    def make(tf):
        class Hook(tf.compat.v1.train.SessionRunHook):
            seen = None

            def begin(self):
                Hook.seen = [t.name for t in tf.compat.v1.get_collection("losses")]

        return Hook()


# ------------------------------------------------------------------ exports
def frozen(tf, export_dir, key="serving_default"):
    """Freezing the export's `key` signature as TF1 users did: (exact, values)."""
    from tensorflow.python.tools import optimize_for_inference_lib

    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph, v1.Session() as sess:
        signature = v1.saved_model.loader.load(sess, ["serve"], export_dir).signature_def[key]
        outputs = sorted({t.name.split(":")[0] for t in signature.outputs.values()})
        outputs = [n for n in outputs if not _is_string(graph, n)]
        constants = v1.graph_util.convert_variables_to_constants(
            sess, graph.as_graph_def(), outputs
        )
    sub = v1.graph_util.extract_sub_graph(constants, outputs)
    x = signature.inputs["x"].name.split(":")[0]
    optimized = optimize_for_inference_lib.optimize_for_inference(
        sub, [x], outputs, tf.float32.as_datatype_enum
    )
    with tf.Graph().as_default(), v1.Session() as sess:
        tf.import_graph_def(optimized, name="")
        values = sess.run([f"{n}:0" for n in outputs], {f"{x}:0": SCORED})
    exact = {
        "output_nodes": outputs,
        "variables_left": sorted(n.name for n in sub.node if "Variable" in n.op),
        "op_types": sorted({n.op for n in optimized.node}),
        "input_node": [n.op for n in optimized.node if n.name == x],
    }
    return exact, dict(zip(outputs, map(_floats, values), strict=True))


def _is_string(graph, name):
    return graph.get_tensor_by_name(f"{name}:0").dtype == "string"


def tflite(tf, converter):
    """A TFLite conversion and its interpreter: (exact, values) or ([type, op], {})."""
    try:
        model = converter.convert()
    except Exception as error:  # (the converter's error is what the user sees)
        refused = re.search(r"'(tf\.\w+)' op is neither", str(error))
        return [type(error).__name__, refused and refused.group(1)], {}
    interpreter = tf.lite.Interpreter(model_content=model)
    interpreter.allocate_tensors()
    details = interpreter.get_input_details(), interpreter.get_output_details()
    described = [[d["name"], d["shape"].tolist(), np.dtype(d["dtype"]).name] for d in details[0]]
    outputs = sorted(
        [d["name"], d["shape"].tolist(), np.dtype(d["dtype"]).name] for d in details[1]
    )
    interpreter.set_tensor(details[0][0]["index"], SCORED[:1])
    interpreter.invoke()
    values = {d["name"]: _floats(interpreter.get_tensor(d["index"])) for d in details[1]}
    signatures = interpreter.get_signature_list()
    return {"inputs": described, "outputs": outputs, "signatures": signatures}, values


def tflite_three_ways(tf, export_dir, key):
    """`from_saved_model` (plain and with signature_keys) and tf.compat.v1's."""
    lite = tf.lite.TFLiteConverter
    ways = {
        "from_saved_model": lite.from_saved_model(export_dir),
        "signature_keys": lite.from_saved_model(export_dir, signature_keys=[key]),
        "v1": tf.compat.v1.lite.TFLiteConverter.from_saved_model(
            export_dir, signature_key=key, tag_set={"serve"}
        ),
    }
    results = {way: tflite(tf, converter) for way, converter in ways.items()}
    return {k: v[0] for k, v in results.items()}, {k: v[1] for k, v in results.items()}


def saved_model_cli_run(export_dir, key):
    """`saved_model_cli run` (the running TensorFlow's) on `key` with two rows of `x`:
    (its output lines without the numbers, the numbers)."""
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    ran = subprocess.run(
        [
            cli,
            "run",
            "--dir",
            export_dir,
            "--tag_set",
            "serve",
            "--signature_def",
            key,
            "--input_exprs",
            "x=[[0.5,-0.5],[0.1,0.2]]",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    lines = ran.stdout.splitlines()
    keys = [line for line in lines if line.startswith("Result for output key")]
    numbers = [float(n) for n in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", ran.stdout)]
    return keys, numbers


def warmup_requests(tf, export_dir):
    """TF Serving's warmup file, written into the export by its user as documented."""
    extra = os.path.join(export_dir, "assets.extra")
    os.makedirs(extra)
    with tf.io.TFRecordWriter(os.path.join(extra, "tf_serving_warmup_requests")) as writer:
        writer.write(b"a PredictionLog would be here")


def export_files(export_dir):
    return sorted(
        os.path.relpath(os.path.join(folder, name), export_dir)
        for folder, _, names in os.walk(export_dir)
        for name in names
    )


def _export(est, tf, workdir):
    export_dir = est.export_saved_model(os.path.join(workdir, "export"), _raw_receiver(tf))
    return export_dir.decode() if isinstance(export_dir, bytes) else export_dir


def _model_dir_read(tf, model_dir):
    """(exact, close) of the checkpoint tools and the events."""
    seen, scalars = events(tf, model_dir)
    return {"checkpoints": checkpoint_tools(tf, model_dir), "events": seen}, scalars


# ------------------------------------------------------------------ programs
def tf1_model_fn(features, labels, mode, params):
    """A TF1-era model_fn: tf.compat.v1 layers and losses, a summary, an eval metric."""
    import tensorflow as tf

    v1 = tf.compat.v1
    init = v1.glorot_uniform_initializer
    hidden = v1.layers.dense(features["x"], 3, tf.nn.relu, kernel_initializer=init(1), name="h")
    logits = v1.layers.dense(hidden, 2, kernel_initializer=init(2), name="logits")
    probabilities = tf.nn.softmax(logits, name="probabilities")
    predictions = {"probabilities": probabilities, "class_ids": tf.argmax(logits, 1)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = params["loss"](labels, logits)
    v1.summary.scalar("my_loss", loss)
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    metrics = {"acc": v1.metrics.accuracy(labels, predictions["class_ids"])}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def _tf1_trained(tf, workdir, loss):
    hook = LossesSeenHook.make(tf)
    est = tf.estimator.Estimator(
        tf1_model_fn,
        model_dir=os.path.join(workdir, "model"),
        params={"loss": loss},
        config=tf.estimator.RunConfig(tf_random_seed=3),
    )
    est.train(_input_fn(tf), steps=2, hooks=[hook])
    return est, hook.seen


@program
def tf1_model_fn_tools(tf, workdir):
    """A TF1 model_fn's model_dir and export through every tool."""
    est, losses_seen = _tf1_trained(tf, workdir, tf.compat.v1.losses.sparse_softmax_cross_entropy)
    est.evaluate(_input_fn(tf), steps=1)
    exact, scalars = _model_dir_read(tf, est.model_dir)
    export_dir = _export(est, tf, workdir)
    exact["losses_seen_by_a_hook"] = losses_seen
    exact["meta_graph"] = meta_graph(tf, est.model_dir)
    exact["frozen"], frozen_values = frozen(tf, export_dir)
    exact["tflite"], tflite_values = tflite_three_ways(tf, export_dir, "serving_default")
    warmup_requests(tf, export_dir)
    exact["export_files"] = export_files(export_dir)
    exact["cli_run"], numbers = saved_model_cli_run(export_dir, "serving_default")
    close = {"scalars": scalars, "frozen": frozen_values, "tflite": tflite_values}
    return {"exact": exact, "close": dict(close, cli_run=numbers)}


@program
def tf1_model_fn_own_loss(tf, workdir):
    """A TF1 model_fn whose loss is its own `reduce_mean` (no tf.compat.v1.losses): the
    `losses` a training hook and the `.meta` show."""

    def own_loss(labels, logits):
        return tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )

    est, losses_seen = _tf1_trained(tf, workdir, own_loss)
    exact = {"losses_seen_by_a_hook": losses_seen, "meta_graph": meta_graph(tf, est.model_dir)}
    return {"exact": exact}


def tf2_model_fn(features, labels, mode):
    """A TF2-style model_fn: a Keras layer, a tf.compat.v1 optimizer."""
    import tensorflow as tf

    layer = tf.keras.layers.Dense(
        2, kernel_initializer=tf.keras.initializers.GlorotUniform(4), name="logits"
    )
    logits = layer(features["x"])
    predictions = {"probabilities": tf.nn.softmax(logits), "class_ids": tf.argmax(logits, 1)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def tf2_model_fn_tools(tf, workdir):
    est = tf.estimator.Estimator(tf2_model_fn, model_dir=os.path.join(workdir, "model"))
    est.train(_input_fn(tf), steps=2)
    exact, scalars = _model_dir_read(tf, est.model_dir)
    export_dir = _export(est, tf, workdir)
    exact["frozen"], frozen_values = frozen(tf, export_dir)
    exact["tflite"], tflite_values = tflite(
        tf, tf.lite.TFLiteConverter.from_saved_model(export_dir)
    )
    close = {"scalars": scalars, "frozen": frozen_values, "tflite": tflite_values}
    return {"exact": exact, "close": close}


def _canned_tools(tf, est, workdir):
    """A canned classifier's model_dir and `predict` export (exact, close)."""
    est.train(_input_fn(tf), steps=2)
    exact, scalars = _model_dir_read(tf, est.model_dir)
    export_dir = _export(est, tf, workdir)
    exact["frozen"], frozen_values = frozen(tf, export_dir, "predict")
    exact["tflite"], _ = tflite_three_ways(tf, export_dir, "predict")
    return exact, {"scalars": scalars, "frozen": frozen_values}


@program
def dnn_classifier_tools(tf, workdir):
    """The V2 DNN (unseeded: its names and kinds, not its values)."""
    x = tf.feature_column.numeric_column("x", shape=[2])
    est = tf.estimator.DNNClassifier([4], [x], model_dir=os.path.join(workdir, "model"))
    exact, _ = _canned_tools(tf, est, workdir)
    return {"exact": exact}


@program
def v1_linear_classifier_tools(tf, workdir):
    """tf.compat.v1's LinearClassifier (zero-started: its values too)."""
    x = tf.feature_column.numeric_column("x", shape=[2])
    est = tf.compat.v1.estimator.LinearClassifier([x], model_dir=os.path.join(workdir, "model"))
    exact, close = _canned_tools(tf, est, workdir)
    return {"exact": exact, "close": close}


def tpu_model_fn(features, labels, mode, params):
    import tensorflow as tf

    v1 = tf.compat.v1
    logits = v1.layers.dense(
        features["x"], 2, kernel_initializer=v1.glorot_uniform_initializer(5), name="logits"
    )
    probabilities = tf.nn.softmax(logits, name="probabilities")
    if mode == tf.estimator.ModeKeys.PREDICT:
        return v1.estimator.tpu.TPUEstimatorSpec(mode, predictions={"p": probabilities})
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    return v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def tpu_estimator_tools(tf, workdir):
    """TPUEstimator(use_tpu=False): its model_dir, `.meta` and `serve` export."""
    tpu = tf.compat.v1.estimator.tpu
    model_dir = os.path.join(workdir, "model")
    est = tpu.TPUEstimator(
        model_fn=tpu_model_fn,
        use_tpu=False,
        train_batch_size=8,
        predict_batch_size=8,
        config=tpu.RunConfig(model_dir=model_dir),
    )
    est.train(_input_fn(tf), steps=2)
    exact, scalars = _model_dir_read(tf, model_dir)
    exact["meta_graph"] = meta_graph(tf, model_dir)
    export_dir = _export(est, tf, workdir)
    exact["frozen"], frozen_values = frozen(tf, export_dir)
    converter = tf.compat.v1.lite.TFLiteConverter.from_saved_model(export_dir, tag_set={"serve"})
    exact["tflite"], tflite_values = tflite(tf, converter)
    close = {"scalars": scalars, "frozen": frozen_values, "tflite": tflite_values}
    return {"exact": exact, "close": close}
