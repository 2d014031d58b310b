"""TF1-style Estimator programs, as teams wrote them for tf.estimator, run on either side.

Each program takes the estimator module (`tf.estimator` under TF 2.15, this kit's
`components.estimator` under TF 2.21) and a fresh folder, and returns what a
user would look at, as JSON-able values.  `tests/tf215/record_tf1_programs.py` runs
them under tf.estimator 2.15 once, into `tests/data/tf215/tf1_programs.json`;
`tests/test_estimator_tf1.py` runs them here and compares.  Only the import differs.
"""

import os

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
SEED = 7
IRIS_KEYS = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def _iris_data():
    rng = np.random.RandomState(0)
    labels = np.repeat(np.arange(3), 40)
    features = {
        key: (rng.normal(size=120) + labels * (i + 1) * 0.6).astype(np.float32)
        for i, key in enumerate(IRIS_KEYS)
    }
    return features, labels.astype(np.int64)


def _variables(model_dir):
    return sorted(name for name, _ in tf.train.list_variables(model_dir))


def _floats(values):
    return {k: float(v) for k, v in values.items()}


# ------------------------------------------------------------------ iris
def iris_model_fn(est):
    """The classic custom Estimator of TF's guide: feature columns, TF1 layers and metrics."""

    def model_fn(features, labels, mode, params):
        import tensorflow.compat.v1 as tf1  # as user code imports it

        net = tf1.feature_column.input_layer(features, params["feature_columns"])
        for units in params["hidden_units"]:
            net = tf1.layers.dense(net, units=units, activation=tf.nn.relu)
        logits = tf1.layers.dense(net, params["n_classes"], activation=None)
        predicted_classes = tf.argmax(logits, 1)
        if mode == est.ModeKeys.PREDICT:
            predictions = {
                "class_ids": predicted_classes[:, tf.newaxis],
                "probabilities": tf.nn.softmax(logits),
                "logits": logits,
            }
            return est.EstimatorSpec(mode, predictions=predictions)
        loss = tf1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        accuracy = tf1.metrics.accuracy(labels=labels, predictions=predicted_classes, name="acc_op")
        tf1.summary.scalar("accuracy", accuracy[1])
        if mode == est.ModeKeys.EVAL:
            return est.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
        optimizer = tf1.train.AdagradOptimizer(learning_rate=0.1)
        train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
        return est.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


class StopAfter(v1.train.SessionRunHook):
    """A user's TF1 hook: reads the global step each run and stops training at `last`."""

    def __init__(self, last):
        self.last = last
        self.events = []

    def begin(self):
        self.events.append("begin")
        self._global_step = v1.train.get_global_step()

    def after_create_session(self, session, coord):
        self.events.append(f"after_create_session:{int(session.run(self._global_step))}")

    def before_run(self, run_context):
        return v1.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        self.seen = int(run_values.results)
        if self.seen >= self.last:
            run_context.request_stop()

    def end(self, session):
        self.events.append(f"end:{int(session.run(self._global_step))}")


def iris(est, workdir):
    features, labels = _iris_data()
    columns = [tf.feature_column.numeric_column(key) for key in IRIS_KEYS]
    model_dir = os.path.join(workdir, "iris")
    classifier = est.Estimator(
        iris_model_fn(est),
        model_dir=model_dir,
        config=est.RunConfig(tf_random_seed=SEED, save_summary_steps=10),
        params={
            "feature_columns": columns,
            "hidden_units": [10, 10],
            "n_classes": 3,
        },
    )

    def train_input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(20)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(40)

    hook = StopAfter(last=30)
    classifier.train(train_input_fn, steps=1000, hooks=[hook])
    stopped_at = classifier.get_variable_value("global_step")
    classifier.train(train_input_fn, steps=70)
    metrics = classifier.evaluate(eval_input_fn)
    predictions = list(
        classifier.predict(lambda: tf.data.Dataset.from_tensor_slices(features).batch(40))
    )
    summaries = _summary_tags(model_dir)
    return {
        "hook_events": hook.events,
        "hook_last_seen": hook.seen,
        "stopped_at": int(stopped_at),
        "eval": _floats(metrics),
        "eval_keys": sorted(metrics),
        "prediction_keys": sorted(predictions[0]),
        "prediction_count": len(predictions),
        "first_probabilities": [float(p) for p in predictions[0]["probabilities"]],
        "variables": _variables(model_dir),
        "summary_tags": summaries,
    }


def _summary_tags(folder):
    tags = set()
    for path in tf.io.gfile.glob(os.path.join(folder, "events.out.tfevents.*")):
        for event in v1.train.summary_iterator(path):
            tags.update(value.tag for value in event.summary.value)
    return sorted(tags)


# ---------------------------------------------------------- get_variable
def linear_model_fn(est):
    """A regression on `tf.compat.v1.get_variable`, stepping the global step by hand."""

    def model_fn(features, labels, mode, params):
        x = tf.reshape(features["x"], [-1, 1])
        with v1.variable_scope("linear"):
            weight = v1.get_variable("weight", [1, 1], initializer=v1.zeros_initializer())
            bias = v1.get_variable("bias", [1], initializer=v1.zeros_initializer())
        # 1 unless a FeedFnHook feeds another value.
        scale = v1.placeholder_with_default(1.0, [], name="scale")
        prediction = (tf.matmul(x, weight) + bias) * scale
        if mode == est.ModeKeys.PREDICT:
            return est.EstimatorSpec(
                mode,
                predictions={"y": prediction},
                export_outputs={
                    "serving_default": est.export.RegressionOutput(prediction),
                    "predict": est.export.PredictOutput({"y": prediction}),
                },
            )
        labels = tf.reshape(tf.cast(labels, tf.float32), [-1, 1])
        loss = tf.identity(v1.losses.mean_squared_error(labels, prediction), name="batch_loss")
        global_step = v1.train.get_global_step()
        optimizer = v1.train.GradientDescentOptimizer(0.05)
        train_op = tf.group(optimizer.minimize(loss), v1.assign_add(global_step, 1))
        metrics = {
            "rmse": v1.metrics.root_mean_squared_error(labels, prediction),
            "mae": v1.metrics.mean_absolute_error(labels, prediction),
        }
        hooks = []
        if params.get("profile_dir"):
            # (TF1's ProfilerHook opens a FileWriter: it is made in the graph.)
            hooks.append(est.ProfilerHook(save_steps=10, output_dir=params["profile_dir"]))
        if params.get("summary_dir"):
            summary = v1.summary.scalar("loss_every_4", loss)
            hooks.append(
                est.SummarySaverHook(
                    save_steps=4, output_dir=params["summary_dir"], summary_op=summary
                )
            )
        return est.EstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metric_ops=metrics, training_hooks=hooks
        )

    return model_fn


def _line_data():
    x = np.linspace(-1, 1, 64).astype(np.float32)
    return x, (3 * x + 1).astype(np.float32)


def get_variable_regression(est, workdir):
    x, y = _line_data()
    model_dir = os.path.join(workdir, "linear")
    regressor = est.Estimator(linear_model_fn(est), model_dir=model_dir)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)

    regressor.train(input_fn, max_steps=40)
    regressor.train(input_fn, max_steps=40)  # already there: nothing runs
    metrics = regressor.evaluate(input_fn, steps=4)
    predictions = list(
        regressor.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x[:4]}).batch(4))
    )
    export_dir = regressor.export_saved_model(
        os.path.join(workdir, "linear_export"),
        est.export.build_parsing_serving_input_receiver_fn(
            {"x": tf.io.FixedLenFeature([1], tf.float32)}
        ),
    )
    return {
        "global_step": int(regressor.get_variable_value("global_step")),
        "weight": float(regressor.get_variable_value("linear/weight")[0, 0]),
        "bias": float(regressor.get_variable_value("linear/bias")[0]),
        "eval": _floats(metrics),
        "predictions": [float(p["y"][0]) for p in predictions],
        "variables": _variables(model_dir),
        "export_dir": export_dir.decode() if isinstance(export_dir, bytes) else export_dir,
    }


# ------------------------------------------------------------ batch norm
def batch_norm_model_fn(est):
    """Batch norm's moving averages through UPDATE_OPS, Adam on a decayed learning rate."""

    def model_fn(features, labels, mode, params):
        training = mode == est.ModeKeys.TRAIN
        net = v1.layers.dense(features["x"], 8, use_bias=False)
        net = v1.layers.batch_normalization(net, training=training)
        logits = v1.layers.dense(tf.nn.relu(net), 1)
        probabilities = tf.sigmoid(logits)
        if mode == est.ModeKeys.PREDICT:
            return est.EstimatorSpec(mode, predictions={"probabilities": probabilities})
        labels = tf.cast(tf.reshape(labels, [-1, 1]), tf.float32)
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        global_step = v1.train.get_global_step()
        learning_rate = v1.train.exponential_decay(0.05, global_step, 10, 0.5, staircase=True)
        v1.summary.scalar("learning_rate", learning_rate)
        update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = v1.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
        metrics = {
            "auc": v1.metrics.auc(labels, probabilities),
            "accuracy": v1.metrics.accuracy(labels, tf.round(probabilities)),
        }
        return est.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)

    return model_fn


def batch_norm(est, workdir):
    rng = np.random.RandomState(1)
    x = rng.normal(size=(200, 3)).astype(np.float32) * 4 + 2
    y = (x[:, 0] > 2).astype(np.int64)
    model_dir = os.path.join(workdir, "batch_norm")
    classifier = est.Estimator(
        batch_norm_model_fn(est),
        model_dir=model_dir,
        config=est.RunConfig(tf_random_seed=SEED, save_summary_steps=5),
    )

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(50)

    classifier.train(input_fn, steps=30)
    metrics = classifier.evaluate(input_fn, steps=4)
    moving_mean = classifier.get_variable_value("batch_normalization/moving_mean")
    return {
        "global_step": int(classifier.get_variable_value("global_step")),
        "moving_mean_moved": bool(np.abs(moving_mean).max() > 0.01),
        "eval_keys": sorted(metrics),
        "variables": _variables(model_dir),
        "summary_tags": _summary_tags(model_dir),
    }


# ----------------------------------------------------------- stock hooks
class Fetches(v1.train.SessionRunHook):
    """Fetches the loss tensor by its name, as LoggingTensorHook does."""

    def begin(self):
        self.values = []

    def before_run(self, run_context):
        assert isinstance(run_context, v1.train.SessionRunContext)
        loss = v1.get_collection(v1.GraphKeys.LOSSES)[0]
        return v1.train.SessionRunArgs({"loss": loss.name})

    def after_run(self, run_context, run_values):
        assert isinstance(run_values, v1.train.SessionRunValues)
        self.values.append(float(run_values.results["loss"]))


def stock_hooks(est, workdir):
    """tf.estimator's hooks (TF1's) in train, evaluate and predict."""
    x, y = _line_data()
    model_dir = os.path.join(workdir, "hooks")
    summary_dir = os.path.join(workdir, "hooks_summaries")
    profile_dir = os.path.join(workdir, "hooks_profile")
    regressor = est.Estimator(
        linear_model_fn(est),
        model_dir=model_dir,
        config=est.RunConfig(save_checkpoints_steps=1000, save_summary_steps=1000),
        params={"summary_dir": summary_dir, "profile_dir": profile_dir},
    )

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)

    fetches = Fetches()
    regressor.train(
        input_fn,
        hooks=[
            fetches,
            est.StopAtStepHook(last_step=12),
            est.LoggingTensorHook({"step": "global_step"}, every_n_iter=5),
            est.CheckpointSaverHook(model_dir, save_steps=5),
            est.GlobalStepWaiterHook(wait_until_step=0),
        ],
    )
    final = est.FinalOpsHook({"last_batch_loss": "batch_loss:0"})
    regressor.evaluate(input_fn, steps=2, hooks=[final])

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": x[:8]}).batch(4)

    plain = [float(p["y"][0]) for p in regressor.predict(predict_input_fn)]
    fed = [
        float(p["y"][0])
        for p in regressor.predict(
            predict_input_fn,
            hooks=[est.FeedFnHook(lambda: {"scale:0": 2.0}), est.StopAtStepHook(num_steps=1)],
        )
    ]
    return {
        "fetched_losses": len(fetches.values),
        "first_and_last_loss": [fetches.values[0], fetches.values[-1]],
        "global_step": int(regressor.get_variable_value("global_step")),
        "final_ops_values": _floats(final.final_ops_values),
        "profiles": bool(tf.io.gfile.glob(os.path.join(profile_dir, "timeline-*.json"))),
        "checkpoints": sorted(
            os.path.basename(p)[: -len(".index")]
            for p in tf.io.gfile.glob(os.path.join(model_dir, "*.index"))
        ),
        "summary_steps": _summary_steps(summary_dir, "loss_every_4"),
        "fed_doubles": [round(f / p, 4) for f, p in zip(fed, plain, strict=False)],
        "predictions": [len(plain), len(fed)],
    }


def _summary_steps(folder, tag):
    steps = set()
    for path in tf.io.gfile.glob(os.path.join(folder, "events.out.tfevents.*")):
        for event in v1.train.summary_iterator(path):
            if any(value.tag == tag for value in event.summary.value):
                steps.add(int(event.step))
    return sorted(steps)


PROGRAMS = {
    "iris": iris,
    "get_variable_regression": get_variable_regression,
    "batch_norm": batch_norm,
    "stock_hooks": stock_hooks,
}
