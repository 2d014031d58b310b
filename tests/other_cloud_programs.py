"""Estimator code written for other clouds' ML services, after `tf_upgrade_v2` and the hand
edits its report asks for (`tf.contrib.learn`'s CSV loaders as numpy's, `inspect.getargspec`
as `inspect.signature`), on tiny made-up data each program writes. The services' own
libraries are not installed on either side: their drivers are written out here in their
shape.

- `sagemaker_abalone_layers`: Amazon SageMaker's legacy ("framework mode") TensorFlow
  container running amazon-sagemaker-examples' `tensorflow_abalone_age_predictor_using_layers`:
  the container's `Trainer` (a `RunConfig(model_dir=..., save_checkpoints_secs=300)` of
  the hyperparameters it knows, `Estimator(model_fn, params=hyperparameters)`, input_fns
  called through lambdas with arguments resolved by name, `TrainSpec(max_steps=
  training_steps)`, `EvalSpec(steps=evaluation_steps)` given one `LatestExporter('Servo')`,
  `train_and_evaluate`); the user's module imports `build_raw_serving_input_receiver_fn`
  and `PredictOutput` from `tensorflow.python.estimator.export`, its input_fns return
  `numpy_input_fn(...)()`'s tensors, its serving_input_fn a raw receiver of a [1, 7]
  placeholder; the model_fn's `params` named `hyperparameters` (2.15 refused it as not
  taking params before it looked for unexpected arguments); the receiver given numpy arrays in place of placeholders (2.15 read
  their shape by `get_shape()`: an AttributeError when exporting);
- `sagemaker_iris_estimator_fn`: `tensorflow_iris_dnn_classifier_using_estimators`: the
  user's `estimator_fn(run_config, params)` returning a `DNNClassifier`, a parsing
  serving_input_fn, input_fns taking `(params, input_channels)`, and the container's later
  `exporter_fn(name, params)` returning a `FinalExporter`; no serving_input_fn at all
  (the container then gives `exporters=None`);
- `sagemaker_keras_model_fn`: the container's `keras_model_fn` branch
  (`tf.keras.estimator.model_to_estimator(keras_model=..., config=run_config)`) over the
  Keras abalone sample's model, its serving_input_fn keyed by the first layer's input;
- `sagemaker_resnet_cifar_model_fn`: `tensorflow_resnet_cifar10_with_tensorboard`'s
  model_fn (a small conv net in place of the resnet): `tf.summary.image`, named tensors
  for logging, a piecewise-constant learning rate, Momentum grouped with UPDATE_OPS,
  `train_op=None` outside training, input_fns returning random tensors, a
  `ServingInputReceiver(inputs, inputs)`;
- `sagemaker_script_mode_mnist`: script mode's `mnist.py`: argparse over `--model_dir`,
  `SM_MODEL_DIR`, `SM_CHANNEL_TRAINING`, `SM_HOSTS`, `SM_CURRENT_HOST`, `.npy` channels,
  a tf.layers model_fn without params (tests/tf1_sample_programs.py's tutorial model), `train_and_evaluate` with a bare `EvalSpec`, then
  `export_savedmodel` (`export_saved_model` after `tf_upgrade_v2`) into `SM_MODEL_DIR`
  on the first host;
- `sagemaker_tf_config`: the TF_CONFIG both containers build for parameter servers
  (`master`, `worker` and `ps` tasks, `"environment": "cloud"`): what `RunConfig` reads
  from it on each host, and Azure ML's (ps and workers, no chief), which 2.15 refused;
- `azureml_log_hook_evaluates`: the Azure ML samples' `AmlTfLogHook`, a training hook
  calling its Estimator's `evaluate` (pandas input) every n steps and logging the metrics
  to the run;
- `sagemaker_pipe_mode_ctr`: a pipe-mode CTR trainer (sagemaker_tensorflow's
  `PipeModeDataset` written out over the channel's TFRecords; the shuffle given a seed):
  a `tf.estimator.Estimator` subclass whose model_fn hashes string features into
  embeddings of its own (`embedding_lookup(max_norm=...)`), hidden units given as strings
  (`"8,4".split(",")`), a summed sigmoid loss, accuracy and AUC summarized; the input_fn
  sharded by host and read by a one-shot iterator, labels picked from a dict;
  `TrainSpec` without `max_steps` (the channel read once), `EvalSpec(throttle_secs=300,
  steps=100)`, predictions, and a raw receiver of placeholders made in a graph of their
  own.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts and `close` values. `tests/test_other_cloud.py` compares them with
2.15's recording (`tests/tf215/record_family.py other_cloud_programs`, into
`tests/data/tf215/other_cloud.json`).
"""

import contextlib
import inspect
import json
import logging
import os
import re

import numpy as np

from tests.gcp_lab_programs import _lab_lines
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tf1_sample_programs import cnn_model_fn
from tests.tutorial_programs import DATA_DIR, listing, signatures

RECORDED = os.path.join(DATA_DIR, "other_cloud.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

logger = logging.getLogger("tf_container")
_SHARDS = re.compile(r"data-\d+-of-\d+")


@contextlib.contextmanager
def _environ(**values):
    """os.environ with `values` set (None: unset), as the container sets them; restored
    afterwards."""
    before = {k: os.environ.get(k) for k in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class Trainer:
    """The legacy SageMaker TensorFlow container's trainer (tf_container/trainer.py)."""

    DEFAULT_TRAINING_CHANNEL = "training"

    def __init__(self, tf, customer_script, train_steps, eval_steps, channels, model_path, params):
        self.tf, self.customer_script = tf, customer_script
        self.train_steps, self.eval_steps = train_steps, eval_steps
        self.input_channels, self.model_path = channels, model_path
        params["save_checkpoints_secs"] = params.get("save_checkpoints_secs", 300)
        self.customer_params = params

    def train(self):
        run_config = self._build_run_config()
        estimator = self._build_estimator(run_config=run_config)
        train_spec = self._build_train_spec()
        eval_spec = self._build_eval_spec()
        return estimator, self.tf.estimator.train_and_evaluate(
            estimator=estimator, train_spec=train_spec, eval_spec=eval_spec
        )

    def _build_run_config(self):
        valid_runconfig_keys = [
            "save_summary_steps",
            "save_checkpoints_secs",
            "save_checkpoints_steps",
            "keep_checkpoint_max",
            "keep_checkpoint_every_n_hours",
            "log_step_count_steps",
        ]
        runconfig_params = {
            k: v for k, v in self.customer_params.items() if k in valid_runconfig_keys
        }
        logger.info("creating RunConfig:")
        return self.tf.estimator.RunConfig(model_dir=self.model_path, **runconfig_params)

    def _build_estimator(self, run_config):
        hyperparameters = self.customer_params
        if hasattr(self.customer_script, "estimator_fn"):
            return self.customer_script.estimator_fn(run_config, hyperparameters)
        if hasattr(self.customer_script, "keras_model_fn"):
            model = self.customer_script.keras_model_fn(hyperparameters)
            return self.tf.keras.estimator.model_to_estimator(keras_model=model, config=run_config)
        return self.tf.estimator.Estimator(
            model_fn=self.customer_script.model_fn, params=hyperparameters, config=run_config
        )

    def _build_train_spec(self):
        declared_args = inspect.signature(self.customer_script.train_input_fn).parameters
        invoke_args = {arg: self._resolve(arg) for arg in declared_args}
        train_input_fn = lambda: self.customer_script.train_input_fn(**invoke_args)  # noqa: E731
        return self.tf.estimator.TrainSpec(train_input_fn, max_steps=self.train_steps)

    def _build_eval_spec(self):
        declared_args = inspect.signature(self.customer_script.eval_input_fn).parameters
        invoke_args = {arg: self._resolve(arg) for arg in declared_args}
        eval_input_fn = lambda: self.customer_script.eval_input_fn(**invoke_args)  # noqa: E731
        params = self.customer_params
        if hasattr(self.customer_script, "exporter_fn"):
            exporter = self.customer_script.exporter_fn("Servo", params)
        elif hasattr(self.customer_script, "serving_input_fn"):
            exporter = self.tf.estimator.LatestExporter(
                "Servo",
                serving_input_receiver_fn=lambda: self.customer_script.serving_input_fn(params),
            )
        else:
            logger.warning("serving_input_fn not specified, model NOT saved")
            exporter = None
        valid_eval_keys = ["start_delay_secs", "throttle_secs"]
        eval_params = {k: v for k, v in params.items() if k in valid_eval_keys}
        return self.tf.estimator.EvalSpec(
            eval_input_fn, steps=self.eval_steps, exporters=exporter, **eval_params
        )

    def _resolve(self, alias_key):
        key_mappings = {
            ("training_dir", "dir"): "training_dir",
            ("hyperparameters", "params"): "hyperparameters",
            ("input_channels", "channels"): "input_channels",
        }
        resolved_key = next((v for k, v in key_mappings.items() if alias_key in k), None)
        values = {
            "training_dir": self.input_channels.get(self.DEFAULT_TRAINING_CHANNEL),
            "hyperparameters": self.customer_params,
            "input_channels": self.input_channels,
        }
        return values[resolved_key] if resolved_key else None


def _job(trainer):
    """A training job: the trainer's (estimator, train_and_evaluate's result) and the log
    lines it wrote."""
    with _info_lines() as lines:
        estimator, result = trainer.train()
    return estimator, result, lines


def build_tf_config(hosts, current_host, ps_task=False):
    """The TF_CONFIG SageMaker's containers build for parameter servers."""
    masters, workers = hosts[:1], hosts[1:]
    ps = hosts[:] if len(hosts) > 1 else None
    task_type = "master" if current_host in masters else "worker"
    task_map = {"master": masters, "worker": workers}
    tf_config = {
        "cluster": {"master": [f"{h}:2222" for h in masters]},
        "environment": "cloud",
    }
    if ps:
        tf_config["cluster"]["ps"] = [f"{h}:2223" for h in ps]
    if workers:
        tf_config["cluster"]["worker"] = [f"{h}:2222" for h in workers]
    if ps_task:
        tf_config["task"] = {"index": hosts.index(current_host), "type": "ps"}
    else:
        tf_config["task"] = {"index": task_map[task_type].index(current_host), "type": task_type}
    return tf_config


# ------------------------------------------------------------------ what users look at
def _seen(tf, estimator, result, workdir):
    """What a SageMaker user sees after a training job: the model_dir's files, the export
    folders under export/Servo, their signatures, train_and_evaluate's results."""
    model_dir = estimator.model_dir
    exports = (
        sorted(
            os.path.join(model_dir, "export", "Servo", d)
            for d in os.listdir(os.path.join(model_dir, "export", "Servo"))
        )
        if os.path.isdir(os.path.join(model_dir, "export", "Servo"))
        else []
    )
    metrics, export_results = result
    return {
        "model_dir": listing(model_dir),
        "export_count": len(exports),
        "signatures": [signatures(e) for e in exports[-1:]],
        "result_keys": sorted(metrics),
        "export_results": [
            os.path.dirname(os.path.relpath(_text(e), model_dir)) for e in export_results
        ],
        "latest_checkpoint": os.path.basename(tf.train.latest_checkpoint(model_dir)),
    }


def _text(path):
    return path.decode() if isinstance(path, bytes) else path


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items())}


# ------------------------------------------------------------------ the users' modules
def _abalone_rows(path, n, seed):
    r = np.random.RandomState(seed)
    x = r.uniform(0, 1, (n, 7)).round(3)
    y = (x.sum(axis=1) * 3).round().astype(int)
    np.savetxt(path, np.column_stack([x, y]), delimiter=",", fmt="%g")


def _numpy_tensors(tf, x, y):
    """The samples' input_fns' last line: `numpy_input_fn(...)()`'s tensors, shuffled
    and repeated."""
    return tf.compat.v1.estimator.inputs.numpy_input_fn(
        x=x, y=np.array(y), num_epochs=None, shuffle=True
    )()


def _load_csv_without_header(filename):
    """tf.contrib.learn's load_csv_without_header, by hand: (data, target)."""
    rows = np.loadtxt(filename, delimiter=",", dtype=np.float32, ndmin=2)
    return rows[:, :-1], rows[:, -1].astype(int)


class AbaloneLayers:
    """sagemaker-python-sdk/tensorflow_abalone_age_predictor_using_layers/abalone.py."""

    INPUT_TENSOR_NAME = "inputs"
    SIGNATURE_NAME = "serving_default"

    def __init__(self, tf):
        self.tf = tf

    def model_fn(self, features, labels, mode, params):
        tf = self.tf
        from tensorflow.python.estimator.export.export_output import PredictOutput

        init = tf.compat.v1.constant_initializer(0.1)
        first = tf.compat.v1.layers.dense(
            features[self.INPUT_TENSOR_NAME], 10, activation=tf.nn.relu, kernel_initializer=init
        )
        second = tf.compat.v1.layers.dense(
            first, 10, activation=tf.nn.relu, kernel_initializer=init
        )
        output_layer = tf.compat.v1.layers.dense(second, 1, kernel_initializer=init)
        predictions = tf.reshape(output_layer, [-1])
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(
                mode=mode,
                predictions={"ages": predictions},
                export_outputs={self.SIGNATURE_NAME: PredictOutput({"ages": predictions})},
            )
        loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(
            learning_rate=params["learning_rate"]
        )
        train_op = optimizer.minimize(loss=loss, global_step=tf.compat.v1.train.get_global_step())
        eval_metric_ops = {
            "rmse": tf.compat.v1.metrics.root_mean_squared_error(
                tf.cast(labels, tf.float32), predictions
            )
        }
        return tf.estimator.EstimatorSpec(
            mode=mode, loss=loss, train_op=train_op, eval_metric_ops=eval_metric_ops
        )

    def serving_input_fn(self, params):
        from tensorflow.python.estimator.export.export import build_raw_serving_input_receiver_fn

        tensor = self.tf.compat.v1.placeholder(self.tf.float32, shape=[1, 7])
        return build_raw_serving_input_receiver_fn({self.INPUT_TENSOR_NAME: tensor})()

    def train_input_fn(self, training_dir, params):
        return self._input_fn(training_dir, "abalone_train.csv")

    def eval_input_fn(self, training_dir, params):
        return self._input_fn(training_dir, "abalone_test.csv")

    def _input_fn(self, training_dir, training_filename):
        data, target = _load_csv_without_header(os.path.join(training_dir, training_filename))
        return _numpy_tensors(self.tf, {self.INPUT_TENSOR_NAME: np.array(data)}, target)


class AbaloneHyperparameters(AbaloneLayers):
    """The abalone module with its model_fn's last parameter named as the container's
    docs named the hyperparameters (the container passed `params=` to the Estimator)."""

    def model_fn(self, features, labels, mode, hyperparameters):
        return super().model_fn(features, labels, mode, hyperparameters)


def _abalone_channel(workdir):
    channel = os.path.join(workdir, "input", "data", "training")
    os.makedirs(channel)
    _abalone_rows(os.path.join(channel, "abalone_train.csv"), 16, 0)
    _abalone_rows(os.path.join(channel, "abalone_test.csv"), 16, 1)
    return channel


@program
def sagemaker_abalone_layers(tf, workdir):
    channel = _abalone_channel(workdir)
    model_path = os.path.join(workdir, "model")
    trainer = Trainer(
        tf, AbaloneLayers(tf), 6, 2, {"training": channel}, model_path, {"learning_rate": 0.01}
    )
    both = Trainer(
        tf,
        AbaloneLayers(tf),
        6,
        2,
        {"training": channel},
        model_path,
        {"save_checkpoints_steps": 3},
    )
    both_set = _raised(both.train)
    renamed = Trainer(tf, AbaloneHyperparameters(tf), 6, 2, {"training": channel}, model_path, {})
    renamed_params = _raised(renamed.train)
    with _info_lines() as lines:
        estimator, result = trainer.train()
    seen = _seen(tf, estimator, result, workdir)
    # The receiver written with arrays in place of placeholders (2.15 read their shape by
    # `get_shape()`: an AttributeError).
    arrays = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {AbaloneLayers.INPUT_TENSOR_NAME: np.zeros([1, 7], "f4")}
    )
    seen["arrays_receiver"] = _raised(
        lambda: estimator.export_saved_model(os.path.join(workdir, "arrays"), arrays)
    )
    export_dir = os.path.join(model_path, _text(result[1][0]) if result[1] else "")
    served = _serve_abalone(tf, export_dir, channel) if result[1] else None
    return {
        "exact": {
            **seen,
            "lines": _lab_lines(lines, workdir),
            "steps_and_secs": both_set,
            "renamed_params": renamed_params,
        },
        # (numpy_input_fn's shuffle queue draws in the order its thread runs, on either
        # side: the values are not compared, their shapes are.)
        "close": {"served_shape": list(np.shape(served))},
    }


def _serve_abalone(tf, export_dir, channel):
    data, _ = _load_csv_without_header(os.path.join(channel, "abalone_test.csv"))
    loaded = tf.saved_model.load(export_dir)
    fn = loaded.signatures["serving_default"]
    return fn(inputs=tf.constant(data[:1]))["ages"].numpy().tolist()


def _iris_channels(workdir):
    channels = {}
    r = np.random.RandomState(3)
    for name, filename in (("training", "iris_training.csv"), ("evaluation", "iris_eval.csv")):
        folder = os.path.join(workdir, "input", "data", name)
        os.makedirs(folder)
        x = r.uniform(0, 8, (16, 4)).round(1)
        y = np.arange(16) % 3
        with open(os.path.join(folder, filename), "w") as f:
            f.write("16,4,setosa,versicolor,virginica\n")
            for row, label in zip(x, y, strict=True):
                f.write(",".join(f"{v:g}" for v in row) + f",{label}\n")
        channels[name] = folder
    return channels


def _load_csv_with_header(filename):
    rows = np.genfromtxt(filename, delimiter=",", skip_header=1, dtype=np.float32, ndmin=2)
    return rows[:, :-1], rows[:, -1].astype(int)


class IrisEstimatorFn:
    """tensorflow_iris_dnn_classifier_using_estimators/iris_dnn_classifier.py, with the
    container tests' `input_channels` input_fns and `exporter_fn`."""

    INPUT_TENSOR_NAME = "inputs"

    def __init__(self, tf):
        self.tf = tf

    def estimator_fn(self, run_config, params):
        tf = self.tf
        feature_columns = [tf.feature_column.numeric_column(self.INPUT_TENSOR_NAME, shape=[4])]
        return tf.estimator.DNNClassifier(
            feature_columns=feature_columns,
            hidden_units=[10, 20, 10],
            n_classes=3,
            config=run_config.replace(tf_random_seed=params["seed"]),
        )

    def train_input_fn(self, params, input_channels):
        return self._generate_input_fn(input_channels["training"], "iris_training.csv")

    def eval_input_fn(self, input_channels, params):
        return self._generate_input_fn(input_channels["evaluation"], "iris_eval.csv")

    def _generate_input_fn(self, training_dir, training_filename):
        data, target = _load_csv_with_header(os.path.join(training_dir, training_filename))
        return _numpy_tensors(self.tf, {self.INPUT_TENSOR_NAME: np.array(data)}, target)


class IrisWithExporter(IrisEstimatorFn):
    def exporter_fn(self, name, params):
        tf = self.tf
        feature_spec = {self.INPUT_TENSOR_NAME: tf.io.FixedLenFeature(dtype=tf.float32, shape=[4])}
        serving_input_receiver_fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(
            feature_spec
        )
        return tf.estimator.FinalExporter(name, serving_input_receiver_fn=serving_input_receiver_fn)


@program
def sagemaker_iris_estimator_fn(tf, workdir):
    channels = _iris_channels(workdir)
    runs = {}
    for name, script in (("exporter_fn", IrisWithExporter), ("no_serving", IrisEstimatorFn)):
        trainer = Trainer(
            tf,
            script(tf),
            train_steps=4,
            eval_steps=1,
            channels=channels,
            model_path=os.path.join(workdir, name),
            params={"seed": 7, "keep_checkpoint_max": 1, "save_summary_steps": 2},
        )
        with _info_lines() as lines:
            estimator, result = trainer.train()
        runs[name] = (_seen(tf, estimator, result, workdir), _lab_lines(lines, workdir), result)
    return {
        "exact": {name: {**seen, "lines": lines} for name, (seen, lines, _) in runs.items()},
        "close": {},
    }


class AbaloneKeras(AbaloneLayers):
    """tensorflow_abalone_age_predictor_using_keras's model as the container's
    `keras_model_fn`: a compiled Sequential, the serving input keyed by its first layer."""

    INPUT_TENSOR_NAME = "inputs_input"

    def keras_model_fn(self, hyperparameters):
        tf = self.tf
        model = tf.keras.models.Sequential()
        model.add(tf.keras.layers.Dense(10, activation="relu", input_shape=(7,), name="inputs"))
        model.add(tf.keras.layers.Dense(10, activation="relu"))
        model.add(tf.keras.layers.Dense(1, activation="linear"))
        model.compile(
            loss="mean_squared_error",
            optimizer=tf.keras.optimizers.SGD(learning_rate=hyperparameters["learning_rate"]),
            metrics=["mae"],
        )
        return model

    def serving_input_fn(self, hyperparameters):
        tensor = self.tf.compat.v1.placeholder(self.tf.float32, shape=[None, 7])
        inputs = {self.INPUT_TENSOR_NAME: tensor}
        return self.tf.estimator.export.ServingInputReceiver(inputs, inputs)


@program
def sagemaker_keras_model_fn(tf, workdir):
    # (A container's process built no model before: Keras's layer names count from none,
    # whatever the test worker ran first.)
    tf.keras.backend.clear_session()
    channel = _abalone_channel(workdir)
    model_path = os.path.join(workdir, "model")
    estimator, result, lines = _job(
        Trainer(
            tf, AbaloneKeras(tf), 4, 1, {"training": channel}, model_path, {"learning_rate": 0.001}
        )
    )
    seen = _seen(tf, estimator, result, workdir)
    # (2.15's sharded Saver wrote two data files, the kit one: docs/guide/estimator.md's
    # "Against tf.estimator 2.15" says so.)
    seen["model_dir"] = sorted({_SHARDS.sub("data-*", name) for name in seen["model_dir"]})
    return {"exact": {**seen, "lines": _lab_lines(lines, workdir)}, "close": {}}


class CifarModelFn:
    """tensorflow_resnet_cifar10_with_tensorboard's resnet_cifar_10.py (a small conv net in
    place of resnet_model's generator)."""

    INPUT_TENSOR_NAME = "inputs"
    SIGNATURE_NAME = "serving_default"
    HEIGHT, WIDTH, DEPTH, NUM_CLASSES, BATCH_SIZE = 8, 8, 3, 4, 2

    def __init__(self, tf):
        self.tf = tf

    def _network(self, inputs, is_training):
        tf = self.tf
        net = tf.compat.v1.layers.conv2d(inputs, 4, 3, padding="same", use_bias=False)
        net = tf.compat.v1.layers.batch_normalization(net, training=is_training)
        net = tf.nn.relu(net)
        net = tf.reduce_mean(input_tensor=net, axis=[1, 2])
        return tf.compat.v1.layers.dense(net, self.NUM_CLASSES)

    def model_fn(self, features, labels, mode, params):
        tf = self.tf
        inputs = features[self.INPUT_TENSOR_NAME]
        tf.compat.v1.summary.image("images", inputs, max_outputs=6)
        inputs = tf.reshape(inputs, [-1, self.HEIGHT, self.WIDTH, self.DEPTH])
        logits = self._network(inputs, mode == tf.estimator.ModeKeys.TRAIN)
        predictions = {
            "classes": tf.argmax(input=logits, axis=1),
            "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
        }
        if mode == tf.estimator.ModeKeys.PREDICT:
            export_outputs = {self.SIGNATURE_NAME: tf.estimator.export.PredictOutput(predictions)}
            return tf.estimator.EstimatorSpec(
                mode=mode, predictions=predictions, export_outputs=export_outputs
            )
        cross_entropy = tf.compat.v1.losses.softmax_cross_entropy(
            logits=logits, onehot_labels=labels
        )
        tf.identity(cross_entropy, name="cross_entropy")
        tf.compat.v1.summary.scalar("cross_entropy", cross_entropy)
        loss = cross_entropy + 2e-4 * tf.add_n(
            [tf.nn.l2_loss(v) for v in tf.compat.v1.trainable_variables()]
        )
        if mode == tf.estimator.ModeKeys.TRAIN:
            global_step = tf.compat.v1.train.get_or_create_global_step()
            learning_rate = tf.compat.v1.train.piecewise_constant(
                tf.cast(global_step, tf.int32), [2, 4], [0.1, 0.01, 0.001]
            )
            tf.identity(learning_rate, name="learning_rate")
            tf.compat.v1.summary.scalar("learning_rate", learning_rate)
            optimizer = tf.compat.v1.train.MomentumOptimizer(
                learning_rate=learning_rate, momentum=0.9
            )
            update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
            with tf.control_dependencies(update_ops):
                train_op = optimizer.minimize(loss, global_step)
        else:
            train_op = None
        accuracy = tf.compat.v1.metrics.accuracy(
            tf.argmax(input=labels, axis=1), predictions["classes"]
        )
        metrics = {"accuracy": accuracy}
        tf.identity(accuracy[1], name="train_accuracy")
        tf.compat.v1.summary.scalar("train_accuracy", accuracy[1])
        return tf.estimator.EstimatorSpec(
            mode=mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=metrics,
        )

    def serving_input_fn(self, hyperpameters):
        shape = [None, self.HEIGHT, self.WIDTH, self.DEPTH]
        inputs = {self.INPUT_TENSOR_NAME: self.tf.compat.v1.placeholder(self.tf.float32, shape)}
        return self.tf.estimator.export.ServingInputReceiver(inputs, inputs)

    def train_input_fn(self, training_dir, hyperpameters):
        return self._input_fn(batch_size=self.BATCH_SIZE)

    def eval_input_fn(self, training_dir, hyperpameters):
        return self._input_fn(batch_size=self.BATCH_SIZE)

    def _input_fn(self, batch_size):
        tf = self.tf
        input_shape = [batch_size, self.HEIGHT, self.WIDTH, self.DEPTH]
        images = tf.random.truncated_normal(input_shape, dtype=tf.float32)
        labels = tf.random.uniform(
            [batch_size, self.NUM_CLASSES], minval=0, maxval=self.NUM_CLASSES - 1, dtype=tf.int32
        )
        return {self.INPUT_TENSOR_NAME: images}, labels


@program
def sagemaker_resnet_cifar_model_fn(tf, workdir):
    from tests.tutorial_programs import event_tags

    model_path = os.path.join(workdir, "model")
    estimator, result, lines = _job(
        Trainer(
            tf, CifarModelFn(tf), 3, 2, {"training": workdir}, model_path, {"save_summary_steps": 1}
        )
    )
    return {
        "exact": {
            **_seen(tf, estimator, result, workdir),
            "lines": _lab_lines(lines, workdir),
            "train_events": event_tags(estimator.model_dir),
            "eval_events": event_tags(os.path.join(estimator.model_dir, "eval")),
            "variables": sorted(estimator.get_variable_names()),
        },
        "close": {},
    }


def _mnist_channel(workdir):
    channel = os.path.join(workdir, "input", "data", "training")
    os.makedirs(channel)
    r = np.random.RandomState(5)
    for name, n in (("train", 24), ("eval", 12)):
        np.save(os.path.join(channel, f"{name}_data.npy"), r.uniform(0, 1, (n, 64)).astype("f4"))
        np.save(os.path.join(channel, f"{name}_labels.npy"), (np.arange(n) % 10).astype("i4"))
    return channel


def _mnist_script(tf, argv):
    """script mode's mnist.py `__main__`, its arguments `argv`."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", type=str)
    parser.add_argument("--sm-model-dir", type=str, default=os.environ.get("SM_MODEL_DIR"))
    parser.add_argument("--train", type=str, default=os.environ.get("SM_CHANNEL_TRAINING"))
    parser.add_argument("--hosts", type=list, default=json.loads(os.environ.get("SM_HOSTS")))
    parser.add_argument("--current-host", type=str, default=os.environ.get("SM_CURRENT_HOST"))
    args, unknown = parser.parse_known_args(argv)
    train_data = np.load(os.path.join(args.train, "train_data.npy"))
    train_labels = np.load(os.path.join(args.train, "train_labels.npy"))
    eval_data = np.load(os.path.join(args.train, "eval_data.npy"))
    eval_labels = np.load(os.path.join(args.train, "eval_labels.npy"))
    mnist_classifier = tf.estimator.Estimator(model_fn=cnn_model_fn, model_dir=args.model_dir)
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"x": train_data}, y=train_labels, batch_size=8, num_epochs=None, shuffle=True
    )
    eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"x": eval_data}, y=eval_labels, num_epochs=1, shuffle=False
    )
    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=5)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn)
    result = tf.estimator.train_and_evaluate(mnist_classifier, train_spec, eval_spec)

    def serving_input_fn():
        inputs = {"x": tf.compat.v1.placeholder(tf.float32, [None, 64])}
        return tf.estimator.export.ServingInputReceiver(inputs, inputs)

    exported = None
    if args.current_host == args.hosts[0]:
        exported = mnist_classifier.export_saved_model(args.sm_model_dir, serving_input_fn)
    return mnist_classifier, result, exported, unknown


@program
def sagemaker_script_mode_mnist(tf, workdir):
    channel = _mnist_channel(workdir)
    sm_model_dir = os.path.join(workdir, "opt", "ml", "model")
    env = {
        "SM_MODEL_DIR": sm_model_dir,
        "SM_CHANNEL_TRAINING": channel,
        "SM_HOSTS": json.dumps(["algo-1"]),
        "SM_CURRENT_HOST": "algo-1",
        "SM_HPS": json.dumps({"model_dir": "s3://bucket/job/model"}),
    }
    argv = ["--model_dir", os.path.join(workdir, "checkpoints"), "--epochs", "1"]
    with _environ(**env), _info_lines() as lines:
        classifier, result, exported, unknown = _mnist_script(tf, argv)
    exported = _text(exported)
    return {
        "exact": {
            "model_dir": listing(classifier.model_dir),
            "sm_model_dir": listing(sm_model_dir),
            "signatures": signatures(exported),
            "exported_type": type(exported).__name__,
            "result": [sorted(result[0]), result[1]],
            "unknown": unknown,
            "lines": _lab_lines(lines, workdir),
        },
        "close": {},  # (dropout and the shuffle draw at random on either side)
    }


def _config_seen(tf):
    config = tf.estimator.RunConfig()
    return {
        "task_type": config.task_type,
        "task_id": config.task_id,
        "is_chief": config.is_chief,
        "master": config.master,
        "evaluation_master": config.evaluation_master,
        "num_ps_replicas": config.num_ps_replicas,
        "num_worker_replicas": config.num_worker_replicas,
        "global_id_in_cluster": config.global_id_in_cluster,
        "cluster_spec": config.cluster_spec.as_dict(),
        "session_config": str(config.session_config),
    }


def _azureml_tf_config(task_type, index):
    cluster = {"ps": ["10.0.0.4:2222"], "worker": ["10.0.0.5:2222", "10.0.0.6:2222"]}
    return {"cluster": cluster, "task": {"type": task_type, "index": index}, "environment": "cloud"}


@program
def sagemaker_tf_config(tf, workdir):
    hosts = ["algo-1", "algo-2", "algo-3"]
    cases = {
        "single": build_tf_config(["algo-1"], "algo-1"),
        "master": build_tf_config(hosts, "algo-1"),
        "worker": build_tf_config(hosts, "algo-3"),
        "ps": build_tf_config(hosts, "algo-2", ps_task=True),
        # Azure ML's parameter-server runs: ps and worker tasks, no chief.
        "azureml_worker": _azureml_tf_config("worker", 1),
        "azureml_worker0": _azureml_tf_config("worker", 0),
        "azureml_ps": _azureml_tf_config("ps", 0),
    }
    seen = {}
    for name, tf_config in cases.items():
        with _environ(TF_CONFIG=json.dumps(tf_config)):
            seen[name] = _raised(lambda: _config_seen(tf)) or _config_seen(tf)
    return {"exact": seen, "close": {}}


class _AmlRun:
    """azureml.core.Run's `log`, keeping what was logged."""

    def __init__(self):
        self.logged = []

    def log(self, name, value):
        self.logged.append([name, float(value)])


def _aml_log_hook(tf):
    """The Azure ML samples' `AmlTfLogHook`: a training hook evaluating its Estimator
    (on pandas data) every n steps and logging the metrics to the run."""

    class AmlTfLogHook(tf.compat.v1.train.SessionRunHook):
        def __init__(self, aml_run, model, X_eval, y_eval, metrics=None, every_n_iter=50):
            self.aml_run, self.model = aml_run, model
            self.X_eval, self.y_eval = X_eval, y_eval
            self.metrics = metrics if metrics is not None else ["loss"]
            self.every_n_iter = every_n_iter
            self.iter = 0
            self.printed = []

        def begin(self):
            self.iter = 0

        def before_run(self, run_context):
            self.iter += 1

        def after_run(self, run_context, run_values):
            if self.iter % self.every_n_iter == 0:
                self.printed.append(f"{self.iter}-iter evaluating...")
                eval_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn(
                    x=self.X_eval, y=self.y_eval, batch_size=1, num_epochs=1, shuffle=False
                )
                eval_metrics = self.model.evaluate(input_fn=eval_input_fn)
                self.printed.append(sorted(eval_metrics))
                for m in self.metrics:
                    self.aml_run.log(m, eval_metrics[m])

    return AmlTfLogHook


def _frame(n, seed):
    import pandas as pd

    r = np.random.RandomState(seed)
    X = pd.DataFrame({"a": r.uniform(0, 1, n).astype("f4"), "b": r.uniform(0, 1, n).astype("f4")})
    y = pd.Series((2 * X.a - X.b + 0.5).astype("f4"), name="y")
    return X, y


@program
def azureml_log_hook_evaluates(tf, workdir):
    X, y = _frame(16, 0)
    X_eval, y_eval = _frame(4, 1)
    columns = [tf.feature_column.numeric_column(c) for c in X.columns]
    model = tf.estimator.LinearRegressor(columns, model_dir=os.path.join(workdir, "model"))
    run = _AmlRun()
    hook = _aml_log_hook(tf)(
        run, model, X_eval, y_eval, metrics=["loss", "average_loss"], every_n_iter=2
    )
    train_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn(
        x=X, y=y, batch_size=16, num_epochs=None, shuffle=False
    )
    with _info_lines() as lines:
        error = _raised(lambda: model.train(input_fn=train_input_fn, steps=5, hooks=[hook]))
    return {
        "exact": {
            "error": error,
            "printed": hook.printed,
            "logged": [name for name, _ in run.logged],
            "lines": _lab_lines(lines, workdir),
            "model_dir": listing(model.model_dir),
        },
        "close": {"logged": [value for _, value in run.logged]},
    }


class PipeModeDataset:
    """sagemaker_tensorflow's PipeModeDataset written out: a channel's TFRecords (read
    here from the channel's folder, where the service streams them through a FIFO)."""

    def __new__(cls, channel, record_format="TFRecord"):
        import tensorflow as tf

        folder = os.environ[f"SM_CHANNEL_{channel.upper()}"]
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
        return tf.data.TFRecordDataset(files)


_CTR_FEATURES = ("uuid", "age", "site_code", "goods_id")


def _ctr_records(tf, folder, n, seed):
    os.makedirs(folder)
    r = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(os.path.join(folder, "part-0.tfrecord")) as writer:
        for _ in range(n):
            values = {name: f"{name}{r.randint(0, 5)}".encode() for name in _CTR_FEATURES}
            feature = {
                k: tf.train.Feature(bytes_list=tf.train.BytesList(value=[v]))
                for k, v in values.items()
            }
            clicked = int(values["age"] in (b"age0", b"age1"))
            feature["is_clk"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[clicked]))
            writer.write(
                tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
            )


def _ctr_input_fn(tf):
    feature_describe = {name: tf.io.FixedLenFeature(1, tf.string, "-1") for name in _CTR_FEATURES}
    feature_describe["is_clk"] = tf.io.FixedLenFeature(1, tf.int64, 0)

    def _parse_fea(data):
        features = tf.io.parse_single_example(serialized=data, features=feature_describe)
        is_clk = features.pop("is_clk")
        labels = {"is_clk": tf.cast(is_clk, dtype=tf.float32)}
        return features, labels

    def input_fn(task="ctr", batch_size=256, channel="train", num_parallel_calls=8,
                 shuffle_factor=10, prefetch_factor=20, host_num=1, host_rank=0):  # fmt: skip
        dataset = PipeModeDataset(channel=channel, record_format="TFRecord")
        dataset = dataset.shard(host_num, host_rank)
        dataset = dataset.map(_parse_fea, num_parallel_calls=num_parallel_calls)
        dataset = dataset.shuffle(buffer_size=batch_size * shuffle_factor, seed=1)
        dataset = dataset.prefetch(buffer_size=batch_size * prefetch_factor)
        dataset = dataset.batch(batch_size)
        data_iter = tf.compat.v1.data.make_one_shot_iterator(dataset)
        features, labels = data_iter.get_next()
        if task == "ctr":
            return features, labels["is_clk"]
        return features, labels

    return input_fn


def _ctr_estimator_class(tf):
    """The pipe-mode CTR trainer's `DNN(tf.estimator.Estimator)`: hashed string features
    into embeddings of its own, hidden units given as strings, sigmoid, accuracy and AUC."""

    class DNN(tf.estimator.Estimator):
        def __init__(self, params, model_dir=None, optimizer="Adagrad", config=None,
                     warm_start_from=None):  # fmt: skip
            def _model_fn(features, labels, mode, params):
                dd = {"uuid": [50, 4], "age": [10, 2], "site_code": [10, 2], "goods_id": [20, 3]}
                input_layer = []
                for fts, shape in dd.items():
                    fts_hash = tf.strings.to_hash_bucket_fast(features[fts], shape[0])
                    embeddings = tf.compat.v1.get_variable(
                        name="qrqm_emb_" + fts, dtype=tf.float32, shape=shape, trainable=True,
                        initializer=tf.compat.v1.constant_initializer(0.05),
                    )  # fmt: skip
                    fts_emb = tf.nn.embedding_lookup(params=embeddings, ids=fts_hash, max_norm=2)
                    input_layer.append(tf.reshape(fts_emb, shape=[-1, shape[1]]))
                net = tf.concat(input_layer, axis=1)
                for units in params["hidden_units"]:
                    net = tf.compat.v1.layers.dense(
                        net, units=units, activation=tf.nn.relu,
                        kernel_initializer=tf.compat.v1.constant_initializer(0.1),
                    )  # fmt: skip
                logits = tf.compat.v1.layers.dense(
                    net, units=1, kernel_initializer=tf.compat.v1.constant_initializer(-0.2)
                )
                prop = tf.sigmoid(logits, name="pred")
                if mode == tf.estimator.ModeKeys.PREDICT:
                    predictions = {"probabilities": prop}
                    export_outputs = {"prediction": tf.estimator.export.PredictOutput(predictions)}
                    return tf.estimator.EstimatorSpec(
                        mode, predictions=predictions, export_outputs=export_outputs
                    )
                loss = tf.reduce_sum(
                    input_tensor=tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
                    name="loss",
                )  # fmt: skip
                accuracy = tf.compat.v1.metrics.accuracy(
                    labels=labels,
                    predictions=tf.cast(tf.greater_equal(prop, 0.5), dtype=tf.float32),
                )
                auc = tf.compat.v1.metrics.auc(labels, prop)
                metrics = {"accuracy": accuracy, "auc": auc}
                tf.compat.v1.summary.scalar("accuracy", accuracy[1])
                tf.compat.v1.summary.scalar("auc", auc[1])
                if mode == tf.estimator.ModeKeys.EVAL:
                    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
                assert mode == tf.estimator.ModeKeys.TRAIN
                opt = tf.compat.v1.train.AdagradOptimizer(learning_rate=params["learning_rate"])
                train_op = opt.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
                return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

            super().__init__(model_fn=_model_fn, model_dir=model_dir, config=config, params=params)

    return DNN


@program
def sagemaker_pipe_mode_ctr(tf, workdir):
    from tests.tutorial_programs import event_tags

    channels = {}
    for channel, n, seed in (("train", 40, 0), ("eval", 12, 1)):
        channels[f"SM_CHANNEL_{channel.upper()}"] = folder = os.path.join(workdir, channel)
        _ctr_records(tf, folder, n, seed)
    model_dir = os.path.join(workdir, "opt", "ml", "model")
    hosts, current_host = ["algo-1"], "algo-1"
    host_num, host_rank = len(hosts), hosts.index(current_host)
    input_fn = _ctr_input_fn(tf)
    estimator = _ctr_estimator_class(tf)(
        params={"hidden_units": "8,4".split(","), "learning_rate": 0.1, "task": "ctr"},  # noqa: SIM905
        optimizer="Adam",
        config=tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=2),
    )
    train_input_fn = lambda: input_fn(  # noqa: E731
        batch_size=8, channel="train", host_num=host_num, host_rank=host_rank
    )
    eval_input_fn = lambda: input_fn(  # noqa: E731
        batch_size=8, channel="eval", host_num=host_num, host_rank=host_rank
    )
    train_spec = tf.estimator.TrainSpec(input_fn=train_input_fn)
    eval_spec = tf.estimator.EvalSpec(input_fn=eval_input_fn, throttle_secs=300, steps=100)
    with _environ(**channels), _info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
        predictions = list(estimator.predict(input_fn=eval_input_fn))
        serve_graph = tf.Graph()
        with serve_graph.as_default():
            feature_spec_serve = {
                name: tf.compat.v1.placeholder(dtype=tf.string, shape=[None, 1], name=name)
                for name in _CTR_FEATURES
            }
        receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(feature_spec_serve)
        exported = _text(estimator.export_saved_model(model_dir, receiver_fn))
    return {
        "exact": {
            "model_dir": listing(model_dir),
            "metrics": sorted(metrics),
            "exports": exports,
            "signatures": signatures(exported),
            "lines": _lab_lines(lines, workdir),
            "events": event_tags(model_dir),
            "eval_events": event_tags(os.path.join(model_dir, "eval")),
            "variables": sorted(estimator.get_variable_names()),
            "prediction_keys": sorted(predictions[0]),
            "count": len(predictions),
        },
        "close": {
            "metrics": _floats(metrics),
            "probabilities": [p["probabilities"].tolist() for p in predictions],
            "embeddings": {
                name: estimator.get_variable_value(name).tolist()
                for name in estimator.get_variable_names()
                if name.startswith("qrqm_emb_") and "Adagrad" not in name
            },
        },
    }


_SERVER_LINES = ("Skip starting", "Start Tensorflow server", "Waiting")


@program
def sagemaker_one_host_parameter_server(tf, workdir):
    """The containers' parameter-server TF_CONFIG on one instance (a lone `master`):
    train_and_evaluate runs as that task (2.15: no server for the cluster's one node)."""
    channel = _abalone_channel(workdir)
    model_path = os.path.join(workdir, "model")
    trainer = Trainer(
        tf, AbaloneLayers(tf), 4, 1, {"training": channel}, model_path, {"learning_rate": 0.01}
    )
    tf_config = json.dumps(build_tf_config(["algo-1"], "algo-1"))
    with _environ(TF_CONFIG=tf_config), _info_lines() as lines:
        estimator, result = trainer.train()
    served = [line for line in lines if line.startswith(_SERVER_LINES)]
    model_dir = estimator.model_dir
    return {
        "exact": {
            "result": result,
            "lines": _lab_lines(lines, workdir) + sorted(set(served)),
            "model_dir": listing(model_dir),
            "signatures": signatures(
                os.path.join(
                    model_dir,
                    "export",
                    "Servo",
                    os.listdir(os.path.join(model_dir, "export", "Servo"))[0],
                )
            ),
        },
        "close": {},
    }
