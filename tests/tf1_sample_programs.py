"""Programs in the shape of well-known TF1-era custom-Estimator samples, after `tf_upgrade_v2`.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what the sample's user sees, in three parts that `tests/test_tf1_samples.py`
compares with 2.15's recording (`tests/tf215/record_family.py tf1_sample_programs`, into
`tests/data/tf215/tf1_samples.json`):

- `exact`: keys, dtypes, shapes, listings, event tags, log lines' shapes, variable
  names, attributes, errors: equal;
- `close`: values of deterministic models (zero-initialised, unshuffled): 1e-4;
- `loose`: values of seeded random models (initial weights, dropout, shuffles): within
  35%.

The samples: the layers tutorial's `cnn_mnist.py`, tensorflow/models'
`samples/core/get_started/custom_estimator.py` (iris), the Estimator object's API as
such samples use it, and TF1 training idioms they share (a decayed learning rate,
`tf.compat.v1.metrics`, pandas inputs, the spec's hook lists, a placeholder receiver).
"""

import json
import os
import re

import numpy as np
import pandas as pd

from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tutorial_programs import event_tags, listing, signatures, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "tf1_samples.json")
SEED = 42
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")


def _floats(values):
    return {k: float(v) for k, v in sorted(values.items())}


def _messages(lines, prefix):
    """The logged messages starting with `prefix`, each once (TensorFlow's logger and the
    root logger may both pass one on)."""
    kept = [line for line in lines if line.startswith(prefix)]
    return [line for i, line in enumerate(kept) if i == 0 or kept[i - 1] != line]


def _shape_of_message(message):
    """A LoggingTensorHook message as [its keys, how many numbers each shows, whether it
    ends with the time since the last one]."""
    body, timed = message, message.endswith(" sec)")
    if timed:
        body = body[: body.rindex(" (")]
    parts = re.split(r"(?:^|, )(\w+) = ", body)[1:]
    return [
        [key, len(_NUMBER.findall(value))]
        for key, value in zip(parts[::2], parts[1::2], strict=True)
    ] + [timed]


def _loss_steps(lines):
    """The steps of the Estimator's `loss = ..., step = N` lines."""
    steps = re.compile(r"^loss = .*, step = (\d+)")
    return [int(m.group(1)) for m in map(steps.match, _messages(lines, "loss = ")) if m]


# ------------------------------------------------------------------ cnn_mnist.py
def _digits(n, seed):
    """8x8 'digits': class k lights row k % 8 (column k // 8 for k >= 8), plus noise."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n).astype(np.int32)
    images = rng.uniform(0, 0.3, size=(n, 8, 8)).astype(np.float32)
    for i, label in enumerate(labels):
        if label < 8:
            images[i, label, :] = 1.0
        else:
            images[i, :, label - 8] = 1.0
    return images.reshape(n, 64), labels


def cnn_model_fn(features, labels, mode):
    """The layers tutorial's model, shrunk to 8x8 images (tf_upgrade_v2's spelling)."""
    import tensorflow as tf

    input_layer = tf.reshape(features["x"], [-1, 8, 8, 1])
    conv1 = tf.compat.v1.layers.conv2d(
        inputs=input_layer, filters=4, kernel_size=[3, 3], padding="same", activation=tf.nn.relu
    )
    pool1 = tf.compat.v1.layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)
    conv2 = tf.compat.v1.layers.conv2d(
        inputs=pool1, filters=8, kernel_size=[3, 3], padding="same", activation=tf.nn.relu
    )
    pool2 = tf.compat.v1.layers.max_pooling2d(inputs=conv2, pool_size=[2, 2], strides=2)
    pool2_flat = tf.reshape(pool2, [-1, 2 * 2 * 8])
    dense = tf.compat.v1.layers.dense(inputs=pool2_flat, units=32, activation=tf.nn.relu)
    dropout = tf.compat.v1.layers.dropout(
        inputs=dense, rate=0.4, training=mode == tf.estimator.ModeKeys.TRAIN
    )
    logits = tf.compat.v1.layers.dense(inputs=dropout, units=10)
    predictions = {
        "classes": tf.argmax(input=logits, axis=1),
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        # (The tutorial: 0.001 over 20,000 steps; here 300 steps.)
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.1)
        train_op = optimizer.minimize(loss=loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    eval_metric_ops = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=predictions["classes"])
    }
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)


def cnn_mnist(tf, workdir):
    """main() of cnn_mnist.py: train with a LoggingTensorHook on the softmax, evaluate
    one epoch of numpy input, predict."""
    train_data, train_labels = _digits(400, 0)
    eval_data, eval_labels = _digits(150, 1)
    model_dir = os.path.join(workdir, "mnist_convnet_model")
    mnist_classifier = tf.estimator.Estimator(
        model_fn=cnn_model_fn,
        model_dir=model_dir,
        config=tf.estimator.RunConfig(tf_random_seed=SEED, log_step_count_steps=50),
    )
    tensors_to_log = {"probabilities": "softmax_tensor"}
    logging_hook = tf.compat.v1.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=50)
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"x": train_data}, y=train_labels, batch_size=100, num_epochs=None, shuffle=True
    )
    with _info_lines() as lines:
        mnist_classifier.train(input_fn=train_input_fn, steps=300, hooks=[logging_hook])
    eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"x": eval_data}, y=eval_labels, num_epochs=1, shuffle=False
    )
    eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)
    rows = list(
        mnist_classifier.predict(
            tf.compat.v1.estimator.inputs.numpy_input_fn(
                x={"x": eval_data[:5]}, num_epochs=1, shuffle=False
            )
        )
    )
    logged = _messages(lines, "probabilities = ")
    return {
        "exact": {
            "eval_keys": list(eval_results),
            "eval_types": sorted({type(v).__name__ for v in eval_results.values()}),
            "global_step": int(eval_results["global_step"]),
            "predictions": structure(rows),
            "logged": [_shape_of_message(message) for message in logged],
            "loss_steps": _loss_steps(lines),
            "files": listing(model_dir),
            "train_tags": sorted(event_tags(model_dir)),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "variables": mnist_classifier.get_variable_names(),
        },
        "loose": _floats({k: v for k, v in eval_results.items() if k != "global_step"}),
    }


# ------------------------------------------------------- get_started/custom_estimator.py
CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]


def _iris_frames(n, seed):
    """(train_x, train_y) as iris_data.load_data() returns them: a DataFrame, a Series."""
    rng = np.random.RandomState(seed)
    species = rng.randint(0, 3, size=n)
    frame = pd.DataFrame(
        {
            key: (rng.normal(size=n) * 0.4 + species * (i + 1) * 0.5 + 1.0).astype(np.float32)
            for i, key in enumerate(CSV_COLUMN_NAMES[:-1])
        }
    )
    return frame, pd.Series(species.astype(np.int64), name="Species")


def train_input_fn(features, labels, batch_size):
    import tensorflow as tf

    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    return dataset.shuffle(1000, seed=SEED).repeat().batch(batch_size)


def eval_input_fn(features, labels, batch_size):
    import tensorflow as tf

    features = dict(features)
    inputs = features if labels is None else (features, labels)
    return tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size)


def my_model(features, labels, mode, params):
    """custom_estimator.py's DNN, its accuracy summary, its three modes."""
    import tensorflow as tf

    net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
    for units in params["hidden_units"]:
        net = tf.compat.v1.layers.dense(net, units=units, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(net, params["n_classes"], activation=None)
    predicted_classes = tf.argmax(input=logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {
            "class_ids": predicted_classes[:, tf.newaxis],
            "probabilities": tf.nn.softmax(logits),
            "logits": logits,
        }
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    accuracy = tf.compat.v1.metrics.accuracy(
        labels=labels, predictions=predicted_classes, name="acc_op"
    )
    metrics = {"accuracy": accuracy}
    tf.compat.v1.summary.scalar("accuracy", accuracy[1])
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    assert mode == tf.estimator.ModeKeys.TRAIN
    optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _iris_classifier(tf, model_dir, **config):
    my_feature_columns = [tf.feature_column.numeric_column(key=k) for k in CSV_COLUMN_NAMES[:-1]]
    return tf.estimator.Estimator(
        model_fn=my_model,
        model_dir=model_dir,
        params={"feature_columns": my_feature_columns, "hidden_units": [10, 10], "n_classes": 3},
        config=tf.estimator.RunConfig(tf_random_seed=SEED, **config),
    )


def custom_estimator(tf, workdir):
    """main() of custom_estimator.py: train, evaluate (also under a name), predict and
    print each prediction as the sample's template does."""
    (train_x, train_y), (test_x, test_y) = _iris_frames(120, 0), _iris_frames(30, 1)
    model_dir = os.path.join(workdir, "iris")
    classifier = _iris_classifier(tf, model_dir, save_summary_steps=20)
    classifier.train(input_fn=lambda: train_input_fn(train_x, train_y, 100), steps=100)
    eval_result = classifier.evaluate(input_fn=lambda: eval_input_fn(test_x, test_y, 100))
    named = classifier.evaluate(input_fn=lambda: eval_input_fn(test_x, test_y, 10), name="test")
    expected = ["Setosa", "Versicolor", "Virginica"]
    predict_x = {
        "SepalLength": [5.1, 5.9, 6.9],
        "SepalWidth": [3.3, 3.0, 3.1],
        "PetalLength": [1.7, 4.2, 5.4],
        "PetalWidth": [0.5, 1.5, 2.1],
    }
    predictions = classifier.predict(input_fn=lambda: eval_input_fn(predict_x, None, 100))
    template = 'Prediction is "{}" ({:.1f}%), expected "{}"'
    printed, rows = [], []
    for pred_dict, expec in zip(predictions, expected, strict=True):
        class_id = pred_dict["class_ids"][0]
        probability = pred_dict["probabilities"][class_id]
        printed.append(template.format(SPECIES[class_id], 100 * probability, expec))
        rows.append(pred_dict)
    return {
        "exact": {
            "accuracy_line": _NUMBER.sub(
                "N", "Test set accuracy: {accuracy:0.3f}".format(**eval_result)
            ),
            "eval_keys": list(eval_result),
            "named_keys": sorted(named),
            "global_step": int(named["global_step"]),
            "printed": [_NUMBER.sub("N", line.split('"')[2]) for line in printed],
            "class_id_type": type(rows[0]["class_ids"][0]).__name__,
            "predictions": structure(rows),
            "files": listing(model_dir),
            "train_tags": sorted(event_tags(model_dir)),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "test_tags": event_tags(os.path.join(model_dir, "eval_test")),
            "params": sorted(classifier.params),
            "variables": classifier.get_variable_names(),
        },
        "loose": {
            **_floats({f"eval/{k}": v for k, v in eval_result.items() if k != "global_step"}),
            **_floats({f"test/{k}": v for k, v in named.items() if k != "global_step"}),
        },
    }


# ------------------------------------------------------------ the Estimator object's API
def _attributes(obj):
    """{public name of dir(obj): "ok" or the error its lookup raises}."""
    outcome = {}
    for name in sorted(dir(obj)):
        if name.startswith("_"):
            continue
        try:
            getattr(obj, name)
            outcome[name] = "ok"
        except Exception as error:  # the attribute's lookup is what is recorded
            outcome[name] = f"{type(error).__name__}: {error}"
    return outcome


def _class_matrix(tf, objects):
    """{object: [the classes of tf.estimator / tf.compat.v1.estimator it is an instance of]}."""
    classes = {
        "tf.estimator.Estimator": tf.estimator.Estimator,
        "tf.compat.v1.estimator.Estimator": tf.compat.v1.estimator.Estimator,
        "tf.estimator.DNNClassifier": tf.estimator.DNNClassifier,
        "tf.compat.v1.estimator.DNNClassifier": tf.compat.v1.estimator.DNNClassifier,
    }
    return {
        name: sorted(c for c, cls in classes.items() if isinstance(obj, cls))
        for name, obj in objects.items()
    }


def estimator_objects(tf, workdir):
    """The attributes an Estimator's user reaches for (export_savedmodel among them) on
    both Estimator classes and both DNNClassifiers, and which classes each is."""
    columns = [tf.feature_column.numeric_column("x")]
    objects = {
        "tf.estimator.Estimator": tf.estimator.Estimator(my_model, os.path.join(workdir, "a")),
        "tf.compat.v1.estimator.Estimator": tf.compat.v1.estimator.Estimator(
            my_model, os.path.join(workdir, "b")
        ),
        "tf.estimator.DNNClassifier": tf.estimator.DNNClassifier([2], columns),
        "tf.compat.v1.estimator.DNNClassifier": tf.compat.v1.estimator.DNNClassifier([2], columns),
        "tf.estimator.LinearRegressor": tf.estimator.LinearRegressor(columns),
    }
    config = tf.estimator.RunConfig()
    return {
        "exact": {
            "attributes": {name: _attributes(obj) for name, obj in objects.items()},
            "run_config": _attributes(config),
            "run_config_defaults": _settings(config),
            "hooks": _hook_classes(tf),
            "eval_dirs": [
                os.path.relpath(objects["tf.estimator.Estimator"].eval_dir(name), workdir)
                for name in (None, "validation")
            ],
            "service": [_service_of(tf, {"name": "trainer"}), _service_of(tf, "trainer")],
            "classes": _class_matrix(tf, objects),
        }
    }


HOOK_NAMES = [
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "NanTensorHook",
    "ProfilerHook",
    "SecondOrStepTimer",
    "SessionRunArgs",
    "SessionRunHook",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
]


def _hook_classes(tf):
    """{name: [tf.estimator's is tf.compat.v1.train's, it subclasses SessionRunHook]}."""
    hook = tf.compat.v1.train.SessionRunHook
    return {
        name: [
            getattr(tf.estimator, name) is getattr(tf.compat.v1.train, name),
            issubclass(getattr(tf.estimator, name), hook),
        ]
        for name in HOOK_NAMES
    }


def _settings(config):
    """A RunConfig's public values, as JSON (objects by their type's name)."""
    values = {}
    for name in sorted(dir(config)):
        value = None if name.startswith("_") else getattr(config, name)
        if name.startswith("_") or callable(value):
            continue
        simple = value is None or isinstance(value, (bool, int, float, str))
        values[name] = value if simple else type(value).__name__
    return values


def _service_of(tf, service):
    """RunConfig().service under a TF_CONFIG holding `service` (or the error's type)."""
    before = os.environ.get("TF_CONFIG")
    os.environ["TF_CONFIG"] = json.dumps({"service": service})
    try:
        return tf.estimator.RunConfig().service
    except Exception as error:  # the type is the record
        return type(error).__name__
    finally:
        if before is None:
            del os.environ["TF_CONFIG"]
        else:
            os.environ["TF_CONFIG"] = before


def _batch_shapes(batches):
    return [
        {k: [np.asarray(v).dtype.name, list(np.shape(v))] for k, v in sorted(b.items())}
        for b in batches
    ]


def estimator_api(tf, workdir):
    """What samples call on a trained Estimator: its model_dir, config and params, its
    variables, its latest checkpoint, evaluate(steps, name), predict's options, both
    export spellings of the V1 class."""
    train_x, train_y = _iris_frames(60, 2)
    model_dir = os.path.join(workdir, "model")
    classifier = _iris_classifier(tf, model_dir, save_checkpoints_steps=15, keep_checkpoint_max=2)
    returned = classifier.train(input_fn=lambda: train_input_fn(train_x, train_y, 20), steps=40)
    predictions = classifier.predict(lambda: eval_input_fn(train_x[:2], None, 4))
    metrics = classifier.evaluate(
        input_fn=lambda: train_input_fn(train_x, train_y, 20), steps=2, name="validation"
    )
    batches = list(
        classifier.predict(
            lambda: eval_input_fn(train_x[:7], None, 4),
            predict_keys=["probabilities", "class_ids"],
            yield_single_examples=False,
        )
    )
    one_key = list(classifier.predict(lambda: eval_input_fn(train_x[:3], None, 4), "logits"))
    kernel = classifier.get_variable_value("dense/kernel")
    step = classifier.get_variable_value("global_step")
    config = classifier.config
    return {
        "exact": {
            "train_returns_the_estimator": returned is classifier,
            "predict_returns": type(predictions).__name__,
            "model_dir": os.path.relpath(classifier.model_dir, workdir),
            "config": {
                "type": type(config).__name__,
                "model_dir": os.path.relpath(config.model_dir, workdir),
                "tf_random_seed": config.tf_random_seed,
                "save_checkpoints_steps": config.save_checkpoints_steps,
                "save_checkpoints_secs": config.save_checkpoints_secs,
                "save_summary_steps": config.save_summary_steps,
                "keep_checkpoint_max": config.keep_checkpoint_max,
                "log_step_count_steps": config.log_step_count_steps,
                "is_chief": config.is_chief,
                "task_type": config.task_type,
                "num_worker_replicas": config.num_worker_replicas,
            },
            "params": {k: v for k, v in classifier.params.items() if k != "feature_columns"},
            "variables": classifier.get_variable_names(),
            "kernel": [type(kernel).__name__, kernel.dtype.name, list(kernel.shape)],
            "global_step": [type(step).__name__, int(step)],
            "latest": os.path.relpath(classifier.latest_checkpoint(), workdir),
            "checkpoint_files": sorted(
                f for f in os.listdir(model_dir) if f.startswith("model.ckpt-")
            ),
            "metrics": list(metrics),
            "metric_step": int(metrics["global_step"]),
            "eval_dirs": sorted(d for d in os.listdir(model_dir) if d.startswith("eval")),
            "batches": _batch_shapes(batches),
            "one_key": _batch_shapes(one_key),
            **_exports(tf, workdir, model_dir, classifier.params),
        }
    }


def _exports(tf, workdir, model_dir, params):
    """The V1 class's export_savedmodel beside export_saved_model: what each returns."""
    v1_classifier = tf.compat.v1.estimator.Estimator(my_model, model_dir=model_dir, params=params)
    feature_spec = {k: tf.io.FixedLenFeature([1], tf.float32) for k in CSV_COLUMN_NAMES[:-1]}
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(feature_spec)
    old = v1_classifier.export_savedmodel(os.path.join(workdir, "old"), receiver)
    new = v1_classifier.export_saved_model(os.path.join(workdir, "new"), receiver)
    return {
        "export_types": [type(old).__name__, type(new).__name__],
        "export_signatures": signatures(new.decode() if isinstance(new, bytes) else new),
        "same_listing": listing(os.path.join(workdir, "old"))
        == listing(os.path.join(workdir, "new")),
    }


# ----------------------------------------------------------- TF1 training idioms
def _houses(n, seed):
    rng = np.random.RandomState(seed)
    frame = pd.DataFrame(
        {
            "rooms": rng.randint(1, 6, size=n).astype(np.float32),
            "area": rng.uniform(0.5, 2.0, size=n).astype(np.float32),
        }
    )
    price = 0.6 * frame["rooms"] + 1.5 * frame["area"] - 2.0
    return frame, (price > 0.8).astype(np.int64).rename("expensive")


class CountingHook:
    """A prediction hook: counts the runs it saw (made a SessionRunHook on first use)."""

    @staticmethod
    def make(tf, seen, name):
        class Counter(tf.compat.v1.train.SessionRunHook):
            def begin(self):
                seen.setdefault(name, [])

            def after_run(self, run_context, run_values):
                seen[name].append("run")

        return Counter()


def idioms_model_fn(seen):
    """A zero-initialised logistic model: a staircase-decayed learning rate and its
    summary, Momentum, six TF1 metrics, each of the spec's hook lists."""
    import tensorflow as tf

    def model_fn(features, labels, mode, params):
        inputs = tf.stack([features["rooms"], features["area"]], axis=1)
        logits = tf.compat.v1.layers.dense(
            inputs, 1, kernel_initializer=tf.compat.v1.zeros_initializer(), name="logit"
        )
        probability = tf.sigmoid(logits, name="probability")
        predictions = {"probability": probability, "label": tf.cast(probability > 0.5, tf.int64)}
        if mode == tf.estimator.ModeKeys.PREDICT:
            hooks = [CountingHook.make(tf, seen, "prediction_hooks")]
            return tf.estimator.EstimatorSpec(mode, predictions=predictions, prediction_hooks=hooks)
        labels = tf.cast(tf.reshape(labels, [-1, 1]), tf.float32)
        loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
        global_step = tf.compat.v1.train.get_or_create_global_step()
        learning_rate = tf.compat.v1.train.exponential_decay(
            params["learning_rate"], global_step, decay_steps=5, decay_rate=0.5, staircase=True
        )
        tf.compat.v1.summary.scalar("learning_rate", learning_rate)
        optimizer = tf.compat.v1.train.MomentumOptimizer(learning_rate, momentum=0.9)
        train_op = optimizer.minimize(loss, global_step=global_step)
        eval_metric_ops = {
            "accuracy": tf.compat.v1.metrics.accuracy(labels, predictions["label"]),
            "mean_probability": tf.compat.v1.metrics.mean(probability),
            "precision": tf.compat.v1.metrics.precision(labels, predictions["label"]),
            "recall": tf.compat.v1.metrics.recall(labels, predictions["label"]),
            "rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, probability),
            "mae": tf.compat.v1.metrics.mean_absolute_error(labels, probability),
        }
        logged = tf.compat.v1.train.LoggingTensorHook({"eval_loss": loss}, every_n_iter=1)
        return tf.estimator.EstimatorSpec(
            mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            training_chief_hooks=[tf.compat.v1.train.StepCounterHook(every_n_steps=4)],
            evaluation_hooks=[logged],
        )

    return model_fn


def _placeholder_receiver():
    """A serving_input_receiver_fn as samples wrote it: a placeholder per feature."""
    import tensorflow as tf

    rooms = tf.compat.v1.placeholder(tf.float32, [None], name="rooms")
    area = tf.compat.v1.placeholder(tf.float32, [None], name="area")
    features = {"rooms": rooms, "area": area}
    return tf.estimator.export.ServingInputReceiver(features, features)


def tf1_idioms(tf, workdir):
    """pandas_input_fn in three modes, a decayed learning rate, TF1 metrics, the spec's
    hook lists, a placeholder receiver exported with export_savedmodel (V1)."""
    frame, labels = _houses(48, 3)
    inputs = tf.compat.v1.estimator.inputs
    seen = {}
    model_dir = os.path.join(workdir, "model")
    model = tf.compat.v1.estimator.Estimator(
        idioms_model_fn(seen),
        model_dir=model_dir,
        params={"learning_rate": 0.2},
        config=tf.compat.v1.estimator.RunConfig(save_summary_steps=2),
    )
    train = inputs.pandas_input_fn(frame, labels, batch_size=8, num_epochs=None, shuffle=False)
    model.train(train, steps=12)
    with _info_lines() as lines:
        result = model.evaluate(
            inputs.pandas_input_fn(frame, labels, batch_size=16, num_epochs=1, shuffle=False)
        )
    rows = list(model.predict(inputs.pandas_input_fn(frame[:5], batch_size=2, shuffle=False)))
    export_dir = model.export_savedmodel(os.path.join(workdir, "export"), _placeholder_receiver)
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
    rates = sorted({round(v, 6) for v in _scalar_values(tf, model_dir, "learning_rate")})
    return {
        "exact": {
            "eval_keys": list(result),
            "global_step": int(result["global_step"]),
            "eval_logged": [_shape_of_message(m) for m in _messages(lines, "eval_loss = ")],
            "predictions": structure(rows),
            "prediction_hook_runs": len(seen["prediction_hooks"]),
            "train_tags": sorted(event_tags(model_dir)),
            "variables": model.get_variable_names(),
            "signatures": signatures(export_dir),
            "export_files": listing(export_dir),
        },
        "close": {
            **_floats({k: v for k, v in result.items() if k != "global_step"}),
            "learning_rates": rates,
            "kernel": model.get_variable_value("logit/kernel").ravel().tolist(),
            "probabilities": [float(r["probability"][0]) for r in rows],
        },
    }


def _scalar_values(tf, folder, tag):
    values = []
    for path in sorted(tf.io.gfile.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            values += [v.simple_value for v in event.summary.value if v.tag == tag]
    return values


# ------------------------------------------------------------------ official/r1/mnist
def _summary_kinds(tf, folder):
    """{tag: kind} of the events files directly in `folder` (scalar, histogram, image)."""
    kinds = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                kinds[value.tag] = value.WhichOneof("value")
    return dict(sorted(kinds.items()))


def r1_mnist_model_fn(features, labels, mode, params):
    """official/r1/mnist's model_fn with TF1 layers: named tensors for a logging hook, an
    image and a histogram summary, a `classify` export output."""
    import tensorflow as tf

    image = features
    if isinstance(image, dict):
        image = features["image"]
    images = tf.reshape(image, [-1, 8, 8, 1])
    tf.compat.v1.summary.image("images", images, max_outputs=2)
    hidden = tf.compat.v1.layers.dense(tf.reshape(images, [-1, 64]), 16, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(hidden, 10)
    tf.compat.v1.summary.histogram("logits", logits)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"classes": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
        return tf.estimator.EstimatorSpec(
            mode=tf.estimator.ModeKeys.PREDICT,
            predictions=predictions,
            export_outputs={"classify": tf.estimator.export.PredictOutput(predictions)},
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    accuracy = tf.compat.v1.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))
    if mode == tf.estimator.ModeKeys.TRAIN:
        learning_rate = params["learning_rate"]
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=learning_rate)
        tf.identity(learning_rate, "learning_rate")
        tf.identity(loss, "cross_entropy")
        tf.identity(accuracy[1], name="train_accuracy")
        tf.compat.v1.summary.scalar("train_accuracy", accuracy[1])
        train_op = optimizer.minimize(loss, tf.compat.v1.train.get_or_create_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    return tf.estimator.EstimatorSpec(
        mode=tf.estimator.ModeKeys.EVAL, loss=loss, eval_metric_ops={"accuracy": accuracy}
    )


def r1_mnist(tf, workdir):
    """official/r1/mnist's main: a dataset of images, a LoggingTensorHook on named
    tensors, train to max_steps twice, evaluate, a raw placeholder receiver's export."""
    images, labels = _digits(96, 4)
    model_dir = os.path.join(workdir, "mnist_model")
    mnist_classifier = tf.estimator.Estimator(
        model_fn=r1_mnist_model_fn,
        model_dir=model_dir,
        params={"learning_rate": 1e-2},
        config=tf.estimator.RunConfig(tf_random_seed=SEED, save_summary_steps=10),
    )

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices((images, labels)).repeat().batch(32)
        return ds

    tensors_to_log = ["learning_rate", "cross_entropy", "train_accuracy"]
    hook = tf.compat.v1.train.LoggingTensorHook(
        {name: name for name in tensors_to_log}, every_n_iter=10
    )
    with _info_lines() as lines:
        mnist_classifier.train(input_fn=train_input_fn, hooks=[hook], max_steps=30)
        mnist_classifier.train(input_fn=train_input_fn, max_steps=30)
    eval_results = mnist_classifier.evaluate(
        input_fn=lambda: tf.data.Dataset.from_tensor_slices((images, labels)).batch(32)
    )
    # (The sample's placeholder, made in eager code, fails under TF2: a tensor of the shape.)
    image = tf.zeros([1, 64])
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn({"image": image})
    export_dir = mnist_classifier.export_saved_model(os.path.join(workdir, "export"), receiver)
    logged = _messages(lines, "cross_entropy = ")
    return {
        "exact": {
            "logged": [_shape_of_message(message) for message in logged],
            "skipped": [_NUMBER.sub("N", line) for line in _messages(lines, "Skipping training")],
            "eval_keys": list(eval_results),
            "global_step": int(eval_results["global_step"]),
            "train_summaries": _summary_kinds(tf, model_dir),
            "eval_summaries": _summary_kinds(tf, os.path.join(model_dir, "eval")),
            "signatures": signatures(export_dir.decode()),
            "variables": mnist_classifier.get_variable_names(),
        },
        # (Its loss after 30 steps hangs on the initial draw: 0.08 to 0.47 by the seed.)
        "loose": _floats({"accuracy": eval_results["accuracy"]}),
    }


# ------------------------------------------------------------------ what input_fns give
def _described(tf, value):
    """A features or labels value as model_fn sees it: type, dtype, static shape."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: _described(tf, v) for k, v in sorted(value.items())}
    shape = value.shape.as_list() if value.shape.rank is not None else None
    return [type(value).__name__.replace("EagerTensor", "Tensor"), value.dtype.name, shape]


def input_variants(tf, workdir):
    """What model_fn receives from numpy_input_fn with an array (no dict) or a dict of
    labels, pandas_input_fn, and a dataset of features alone: types, dtypes, static
    shapes, in train, evaluate and predict."""
    seen = []

    def model_fn(features, labels, mode):
        seen.append([mode, _described(tf, features), _described(tf, labels)])
        first = features if not isinstance(features, dict) else next(iter(features.values()))
        first = tf.reshape(tf.cast(first, tf.float32), [tf.shape(first)[0], -1])[:, :1]
        weight = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
        output = tf.matmul(first, weight)
        loss = tf.reduce_mean(output)
        step = tf.compat.v1.train.get_global_step()
        return tf.estimator.EstimatorSpec(
            mode,
            predictions={"output": output},
            loss=loss,
            train_op=tf.compat.v1.assign_add(step, 1),
        )

    model = tf.estimator.Estimator(model_fn, model_dir=os.path.join(workdir, "model"))
    inputs = tf.compat.v1.estimator.inputs
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    y = np.arange(6, dtype=np.int32)
    model.train(inputs.numpy_input_fn(x, y, batch_size=4, shuffle=False), steps=1)
    model.train(
        inputs.numpy_input_fn({"a": x, "b": y}, {"y1": y, "y2": x}, batch_size=4, shuffle=False),
        steps=1,
    )
    frame = pd.DataFrame({"a": x[:, 0], "b": y})
    model.evaluate(inputs.pandas_input_fn(frame, pd.Series(y), batch_size=4, shuffle=False))
    list(model.predict(inputs.numpy_input_fn(x, batch_size=4, shuffle=False)))
    model.train(lambda: tf.data.Dataset.from_tensor_slices({"a": x}).batch(3), steps=1)
    return {"exact": {"seen": seen}}


# ------------------------------------------------ regularizers, Keras metrics, summaries
def regularized_model_fn(model_dirs):
    """A zero-initialised linear model with an L2 kernel regularizer (tf_upgrade_v2's
    spelling of contrib's), Keras metrics in eval_metric_ops, a SummarySaverHook of
    merge_all() in training_hooks, and config read in model_fn (into `model_dirs`)."""

    def model_fn(features, labels, mode, config):
        model_dirs.append(config.model_dir)
        return _regularized_spec(features, labels, mode, config)

    return model_fn


def _regularized_spec(features, labels, mode, config):
    import tensorflow as tf

    x = tf.stack([features["rooms"], features["area"]], axis=1)
    prediction = tf.compat.v1.layers.dense(
        x,
        1,
        kernel_initializer=tf.compat.v1.zeros_initializer(),
        kernel_regularizer=tf.keras.regularizers.l2(0.5 * (0.1)),
        name="linear",
    )
    labels = tf.reshape(tf.cast(labels, tf.float32), [-1, 1])
    mse = tf.compat.v1.losses.mean_squared_error(labels, prediction)
    loss = mse + tf.compat.v1.losses.get_regularization_loss()
    tf.compat.v1.summary.scalar("mse", mse)
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(loss, step)
    mean = tf.keras.metrics.Mean(name="mean_prediction")
    mean.update_state(prediction)
    saver_hook = tf.compat.v1.train.SummarySaverHook(
        save_steps=3,
        output_dir=os.path.join(config.model_dir, "custom"),
        summary_op=tf.compat.v1.summary.merge_all(),
    )
    return tf.estimator.EstimatorSpec(
        mode,
        predictions={"price": prediction},
        loss=loss,
        train_op=train_op,
        eval_metric_ops={"mean_prediction": mean, "mse": tf.compat.v1.metrics.mean(mse)},
        training_hooks=[saver_hook],
    )


def regularized(tf, workdir):
    """The regularization loss in the loss and the variables, Keras metrics evaluated,
    a user's SummarySaverHook's folder, config's model_dir in model_fn."""
    frame, _ = _houses(40, 5)
    price = (0.6 * frame["rooms"] + 1.5 * frame["area"] - 2.0).astype(np.float32)
    model_dirs = []
    model = tf.estimator.Estimator(
        regularized_model_fn(model_dirs),
        config=tf.estimator.RunConfig(model_dir=os.path.join(workdir, "model")),
    )
    inputs = tf.compat.v1.estimator.inputs
    model.train(inputs.pandas_input_fn(frame, price, batch_size=10, num_epochs=2, shuffle=False))
    result = model.evaluate(
        inputs.pandas_input_fn(frame, price, batch_size=10, num_epochs=1, shuffle=False)
    )
    model_dir = os.path.join(workdir, "model")
    return {
        "exact": {
            "eval_keys": list(result),
            "global_step": int(result["global_step"]),
            "model_dirs": sorted({os.path.relpath(d, workdir) for d in model_dirs}),
            "custom": _summary_kinds(tf, os.path.join(model_dir, "custom")),
            "custom_files": listing(os.path.join(model_dir, "custom")),
            "train_summaries": _summary_kinds(tf, model_dir),
            "variables": model.get_variable_names(),
        },
        "close": {
            **_floats({k: v for k, v in result.items() if k != "global_step"}),
            "kernel": model.get_variable_value("linear/kernel").ravel().tolist(),
        },
    }


# ----------------------------------------------------- train_and_evaluate and exporters
def example_receiver_fn():
    """The classic serving_input_receiver_fn: serialized tf.Examples in a placeholder."""
    import tensorflow as tf

    serialized = tf.compat.v1.placeholder(
        dtype=tf.string, shape=[None], name="input_example_tensor"
    )
    spec = {k: tf.io.FixedLenFeature([], tf.float32) for k in CSV_COLUMN_NAMES[:-1]}
    features = tf.io.parse_example(serialized, spec)
    return tf.estimator.export.ServingInputReceiver(features, {"examples": serialized})


def train_and_evaluate_custom(tf, workdir):
    """custom_estimator's model through `train_and_evaluate` with a LatestExporter and
    a FinalExporter of a placeholder receiver: what it returns, evaluations' steps,
    model_dir's listing."""
    (train_x, train_y), (test_x, test_y) = _iris_frames(80, 6), _iris_frames(20, 7)
    model_dir = os.path.join(workdir, "model")
    classifier = _iris_classifier(tf, model_dir, save_checkpoints_steps=20)
    train_spec = tf.estimator.TrainSpec(
        input_fn=lambda: train_input_fn(train_x, train_y, 16), max_steps=60
    )
    exporters = [
        tf.estimator.LatestExporter("latest", example_receiver_fn, exports_to_keep=2),
        tf.estimator.FinalExporter("final", example_receiver_fn),
    ]
    eval_spec = tf.estimator.EvalSpec(
        input_fn=lambda: eval_input_fn(test_x, test_y, 8),
        steps=None,
        exporters=exporters,
        start_delay_secs=0,
        throttle_secs=0,
    )
    returned = tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    metrics, export_results = returned
    return {
        "exact": {
            "returned": [type(returned).__name__, len(returned)],
            "metrics": list(metrics),
            "export_results": [type(r).__name__ for r in export_results],
            "files": listing(model_dir),
            "exports_kept": {
                name: len(os.listdir(os.path.join(model_dir, "export", name)))
                for name in ("final", "latest")
            },
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
        },
        # (The loss after 60 shuffled steps hangs on the draws: 0.28 to 0.42 seen.)
        "loose": _floats({"accuracy": metrics["accuracy"]}),
    }


# ----------------------------------------------------- a head in a custom model_fn
def head_model_fn(features, labels, mode, params):
    """TF2-era samples' custom model_fn: a TF1 variable, logits into
    `MultiClassHead.create_estimator_spec` with the optimizer `params["optimizer"]` makes
    (its iterations the global step, as 2.15's guide said), and `trainable_variables`."""
    import tensorflow as tf

    x = tf.reshape(features["x"], [-1, 1])
    weight = tf.compat.v1.get_variable("w", [1, 3], initializer=tf.compat.v1.zeros_initializer())
    logits = tf.matmul(x, weight)
    head = tf.estimator.MultiClassHead(n_classes=3)
    optimizer = params["optimizer"]()
    if params.get("iterations_are_steps"):
        optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
    return head.create_estimator_spec(
        features=features,
        mode=mode,
        logits=logits,
        labels=labels,
        optimizer=optimizer,
        trainable_variables=params.get("trainable_variables", tf.compat.v1.trainable_variables)(),
    )


class StopAtSeven:
    """ExamplesPerSecondHook's shape (official/utils/logs/hooks.py): the global step
    fetched with each run through SessionRunArgs; here it asks to stop at step 7."""

    @staticmethod
    def make(tf, results):
        class Hook(tf.estimator.SessionRunHook):
            def begin(self):
                self._global_step_tensor = tf.compat.v1.train.get_global_step()

            def before_run(self, run_context):
                return tf.estimator.SessionRunArgs(self._global_step_tensor)

            def after_run(self, run_context, run_values):
                results.append(run_values.results)
                if run_values.results >= 7:
                    run_context.request_stop()

        return Hook()


def head_in_model_fn(tf, workdir):
    """A head trained from a custom model_fn with a legacy Keras optimizer, a hook that
    stops training, and what 2.15 said to a head's misuse."""
    x = np.linspace(-1, 1, 16).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, (x > 0).astype(np.int32)))

    def batches():
        return input_fn().repeat().batch(4)

    def estimator(name, **params):
        params.setdefault("optimizer", lambda: tf.keras.optimizers.legacy.Adagrad(0.1))
        return tf.estimator.Estimator(head_model_fn, os.path.join(workdir, name), params=params)

    model = estimator("model", iterations_are_steps=True)
    untrained = _error(lambda: model.get_variable_value("w"))
    model.train(batches, steps=5)
    results = []
    model.train(batches, steps=50, hooks=[StopAtSeven.make(tf, results)])
    metrics = model.evaluate(lambda: input_fn().batch(8))
    no_variables = estimator("nv", trainable_variables=lambda: None)
    keras_optimizer = estimator("keras", optimizer=lambda: tf.keras.optimizers.Adagrad(0.1))
    v1_optimizer = estimator("v1", optimizer=lambda: tf.compat.v1.train.AdagradOptimizer(0.1))
    return {
        # What the kit does otherwise on purpose (docs/guide/estimator.md).
        "differs": {
            "keras_optimizer": _error(lambda: keras_optimizer.train(batches, steps=1)),
            "v1_optimizer": _error(lambda: v1_optimizer.train(batches, steps=1)),
        },
        "exact": {
            "untrained": untrained,
            "no_trainable_variables": _error(lambda: no_variables.train(batches, steps=1))[:1],
            "hook_results": sorted({type(r).__name__ for r in results}),
            "metrics": list(metrics),
            "variables": model.get_variable_names(),
        },
        "close": {
            "stopped_at": int(model.get_variable_value("global_step")),
            "first_result": int(results[0]),
            **_floats({k: v for k, v in metrics.items() if k != "global_step"}),
            "w": model.get_variable_value("w").ravel().tolist(),
        },
    }


def _error(call):
    """[type name, message] of what `call()` raises (folders as <dir>), or None."""
    try:
        call()
    except Exception as error:  # what a user sees is the point
        return [type(error).__name__, re.sub(r"/\S+", "<dir>", str(error))]
    return None


# ------------------------------------------------ feature columns in a custom model_fn
def _column_model_fn(features, labels, mode, params):
    """A hand-written wide and deep: `linear_model` over the wide columns beside
    `input_layer` over embedded and indicator columns, as TF1-era samples wrote it."""
    import tensorflow as tf

    fc = tf.compat.v1.feature_column
    wide = tf.compat.v1.feature_column.linear_model(features, params["wide"])
    deep = fc.input_layer(features, params["deep"])
    hidden = tf.compat.v1.layers.dense(
        deep, 2, kernel_initializer=tf.compat.v1.constant_initializer(0.1), name="hidden"
    )
    logits = wide + tf.compat.v1.layers.dense(
        hidden, 1, kernel_initializer=tf.compat.v1.zeros_initializer(), name="logits"
    )
    probability = tf.sigmoid(logits)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"probability": probability})
    labels = tf.cast(tf.reshape(labels, [-1, 1]), tf.float32)
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.FtrlOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    metrics = {"auc": tf.compat.v1.metrics.auc(labels, probability)}
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops=metrics, predictions={"p": probability}
    )


def feature_columns_model_fn(tf, workdir):
    """Variable names and values of hand-built wide and deep columns (vocabulary,
    hash, bucketized, crossed, embedding, indicator) in a TF1 model_fn."""
    fc = tf.feature_column
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"])
    word = fc.categorical_column_with_hash_bucket("word", 7)
    size = fc.numeric_column("size")
    size_buckets = fc.bucketized_column(size, [0.3, 0.6])
    crossed = fc.crossed_column([color, size_buckets], 5)
    deep = [
        fc.embedding_column(
            word, 2, initializer=tf.compat.v1.constant_initializer(0.05), combiner="sqrtn"
        ),
        fc.indicator_column(color),
        size,
    ]
    rng = np.random.RandomState(8)
    n = 24
    frame = pd.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue", "pink"], n),
            "word": rng.choice(["a", "b", "c", "d"], n),
            "size": rng.uniform(0, 1, n).astype(np.float32),
        }
    )
    labels = ((frame["color"] == "red") | (frame["size"] > 0.7)).astype(np.int64)
    model = tf.estimator.Estimator(
        _column_model_fn,
        os.path.join(workdir, "model"),
        params={"wide": [color, size_buckets, crossed], "deep": deep},
    )
    inputs = tf.compat.v1.estimator.inputs
    model.train(inputs.pandas_input_fn(frame, labels, batch_size=8, num_epochs=3, shuffle=False))
    result = model.evaluate(inputs.pandas_input_fn(frame, labels, shuffle=False))
    names = model.get_variable_names()
    return {
        "exact": {
            "variables": names,
            "shapes": {n: list(model.get_variable_value(n).shape) for n in names},
        },
        "close": {
            **_floats({k: v for k, v in result.items() if k != "global_step"}),
            **{
                name: np.asarray(model.get_variable_value(name), np.float64).ravel().tolist()
                for name in names
                if "Ftrl" not in name and name != "global_step"
            },
        },
    }


# ------------------------------------------------ a SummarySaverHook among evaluation hooks
def _eval_images_model_fn(features, labels, mode, config):
    """Object-detection samples' way to see eval images: the graph's summaries merged
    into a SummarySaverHook of the spec's evaluation_hooks, in a folder of its own."""
    import tensorflow as tf

    x = tf.reshape(features["x"], [-1, 1])
    w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    y = tf.matmul(x, w)
    loss = tf.compat.v1.losses.mean_squared_error(tf.reshape(labels, [-1, 1]), y)
    images = tf.reshape(tf.tile(x, [1, 4]), [-1, 2, 2, 1])
    tf.compat.v1.summary.image("picture", images, max_outputs=1)
    tf.compat.v1.summary.scalar("mean_output", tf.reduce_mean(y))
    hooks = []
    if mode == tf.estimator.ModeKeys.EVAL:
        saver = tf.compat.v1.train.SummarySaverHook(
            save_steps=1,
            output_dir=os.path.join(config.model_dir, "eval_images"),
            summary_op=tf.compat.v1.summary.merge_all(),
        )
        hooks = [saver]
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, evaluation_hooks=hooks)


def eval_summary_hook(tf, workdir):
    """Which summaries land where: training's, evaluate's, the evaluation hook's."""
    x = np.linspace(-1, 1, 16).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x)).batch(4)

    model_dir = os.path.join(workdir, "model")
    model = tf.estimator.Estimator(_eval_images_model_fn, model_dir)
    model.train(input_fn, steps=3)
    result = model.evaluate(input_fn)
    return {
        "exact": {
            "eval_keys": list(result),
            "train": _summary_kinds(tf, model_dir),
            "eval": _summary_kinds(tf, os.path.join(model_dir, "eval")),
            "eval_images": _summary_kinds(tf, os.path.join(model_dir, "eval_images")),
        },
        "close": _floats(result),
    }


# ------------------------------------------------------------------ misuse
def api_misuse(tf, workdir):
    """What 2.15 said to common slips with the Estimator's objects: the exception's type
    (the nearest of Python's or TensorFlow's)."""
    x = np.linspace(-1, 1, 8).astype(np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x)).batch(4)

    def spec_of(name, build, **kwargs):
        def model_fn(features, labels, mode):
            w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
            y = features["x"] * w
            step = tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1)
            return build(mode, y, step)

        return tf.estimator.Estimator(model_fn, os.path.join(workdir, name), **kwargs)

    def spec(**kwargs):
        def build(mode, y, step):
            return tf.estimator.EstimatorSpec(mode, loss=tf.reduce_mean(y), train_op=step, **kwargs)

        return build

    estimator, run_config = tf.estimator.Estimator, tf.estimator.RunConfig
    cases = {
        "replace_unknown": lambda: run_config().replace(foo=1),
        "config_not_run_config": lambda: estimator(cnn_model_fn, config="x"),
        "model_fn_none": lambda: estimator(None),
        "params_not_taken": lambda: estimator(
            lambda features, labels, mode: None, params={"hidden_units": [4]}
        ),
        "defaulted_extra_arg": lambda: estimator(
            lambda features, labels, mode, params, config, verbose=False: None
        ),
        "model_dir_conflict": lambda: estimator(
            cnn_model_fn, model_dir="a", config=run_config(model_dir="b")
        ),
        "dataset_not_input_fn": lambda: spec_of("ds", spec()).train(input_fn(), steps=1),
        "both_checkpoint_settings": lambda: run_config(
            save_checkpoints_steps=10, save_checkpoints_secs=10
        ),
        "predictions_list": lambda: spec_of(
            "pl", lambda m, y, op: spec(predictions=[y])(m, y, op)
        ).train(input_fn, steps=1),
        "predictions_value": lambda: spec_of(
            "pv", lambda m, y, op: spec(predictions={"y": y, "n": 1.0})(m, y, op)
        ).train(input_fn, steps=1),
        "predict_without_predictions": lambda: tf.estimator.EstimatorSpec("infer"),
        "eval_without_loss": lambda: tf.estimator.EstimatorSpec("eval"),
        "warm_start_from_nothing": lambda: spec_of(
            "ws", spec(), warm_start_from=os.path.join(workdir, "no")
        ).train(input_fn, steps=1),
        "names_untrained": lambda: estimator(
            cnn_model_fn, os.path.join(workdir, "nu")
        ).get_variable_names(),
    }
    return {"exact": {name: (_raised(case) or [None])[:1] for name, case in cases.items()}}


PROGRAMS = {
    "cnn_mnist": cnn_mnist,
    "custom_estimator": custom_estimator,
    "estimator_objects": estimator_objects,
    "estimator_api": estimator_api,
    "tf1_idioms": tf1_idioms,
    "r1_mnist": r1_mnist,
    "input_variants": input_variants,
    "regularized": regularized,
    "head_in_model_fn": head_in_model_fn,
    "train_and_evaluate_custom": train_and_evaluate_custom,
    "api_misuse": api_misuse,
    "feature_columns_model_fn": feature_columns_model_fn,
    "eval_summary_hook": eval_summary_hook,
}
