"""Kubeflow's and Vertex AI's own Estimator samples, written as they were (after
`tf_upgrade_v2`), on a few dozen made-up rows and a few steps, each task alone.

- `mnist_tfjob_chief`: kubeflow/examples' `mnist/model.py`: a `tf.compat.v1.layers` CNN
  `model_fn` whose only export output is named `classes` (its `uint8` classes beside the
  softmax), `numpy_input_fn`s, `RunConfig(save_summary_steps=..., save_checkpoints_steps=
  ...)`, a `FinalExporter` named by `TF_EXPORT_DIR`'s default `mnist/` (trailing slash),
  `EvalSpec(steps=1, exporters=<one exporter>, throttle_secs=1)`, `train_and_evaluate`
  under a TFJob's TF_CONFIG for a lone chief (no evaluator: it trains only), then
  `export_saved_model` into the relative `mnist/`, the sample's `export_savedmodel`, and
  into a `pathlib.Path` (as `AIP_MODEL_DIR` is often wrapped), which 2.15 refused with
  `tf.compat.as_bytes`'s TypeError before calling model_fn (the kit exported there);
- `vertex_trainer_exporters`: a cloud trainer's `task.py`: `--job-dir` as model_dir, a
  `LinearClassifier` on a flat numeric column served from `[None, 8, 8]` images, a
  `BestExporter`, a `LatestExporter` and a `FinalExporter` in one named `EvalSpec`, the
  returned eval result (what `hypertune` is given) and export paths, the model exported
  again into `AIP_MODEL_DIR` (and into a `pathlib.Path`, refused); then the same job as a
  lone evaluator task of TF_CONFIG;
- `pipelines_dnn_trainer`: kubeflow/pipelines' old `dnntrainer` component: TFRecords read
  by `make_batched_features_dataset`, identity and weighted-identity indicator columns, a
  `DNNClassifier` under `train_and_evaluate` with `max_steps=None` (a `FinalExporter`
  that never runs: no step is final) and its `DNNRegressor` branch given a TF1 optimizer;
- `tf_config_as_set`: what `RunConfig` reads of the TF_CONFIGs these platforms set
  (Vertex's `workerpool0`, a `trial` in the task, `environment: cloud`, a `job` dict, a
  string index, a missing cluster), and of a TF_CONFIG set but empty, which 2.15's
  RunConfig refused with json's `JSONDecodeError` while its `train_and_evaluate` took it
  as unset (the kit took it as unset in both).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (listings, signatures, log lines, errors as [type, first line]).
Environment variables are set for the program and restored. A canned model's listing
leaves out the `.meta` files and its log lines 2.15's graph lines, which the kit's TF2
path does not write (docs/guide/estimator.md). `tests/test_kubeflow_samples.py` compares
them with 2.15's recording (`tests/tf215/record_family.py kubeflow_sample_programs`, into
`tests/data/tf215/kubeflow_samples.json`).
"""

import contextlib
import glob
import json
import os
import pathlib

import numpy as np

from tests.distribute_config_programs import _canned_lines
from tests.migrate_guide_programs import _user_lines
from tests.other_cloud_programs import _environ
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines
from tests.tutorial_programs import listing, signatures

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "kubeflow_samples.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


@contextlib.contextmanager
def _cwd(folder):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _seen(call):
    """["ok", what `call()` returned], or [type, first line] of what it raised."""
    try:
        return ["ok", call()]
    except Exception as e:
        return [type(e).__name__, str(e).splitlines()[0] if str(e) else ""]


def _error(call):
    """`_seen` of a call whose value the user does not look at."""

    def called():
        call()

    return _seen(called)


def _without_meta(names):
    return [name for name in names if not name.endswith(".meta")]


def _exports(model_dir):
    """{exporter folder: signatures of each export in it}."""
    found = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "export", "*", "*"))):
        found.setdefault(os.path.basename(os.path.dirname(path)), []).append(signatures(path))
    return found


# ------------------------------------------------------------------ kubeflow/examples mnist
N_DIGITS = 10
X_FEATURE = "x"


def _conv_model(tf):
    def conv_model(features, labels, mode):
        feature = tf.reshape(features[X_FEATURE], [-1, 8, 8, 1])
        with tf.compat.v1.variable_scope("conv_layer1"):
            h_conv1 = tf.compat.v1.layers.conv2d(
                feature, filters=4, kernel_size=[3, 3], padding="same", activation=tf.nn.relu
            )
            h_pool1 = tf.compat.v1.layers.max_pooling2d(
                h_conv1, pool_size=2, strides=2, padding="same"
            )
        with tf.compat.v1.variable_scope("conv_layer2"):
            h_conv2 = tf.compat.v1.layers.conv2d(
                h_pool1, filters=8, kernel_size=[3, 3], padding="same", activation=tf.nn.relu
            )
            h_pool2 = tf.compat.v1.layers.max_pooling2d(
                h_conv2, pool_size=2, strides=2, padding="same"
            )
            h_pool2_flat = tf.reshape(h_pool2, [-1, 2 * 2 * 8])
        h_fc1 = tf.compat.v1.layers.dense(h_pool2_flat, 16, activation=tf.nn.relu)
        h_fc1 = tf.compat.v1.layers.dropout(
            h_fc1, rate=0.5, training=(mode == tf.estimator.ModeKeys.TRAIN)
        )
        logits = tf.compat.v1.layers.dense(h_fc1, N_DIGITS, activation=None)
        predict = tf.nn.softmax(logits)
        classes = tf.cast(tf.argmax(input=predict, axis=1), tf.uint8)
        predicted_classes = tf.argmax(input=logits, axis=1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {"class": predicted_classes, "prob": tf.nn.softmax(logits)}
            outputs = tf.estimator.export.PredictOutput(
                {"predictions": predict, "classes": classes}
            )
            return tf.estimator.EstimatorSpec(
                mode, predictions=predictions, export_outputs={"classes": outputs}
            )
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.01)
            train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        metrics = {
            "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=predicted_classes)
        }
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

    return conv_model


def _images_receiver(tf):
    def cnn_serving_input_receiver_fn():
        inputs = {X_FEATURE: tf.compat.v1.placeholder(tf.float32, [None, 8, 8])}
        return tf.estimator.export.ServingInputReceiver(inputs, inputs)

    return cnn_serving_input_receiver_fn


def _digits(rows, seed):
    r = np.random.RandomState(seed)
    return r.rand(rows, 64).astype(np.float32), r.randint(0, N_DIGITS, rows).astype(np.int32)


_LONE_CHIEF = {"cluster": {"chief": ["localhost:2222"]}, "task": {"type": "chief", "index": 0}}


@program
def mnist_tfjob_chief(tf, workdir):
    images, labels = _digits(64, 0)
    numpy_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn
    train_input_fn = numpy_input_fn(
        x={X_FEATURE: images}, y=labels, batch_size=16, num_epochs=None, shuffle=True
    )
    test_input_fn = numpy_input_fn(x={X_FEATURE: images}, y=labels, num_epochs=1, shuffle=False)
    model_dir = os.path.join(workdir, "model")
    serving_fn = _images_receiver(tf)
    with _environ(TF_CONFIG=json.dumps(_LONE_CHIEF)), _cwd(workdir), _info_lines() as lines:
        training_config = tf.estimator.RunConfig(
            model_dir=model_dir, save_summary_steps=100, save_checkpoints_steps=1000
        )
        classifier = tf.estimator.Estimator(
            model_fn=_conv_model(tf), model_dir=model_dir, config=training_config
        )
        export_final = tf.estimator.FinalExporter("mnist/", serving_input_receiver_fn=serving_fn)
        train_spec = tf.estimator.TrainSpec(input_fn=train_input_fn, max_steps=5)
        eval_spec = tf.estimator.EvalSpec(
            input_fn=test_input_fn,
            steps=1,
            exporters=export_final,
            throttle_secs=1,
            start_delay_secs=1,
        )
        returned = tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
        exported = classifier.export_saved_model("mnist/", serving_input_receiver_fn=serving_fn)
        deprecated = _error(lambda: classifier.export_savedmodel("mnist/", serving_fn))
    with _info_lines() as path_lines:  # (AIP_MODEL_DIR as a pathlib.Path)
        as_path = _error(lambda: classifier.export_saved_model(pathlib.Path(workdir), serving_fn))
    return {
        "exact": {
            "returned": returned,
            "lines": _user_lines(lines, workdir),
            "exported": [type(exported).__name__, os.path.dirname(exported.decode())],
            "files": listing(workdir),
            "signatures": signatures(os.path.join(workdir, exported.decode())),
            "export_savedmodel": deprecated,
            "export_to_a_path": [as_path[0], as_path[1].replace(workdir, "<workdir>")],
            "export_to_a_path_lines": _user_lines(path_lines, workdir),
        }
    }


# ------------------------------------------------------------------ a Vertex trainer
def _flat_columns(tf):
    return [tf.feature_column.numeric_column("x", shape=(64,))]


def _digit_inputs(tf):
    images, labels = _digits(48, 1)

    def train_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": images}, labels))
        return dataset.repeat().batch(16)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": images}, labels)).batch(16)

    return train_input_fn, eval_input_fn


def _vertex_local(tf, workdir, job_dir):
    """The trainer run on Vertex with one replica: (result, export paths, log lines)."""
    train_input_fn, eval_input_fn = _digit_inputs(tf)
    serving = _images_receiver(tf)
    config = tf.estimator.RunConfig(
        model_dir=job_dir, save_checkpoints_steps=3, keep_checkpoint_max=2
    )
    estimator = tf.estimator.LinearClassifier(
        feature_columns=_flat_columns(tf), n_classes=N_DIGITS, config=config
    )
    exporters = [
        tf.estimator.BestExporter(
            name="best_exporter", serving_input_receiver_fn=serving, exports_to_keep=1
        ),
        tf.estimator.LatestExporter("census", serving, exports_to_keep=2),
        tf.estimator.FinalExporter("mnist/", serving_input_receiver_fn=serving),
    ]
    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=9)
    eval_spec = tf.estimator.EvalSpec(
        eval_input_fn,
        steps=None,
        exporters=exporters,
        throttle_secs=0,
        start_delay_secs=0,
        name="census-eval",
    )
    with _info_lines() as lines:
        metrics, paths = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    aip = estimator.export_saved_model(os.environ["AIP_MODEL_DIR"], serving)
    as_path = _error(lambda: estimator.export_saved_model(pathlib.Path(job_dir), serving))
    paths = [os.path.relpath(os.path.dirname(p.decode()), job_dir) for p in paths]
    seen = {
        "eval_keys": sorted(metrics),
        "global_step": int(metrics["global_step"]),
        "export_paths": paths,
        "aip_model_dir": [type(aip).__name__, listing(os.environ["AIP_MODEL_DIR"])],
        "export_to_a_path": [as_path[0], as_path[1].replace(workdir, "<workdir>")],
    }
    return seen, _canned_lines(lines, workdir)


def _vertex_evaluator(tf, job_dir):
    """The same job again as a lone evaluator task: it evaluates the last checkpoint,
    exports, and stops (its step is max_steps)."""
    _, eval_input_fn = _digit_inputs(tf)
    estimator = tf.estimator.LinearClassifier(
        feature_columns=_flat_columns(tf),
        n_classes=N_DIGITS,
        config=tf.estimator.RunConfig(model_dir=job_dir),
    )
    best = tf.estimator.BestExporter(
        name="best_exporter", serving_input_receiver_fn=_images_receiver(tf), exports_to_keep=1
    )
    train_spec = tf.estimator.TrainSpec(_digit_inputs(tf)[0], max_steps=9)
    eval_spec = tf.estimator.EvalSpec(
        eval_input_fn, steps=2, exporters=[best], throttle_secs=0, start_delay_secs=0
    )
    return tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)


@program
def vertex_trainer_exporters(tf, workdir):
    job_dir = os.path.join(workdir, "job")
    aip = {
        "AIP_MODEL_DIR": os.path.join(workdir, "aip_model"),
        "AIP_TENSORBOARD_LOG_DIR": os.path.join(workdir, "aip_logs"),
        "TF_CONFIG": None,
    }
    with _environ(**aip):
        seen, lines = _vertex_local(tf, workdir, job_dir)
        files = listing(job_dir)
        exports = _exports(job_dir)
    evaluator = {
        "cluster": {"chief": ["localhost:2222"]},
        "task": {"type": "evaluator", "index": 0},
    }
    with _environ(TF_CONFIG=json.dumps(evaluator)), _info_lines() as evaluator_lines:
        returned = _vertex_evaluator(tf, job_dir)
    return {
        "exact": {
            **seen,
            "lines": lines,
            "files": _without_meta(files),
            "exports": exports,
            "evaluator_returned": returned,
            "evaluator_lines": _canned_lines(evaluator_lines, workdir),
            "evaluator_files": _without_meta(listing(job_dir)),
            "aip_tensorboard_log_dir": os.path.exists(aip["AIP_TENSORBOARD_LOG_DIR"]),
        }
    }


# ------------------------------------------------------------------ kubeflow/pipelines dnntrainer
_SPEC = {
    "num": ("fixed", "float32"),
    "cat": ("fixed", "int64"),
    "text_indices": ("var", "int64"),
    "text_weights": ("var", "float32"),
    "target": ("fixed", "int64"),
}


def _feature_spec(tf):
    return {
        name: tf.io.FixedLenFeature([], getattr(tf, dtype))
        if kind == "fixed"
        else tf.io.VarLenFeature(getattr(tf, dtype))
        for name, (kind, dtype) in _SPEC.items()
    }


def _write_transformed(tf, path, rows, seed):
    """TFRecords as the preprocessing's transform wrote them (made up)."""
    r = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(rows):
            words = r.randint(1, 4)
            feature = {
                "num": tf.train.Feature(float_list=tf.train.FloatList(value=[r.rand()])),
                "cat": tf.train.Feature(int64_list=tf.train.Int64List(value=[r.randint(0, 3)])),
                "text_indices": tf.train.Feature(
                    int64_list=tf.train.Int64List(value=list(r.randint(0, 5, words)))
                ),
                "text_weights": tf.train.Feature(
                    float_list=tf.train.FloatList(value=list(r.rand(words)))
                ),
                "target": tf.train.Feature(int64_list=tf.train.Int64List(value=[r.randint(0, 3)])),
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())


def _training_input_fn(tf, data_dir, mode, batch_size, num_epochs=None):
    def _input_fn():
        epochs = 1 if mode == "eval" else num_epochs
        dataset = tf.compat.v1.data.experimental.make_batched_features_dataset(
            os.path.join(data_dir, mode + "-*"),
            batch_size,
            _feature_spec(tf),
            num_epochs=epochs,
            shuffle=False,
        )
        return dataset.map(lambda features: (features, features.pop("target")))

    return _input_fn


def _dnn_trainer_columns(tf):
    fc = tf.feature_column
    indices = fc.categorical_column_with_identity("text_indices", num_buckets=6)
    return [
        fc.numeric_column("num", shape=()),
        fc.indicator_column(fc.categorical_column_with_identity("cat", num_buckets=3)),
        fc.indicator_column(fc.weighted_categorical_column(indices, "text_weights")),
    ]


def _examples_receiver(tf):
    def serving_input_fn():
        raw = tf.compat.v1.placeholder(tf.string, [None], name="input_example_tensor")
        spec = {k: v for k, v in _feature_spec(tf).items() if k != "target"}
        features = tf.io.parse_example(serialized=raw, features=spec)
        return tf.estimator.export.ServingInputReceiver(features, {"examples": raw})

    return serving_input_fn


@program
def pipelines_dnn_trainer(tf, workdir):
    data_dir = os.path.join(workdir, "transformed")
    os.makedirs(data_dir)
    _write_transformed(tf, os.path.join(data_dir, "train-00000"), 40, 0)
    _write_transformed(tf, os.path.join(data_dir, "eval-00000"), 20, 1)
    job_dir = os.path.join(workdir, "job")
    columns = _dnn_trainer_columns(tf)
    config = tf.estimator.RunConfig(save_checkpoints_steps=1000)
    optimizer = tf.compat.v1.train.AdagradOptimizer(0.1)
    regressor = tf.estimator.DNNRegressor(
        feature_columns=columns,
        hidden_units=[4],
        config=config,
        model_dir=job_dir + "_regressor",
        optimizer=optimizer,
    )
    regressor_error = _error(
        lambda: regressor.train(_training_input_fn(tf, data_dir, "train", 8, 1))
    )
    estimator = tf.estimator.DNNClassifier(
        feature_columns=columns, hidden_units=[4, 3], n_classes=3, config=config, model_dir=job_dir
    )
    exporter = tf.estimator.FinalExporter("export", _examples_receiver(tf))
    train_spec = tf.estimator.TrainSpec(
        input_fn=_training_input_fn(tf, data_dir, "train", 8, num_epochs=2), max_steps=None
    )
    eval_spec = tf.estimator.EvalSpec(
        input_fn=_training_input_fn(tf, data_dir, "eval", 8), exporters=[exporter]
    )
    with _environ(TF_CONFIG=None), _info_lines() as lines:
        metrics, paths = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    return {
        "exact": {
            "regressor_tf1_optimizer": [regressor_error[0], regressor_error[1].split(" Given:")[0]],
            "eval_keys": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "export_paths": paths,
            "lines": _canned_lines(lines, workdir),
            "files": _without_meta(listing(job_dir)),
            "variables": sorted(estimator.get_variable_names()),
        }
    }


# ------------------------------------------------------------------ TF_CONFIGs as set
_TF_CONFIGS = {
    "vertex_workerpool0": {
        "cluster": {"workerpool0": ["localhost:2222"]},
        "task": {"type": "workerpool0", "index": 0},
    },
    "vertex_chief_trial": {
        "cluster": {"chief": ["localhost:2222"]},
        "environment": "cloud",
        "task": {"type": "chief", "index": 0, "trial": "3"},
        "job": {"worker_pool_specs": [{"replica_count": "1"}]},
    },
    "index_as_string": {"cluster": {"chief": ["h:2222"]}, "task": {"type": "chief", "index": "0"}},
    "no_index": {"cluster": {"chief": ["h:2222"]}, "task": {"type": "chief"}},
    "no_cluster": {"task": {"type": "chief", "index": 0}},
    "empty_cluster_master": {"cluster": {}, "task": {"type": "master", "index": 0}},
    "empty": {"cluster": {}, "task": {}},
}


def _run_config_fields(tf):
    config = tf.estimator.RunConfig()
    return [
        config.task_type,
        config.task_id,
        config.is_chief,
        config.master,
        config.num_worker_replicas,
        config.num_ps_replicas,
        config.global_id_in_cluster,
    ]


def _empty_tf_config(tf, workdir):
    """TF_CONFIG set but empty (a container's `TF_CONFIG=`), then a config made before
    it given to train_and_evaluate."""
    x = np.arange(8, dtype=np.float32).reshape(8, 1)
    made = tf.estimator.RunConfig(model_dir=os.path.join(workdir, "made"))
    with _environ(TF_CONFIG=""):
        seen = {
            "run_config": _seen(lambda: tf.estimator.RunConfig().task_type),
            "both_checkpoint_settings": _error(
                lambda: tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
            ),
            "estimator_without_config": _error(
                lambda: tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")])
            ),
            "replace": _seen(lambda: made.replace(save_summary_steps=7).task_type),
        }
        estimator = tf.estimator.LinearRegressor(
            [tf.feature_column.numeric_column("x")], config=made
        )
        input_fn = lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, x)).batch(4)  # noqa: E731
        spec = tf.estimator.TrainSpec(input_fn, max_steps=2)
        metrics, _ = tf.estimator.train_and_evaluate(
            estimator, spec, tf.estimator.EvalSpec(input_fn, throttle_secs=0)
        )
        seen["train_and_evaluate"] = sorted(metrics)
    return seen


@program
def tf_config_as_set(tf, workdir):
    seen = {}
    for name, tf_config in _TF_CONFIGS.items():
        with _environ(TF_CONFIG=json.dumps(tf_config)):
            seen[name] = _seen(lambda: _run_config_fields(tf))
    with _environ(TF_CONFIG="not json"):
        seen["not_json"] = _error(tf.estimator.RunConfig)
    with _environ(TF_CONFIG=None):
        seen["empty_tf_config"] = _empty_tf_config(tf, workdir)
    return {"exact": seen}


@program
def paths_as_pathlib(tf, workdir):
    """`pathlib.Path`s where a trainer's flags (`--job-dir`, `AIP_MODEL_DIR`) end up: a
    model_dir (2.15 took it), a checkpoint_path to evaluate and predict (2.15: its Saver's
    TypeError), a `warm_start_from` (2.15: its ValueError when the Estimator is made) and a
    `WarmStartSettings` path (taken)."""
    x = np.arange(8, dtype=np.float32).reshape(8, 1)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x)).batch(4)

    columns = [tf.feature_column.numeric_column("x")]
    folder = pathlib.Path(workdir)
    estimator = tf.estimator.LinearRegressor(columns, model_dir=folder / "job")
    estimator.train(input_fn, steps=2)
    checkpoint = pathlib.Path(estimator.latest_checkpoint())

    def warm_started(start):
        model = tf.estimator.LinearRegressor(
            columns, model_dir=folder / "warm", warm_start_from=start
        )
        return model.train(input_fn, steps=1) and None

    settings = tf.estimator.WarmStartSettings(folder / "job")

    def in_job(seen):
        return [part.replace(workdir, "<workdir>") for part in seen]

    return {
        "exact": {
            "model_dir": [
                type(estimator.model_dir).__name__,
                os.path.basename(estimator.model_dir),
            ],
            "evaluate": in_job(
                _error(lambda: estimator.evaluate(input_fn, checkpoint_path=checkpoint))
            ),
            "predict": in_job(
                _error(lambda: list(estimator.predict(input_fn, checkpoint_path=checkpoint)))
            ),
            "warm_start_from": _error(lambda: warm_started(folder / "job")),
            "warm_start_settings": _error(lambda: warm_started(settings)),
        }
    }
