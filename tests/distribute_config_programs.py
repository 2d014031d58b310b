"""Estimators given `tf.distribute` strategies through `RunConfig`, as TF 2.x-era public
samples and guides wrote them after `tf_upgrade_v2`, on one CPU with tiny made-up data.

- the "Distributed training with TensorFlow" guide's (TF 2.0-2.3) `LinearRegressor`
  with `optimizer='SGD'` under `MirroredStrategy()` as `train_distribute` and
  `eval_distribute`; predict and export after it;
- a canned `DNNClassifier` under `MirroredStrategy(devices=["/cpu:0"])`, warm-started
  from fixed weights: evaluate, predict, export, the export served;
- "Multi-worker training with Estimator"'s `model_fn` (a Keras `Sequential`, a
  `tf.compat.v1.train` optimizer, the loss summed and scaled by the batch and by
  `1/num_replicas_in_sync`) and its `input_fn(mode, input_context)` sharding by
  `input_pipeline_id`, under `tf.compat.v1.distribute.MirroredStrategy` through
  `train_and_evaluate`; the tutorial's PREDICT spec (it passes `labels=`), then fixed,
  predict and export;
- `CentralStorageStrategy` (tf.distribute.experimental's training, compat.v1's
  evaluating) for a Keras-layer `model_fn` under a TF1 Adam, and
  `OneDeviceStrategy("/cpu:0")` for a `LinearClassifier`;
- `import tensorflow.compat.v1 as tf` code's V1 canned `DNNLinearCombinedClassifier`
  (warm-started) under compat.v1's `MirroredStrategy()` and `OneDeviceStrategy`;
- `tf.keras.estimator.model_to_estimator` of a model of two inputs and two outputs,
  compiled with a metric per output, under `MirroredStrategy()`;
- `model_to_estimator` of models compiled with `tf.compat.v1.train` optimizers: TF 1.x's
  distribution README's `GradientDescentOptimizer(0.2)` model under `MirroredStrategy()`,
  a TF1 Adam with metrics through `tf.compat.v1.keras`'s (name-based checkpoints);
- `tf.contrib.distribute.DistributeConfig` users: `RunConfig(experimental_distribute=...)`
  (the contrib namedtuple's fields), both spellings at once, and the converted
  `RunConfig(train_distribute=...)`;
- what a strategy did not take: an `input_fn` returning tensors, a TF1 `SessionRunHook`
  beside a canned estimator, an `eval_distribute` alone;
- a `model_fn` whose helper branches on a tensor in Python, under a strategy (where
  `call_for_each_replica` converted it with AutoGraph) and under none.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what the sample's user sees: `exact` (keys, steps, listings, variable names and
shapes, signatures, log lines without their numbers, what `model_fn` saw of the strategy,
errors) and `close` (values: every model starts from zeros or from a checkpoint the
program writes, and every batch is fixed, so the values agree to 1e-4).
`tests/test_distribute_config.py` compares them with 2.15's recording
(`tests/tf215/record_family.py distribute_config_programs`, into
`tests/data/tf215/distribute_config.json`).
"""

import collections
import os

import numpy as np

from tests.feature_column_programs import write_checkpoint
from tests.migrate_guide_programs import _user_lines
from tests.program_registry import registry
from tests.r1_sample_programs import _GRAPH_LINES, _predictions, _variables
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tf1_sample_programs import _floats
from tests.tutorial_programs import event_tags, listing, signatures, structure

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "distribute_config.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
BATCH_SIZE = 8


def _strategy_seen(tf, seen, mode):
    """Notes what `model_fn` sees of the strategy in `mode` (each note once: the kit
    traces a `model_fn` twice under a strategy)."""
    strategy = tf.distribute.get_strategy()
    note = [
        str(mode),
        tf.distribute.has_strategy(),
        tf.distribute.in_cross_replica_context(),
        type(strategy).__name__,
        strategy.num_replicas_in_sync,
    ]
    if note not in seen:
        seen.append(note)
    return strategy


def _examples(tf, rows):
    """Serialized tf.train.Examples of float features {name: [values]}, one per row."""
    return [
        tf.train.Example(
            features=tf.train.Features(
                feature={
                    name: tf.train.Feature(float_list=tf.train.FloatList(value=values))
                    for name, values in row.items()
                }
            )
        ).SerializeToString()
        for row in rows
    ]


def _canned_lines(lines, workdir, extra=()):
    """`_user_lines` without 2.15's graph and session lines, which the TF2 path (a canned
    model on a Dataset) does not run: kept on purpose (docs/guide/estimator.md)."""
    return [line for line in _user_lines(lines, workdir, extra) if line not in _GRAPH_LINES]


def _canned_seen(tf, model, columns, workdir, lines, result, rows, skip=r"$^"):
    """What a canned model's user sees after training, evaluating and predicting under a
    strategy: its export's signatures too."""
    export_dir = _parsing_export(tf, model, columns, os.path.join(workdir, "export"))
    shapes, values = _variables(model, skip=skip)
    exact = {
        "eval_keys": sorted(result),
        "global_step": int(result["global_step"]),
        "lines": _canned_lines(lines, workdir),
        "predictions": structure(rows),
        "variables": shapes,
        "files": listing(model.model_dir),
        "signatures": signatures(export_dir),
    }
    close = {
        **_floats({f"eval/{k}": v for k, v in result.items()}),
        **{f"predict/{k}": v for k, v in _predictions(rows).items()},
        **{f"weights/{k}": v for k, v in values.items()},
    }
    return exact, close


def _parsing_export(tf, model, columns, folder):
    spec = tf.feature_column.make_parse_example_spec(columns)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    return model.export_saved_model(folder, receiver).decode()


# ------------------------------------------------------- the distributed training guide
@program
def guide_linear_regressor(tf, workdir):
    """The guide's `LinearRegressor(optimizer='SGD')` under `MirroredStrategy()` for
    training and evaluation, then predict and export (under no strategy in 2.15)."""
    mirrored_strategy = tf.distribute.MirroredStrategy()
    config = tf.estimator.RunConfig(
        train_distribute=mirrored_strategy, eval_distribute=mirrored_strategy
    )
    model_dir = os.path.join(workdir, "regressor")
    columns = [tf.feature_column.numeric_column("feats")]
    regressor = tf.estimator.LinearRegressor(
        feature_columns=columns, optimizer="SGD", config=config, model_dir=model_dir
    )

    def input_fn():
        dataset = tf.data.Dataset.from_tensors(({"feats": [1.0]}, [1.0]))
        return dataset.repeat(1000).batch(10)

    with _info_lines() as lines:
        regressor.train(input_fn=input_fn, steps=10)
        result = regressor.evaluate(input_fn=input_fn, steps=10)
    rows = list(
        regressor.predict(
            lambda: tf.data.Dataset.from_tensor_slices({"feats": [[0.5], [2.0]]}).batch(2)
        )
    )
    exact, close = _canned_seen(tf, regressor, columns, workdir, lines, result, rows)
    exact.update(
        replicas=mirrored_strategy.num_replicas_in_sync,
        config=[
            type(config.train_distribute).__name__,
            config.eval_distribute is mirrored_strategy,
        ],
        train_tags=sorted(event_tags(model_dir)),
        eval_tags=event_tags(os.path.join(model_dir, "eval")),
    )
    return {"exact": exact, "close": close}


# ------------------------------------------------------- a canned DNN under Mirrored
def _iris_like(n, seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    return x, (x.sum(axis=1) * 1.5 + 1.5).clip(0, 2.9).astype(np.int64)


def _dnn_start(tf, workdir, logits):
    """A checkpoint of fixed weights for a DNN of 4 hidden units over 3 inputs."""
    shapes = {"dnn/hiddenlayer_0/kernel": [3, 4], "dnn/hiddenlayer_0/bias": [4]}
    shapes.update({"dnn/logits/kernel": [4, logits], "dnn/logits/bias": [logits]})
    return write_checkpoint(tf, os.path.join(workdir, "start"), shapes)


@program
def dnn_classifier_mirrored(tf, workdir):
    """A `DNNClassifier` under `MirroredStrategy(devices=["/cpu:0"])` for training and
    evaluation, warm-started from fixed weights; predict, export, the export served."""
    x, y = _iris_like(16, 0)
    start = _dnn_start(tf, workdir, logits=3)
    strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0"])
    config = tf.estimator.RunConfig(
        train_distribute=strategy, eval_distribute=strategy, save_summary_steps=2
    )
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    model_dir = os.path.join(workdir, "dnn")
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[4],
        feature_columns=columns,
        n_classes=3,
        model_dir=model_dir,
        config=config,
        warm_start_from=start,
    )

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return dataset.repeat().batch(BATCH_SIZE)

    with _info_lines() as lines:
        classifier.train(input_fn, steps=5)
        result = classifier.evaluate(input_fn, steps=2)
    rows = list(
        classifier.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x[:4]}).batch(4))
    )
    export_dir = _parsing_export(tf, classifier, columns, os.path.join(workdir, "export"))
    served = tf.saved_model.load(export_dir).signatures["predict"](
        examples=tf.constant(_examples(tf, [{"x": row} for row in x[:4].tolist()]))
    )
    shapes, values = _variables(classifier, skip="Adagrad|global_step")
    return {
        "exact": {
            "eval_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "lines": _canned_lines(lines, workdir, extra=("Warm-start",)),
            "predictions": structure(rows),
            "variables": sorted(classifier.get_variable_names()),
            "shapes": shapes,
            "files": listing(model_dir),
            "train_tags": event_tags(model_dir),
            "signatures": signatures(export_dir),
            "served": sorted(served),
        },
        "close": {
            **_floats({f"eval/{k}": v for k, v in result.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **{f"weights/{k}": v for k, v in values.items()},
            "served/probabilities": np.asarray(served["probabilities"]).ravel().tolist(),
        },
    }


# ------------------------------------------ multi-worker training with Estimator's model_fn
def _images(n, seed):
    rng = np.random.RandomState(seed)
    images = rng.uniform(0, 255, (n, 4, 4, 1)).round().astype(np.float32)
    return images, (images.mean(axis=(1, 2, 3)) // 86).astype(np.int64)


def _mnist_input_fn(tf, mode, input_context=None, contexts=None):
    """The tutorial's input_fn: scaled images, sharded by the input context's pipeline."""
    images, labels = _images(32, 1 if mode == tf.estimator.ModeKeys.TRAIN else 2)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))

    def scale(image, label):
        return tf.cast(image, tf.float32) / 255.0, label

    if input_context:
        if contexts is not None:
            contexts.append(
                [
                    str(mode),
                    input_context.num_input_pipelines,
                    input_context.input_pipeline_id,
                    input_context.num_replicas_in_sync,
                ]
            )
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    return dataset.map(scale).cache().batch(BATCH_SIZE)


def _mnist_model_fn(seen, fixed):
    """The tutorial's model_fn (a Keras Sequential on the images, SGD, the loss summed
    and scaled by the global batch); `fixed` passes `mode` where the tutorial passed
    `labels` to PREDICT's spec."""
    import tensorflow as tf

    def model_fn(features, labels, mode):
        strategy = _strategy_seen(tf, seen, mode)
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Flatten(input_shape=(4, 4, 1)),
                tf.keras.layers.Dense(8, activation="relu"),
                tf.keras.layers.Dense(3),
            ]
        )
        logits = model(features, training=False)
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {"logits": logits}
            if fixed:
                return tf.estimator.EstimatorSpec(mode, predictions=predictions)
            return tf.estimator.EstimatorSpec(labels=labels, predictions=predictions)
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.5)
        loss = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE
        )(labels, logits)
        loss = tf.reduce_sum(loss) * (1.0 / BATCH_SIZE) * (1.0 / strategy.num_replicas_in_sync)
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(mode, loss=loss)
        return tf.estimator.EstimatorSpec(
            mode=mode,
            loss=loss,
            train_op=optimizer.minimize(loss, tf.compat.v1.train.get_or_create_global_step()),
        )

    return model_fn


def _sequential_start(tf, workdir):
    shapes = {
        "dense/kernel": [16, 8],
        "dense/bias": [8],
        "dense_1/kernel": [8, 3],
        "dense_1/bias": [3],
    }
    return write_checkpoint(tf, os.path.join(workdir, "start"), shapes)


@program
def multi_worker_tutorial_model_fn(tf, workdir):
    """The tutorial's model_fn and input_fn under `tf.compat.v1.distribute.
    MirroredStrategy()` (training and evaluation) through `train_and_evaluate`; its
    PREDICT spec as written, then fixed: predict and export."""
    strategy = tf.compat.v1.distribute.MirroredStrategy()
    config = tf.estimator.RunConfig(
        train_distribute=strategy, eval_distribute=strategy, save_checkpoints_steps=4
    )
    model_dir = os.path.join(workdir, "multiworker")
    seen, contexts = [], []
    settings = {"model_dir": model_dir, "config": config}
    classifier = tf.estimator.Estimator(
        model_fn=_mnist_model_fn(seen, False),
        warm_start_from=_sequential_start(tf, workdir),
        **settings,
    )
    with _info_lines() as lines:
        metrics, exported = tf.estimator.train_and_evaluate(
            classifier,
            train_spec=tf.estimator.TrainSpec(
                input_fn=lambda input_context=None: _mnist_input_fn(
                    tf, tf.estimator.ModeKeys.TRAIN, input_context, contexts
                ),
                max_steps=6,
            ),
            eval_spec=tf.estimator.EvalSpec(
                input_fn=lambda input_context=None: _mnist_input_fn(
                    tf, tf.estimator.ModeKeys.EVAL, input_context, contexts
                ),
                steps=2,
            ),
        )

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices(_images(4, 3)[0] / 255.0).batch(4)

    as_written = _raised(lambda: classifier.predict(predict_input_fn))
    fixed = tf.estimator.Estimator(model_fn=_mnist_model_fn(seen, True), **settings)
    rows = list(fixed.predict(predict_input_fn))

    def serving_input_receiver_fn():
        images = tf.compat.v1.placeholder(tf.float32, [None, 4, 4, 1], name="images")
        return tf.estimator.export.TensorServingInputReceiver(images, {"images": images})

    export_dir = fixed.export_saved_model(
        os.path.join(workdir, "export"), serving_input_receiver_fn
    )
    shapes, values = _variables(fixed, skip="global_step")
    return {
        "exact": {
            "metrics_keys": sorted(metrics),
            "global_step": int(metrics["global_step"]),
            "exported": exported,
            "model_fn_saw": seen,
            "input_contexts": contexts,
            "lines": _user_lines(lines, workdir),
            "predict_as_written": as_written and as_written[:1],
            "predictions": structure(rows),
            "variables": shapes,
            "files": listing(model_dir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "signatures": signatures(export_dir.decode()),
        },
        "close": {
            **_floats({f"eval/{k}": v for k, v in metrics.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **{f"weights/{k}": v for k, v in values.items()},
        },
    }


# ------------------------------------------------- CentralStorageStrategy, OneDeviceStrategy
def _regression_model_fn(seen):
    """A Keras-layer model_fn under a TF1 Adam, its loss scaled by the replicas."""
    import tensorflow as tf

    def model_fn(features, labels, mode):
        strategy = _strategy_seen(tf, seen, mode)
        hidden = tf.keras.layers.Dense(4, activation="tanh", name="hidden")(features["x"])
        predictions = tf.keras.layers.Dense(1, name="output")(hidden)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions})
        loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
        loss = loss / strategy.num_replicas_in_sync
        train_op = tf.compat.v1.train.AdamOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)}
        return tf.estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metric_ops=metrics
        )

    return model_fn


def _regression_input_fn(tf, n=16):
    x = np.linspace(-1, 1, n * 2, dtype=np.float32).reshape(n, 2)
    y = (x @ np.array([[0.7], [-0.4]], dtype=np.float32) + 0.2).astype(np.float32)
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(BATCH_SIZE)


def _regression_start(tf, workdir):
    shapes = {"hidden/kernel": [2, 4], "hidden/bias": [4], "output/kernel": [4, 1]}
    shapes["output/bias"] = [1]
    return write_checkpoint(tf, os.path.join(workdir, "start"), shapes)


@program
def central_storage(tf, workdir):
    """`tf.distribute.experimental.CentralStorageStrategy()` training a Keras-layer
    model_fn under a TF1 Adam, compat.v1's evaluating it; predict."""
    start = _regression_start(tf, workdir)
    config = tf.estimator.RunConfig(
        train_distribute=tf.distribute.experimental.CentralStorageStrategy(),
        eval_distribute=tf.compat.v1.distribute.experimental.CentralStorageStrategy(),
    )
    seen = []
    model_dir = os.path.join(workdir, "central")
    model = tf.estimator.Estimator(
        _regression_model_fn(seen), model_dir=model_dir, config=config, warm_start_from=start
    )
    input_fn = _regression_input_fn(tf)
    with _info_lines() as lines:
        model.train(input_fn, steps=4)
        result = model.evaluate(input_fn, steps=2)
    rows = list(model.predict(lambda: input_fn().take(1)))
    names, values = _variables(model, skip="global_step")
    return {
        "exact": {
            "replicas": [config.train_distribute.num_replicas_in_sync],
            "eval_keys": sorted(result),
            "global_step": int(result["global_step"]),
            "model_fn_saw": seen,
            "lines": _user_lines(lines, workdir),
            "predictions": structure(rows),
            "variables": names,
            "files": listing(model_dir),
        },
        "close": {
            **_floats({f"eval/{k}": v for k, v in result.items()}),
            **{f"predict/{k}": v for k, v in _predictions(rows).items()},
            **{f"weights/{k}": v for k, v in values.items()},
        },
    }


@program
def one_device_linear_classifier(tf, workdir):
    """A `LinearClassifier` under `OneDeviceStrategy("/cpu:0")` for training and
    evaluation; predict and export."""
    x, y = _iris_like(16, 4)
    columns = [tf.feature_column.numeric_column("x", shape=[3])]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y % 2)).repeat().batch(BATCH_SIZE)

    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    config = tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    model_dir = os.path.join(workdir, "one_device")
    model = tf.estimator.LinearClassifier(columns, model_dir=model_dir, config=config)
    with _info_lines() as lines:
        model.train(input_fn, steps=3)
        result = model.evaluate(input_fn, steps=1)
    rows = list(model.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x[:3]}).batch(3)))
    exact, close = _canned_seen(tf, model, columns, workdir, lines, result, rows, skip="Ftrl")
    return {"exact": exact, "close": close}


@program
def compat_v1_canned_one_replica(tf, workdir):
    """`import tensorflow.compat.v1 as tf` code, whose `tf.estimator` classes are the V1
    canned ones: a `DNNLinearCombinedClassifier` warm-started from fixed weights under
    compat.v1's `MirroredStrategy()` (one CPU: one replica) for training and
    `OneDeviceStrategy("/cpu:0")` for evaluation; predict and export after (under no
    strategy)."""
    v1 = tf.compat.v1
    x, y = _iris_like(16, 2)
    deep = [v1.feature_column.numeric_column("x", shape=[3])]
    wide = [v1.feature_column.bucketized_column(deep[0], [-0.5, 0.0, 0.5])]
    start = _dnn_start(tf, workdir, logits=1)
    config = v1.estimator.RunConfig(
        train_distribute=v1.distribute.MirroredStrategy(),
        eval_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"),
    )
    model = v1.estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=wide,
        dnn_feature_columns=deep,
        dnn_hidden_units=[4],
        model_dir=os.path.join(workdir, "combined"),
        config=config,
        warm_start_from=v1.estimator.WarmStartSettings(start, vars_to_warm_start="dnn/"),
    )

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, (y > 1).astype(np.int64)))
        return dataset.repeat().batch(BATCH_SIZE)

    with _info_lines() as lines:
        model.train(input_fn, steps=3)
        result = model.evaluate(input_fn, steps=1)
    rows = list(model.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x[:3]}).batch(3)))
    exact, close = _canned_seen(tf, model, deep, workdir, lines, result, rows, skip="Adagrad|Ftrl")
    exact["lines"] = _user_lines(lines, workdir, ("Warm-start",))
    return {"exact": exact, "close": close}


def _two_headed_keras_model(tf):
    """A functional model of two inputs and two softmax outputs, a metric per output
    (a dict), a legacy SGD, its weights fixed."""
    first = tf.keras.layers.Input(shape=(4,), name="input_a")
    second = tf.keras.layers.Input(shape=(4,), name="input_b")
    shared = tf.keras.layers.Dense(3, activation="relu", name="shared")
    merged = tf.keras.layers.concatenate([shared(first), shared(second)], name="merge")
    kind = tf.keras.layers.Dense(3, activation="softmax", name="kind")(merged)
    side = tf.keras.layers.Dense(2, activation="softmax", name="side")(merged)
    model = tf.keras.Model(inputs=[first, second], outputs=[kind, side])
    model.compile(
        loss="categorical_crossentropy",
        optimizer=tf.keras.optimizers.legacy.SGD(learning_rate=0.1),
        metrics={"kind": "categorical_accuracy", "side": "categorical_accuracy"},
    )
    return _keras_start(model)


@program
def keras_model_to_estimator_mirrored(tf, workdir):
    """`tf.keras.estimator.model_to_estimator` given `RunConfig(train_distribute=
    MirroredStrategy(), eval_distribute=...)` (TF 1.x's distribution README, one CPU:
    one replica) for a model of two inputs and two outputs with a metric per output;
    evaluate before and after training, predict, export."""
    rng = np.random.RandomState(7)
    features = {"input_a": rng.rand(16, 4), "input_b": rng.rand(16, 4)}
    features = {k: v.astype(np.float32) for k, v in features.items()}
    labels = {
        "kind": np.eye(3, dtype=np.float32)[rng.randint(0, 3, 16)],
        "side": np.eye(2, dtype=np.float32)[rng.randint(0, 2, 16)],
    }
    strategy = tf.distribute.MirroredStrategy()
    config = tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    model_dir = os.path.join(workdir, "keras")
    model = tf.keras.estimator.model_to_estimator(
        keras_model=_two_headed_keras_model(tf),
        config=config,
        model_dir=model_dir,
        checkpoint_format="saver",  # (the kit's checkpoints are name-based either way)
    )

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(BATCH_SIZE)

    with _info_lines() as lines:
        before = model.evaluate(input_fn, steps=2)
        model.train(input_fn, steps=4)
        result = model.evaluate(input_fn, steps=2)
    rows = list(
        model.predict(lambda: tf.data.Dataset.from_tensor_slices(features).take(3).batch(3))
    )

    def receiver():
        inputs = {k: tf.compat.v1.placeholder(tf.float32, [None, 4], name=k) for k in features}
        return tf.estimator.export.ServingInputReceiver(inputs, inputs)

    export_dir = model.export_saved_model(os.path.join(workdir, "export"), receiver).decode()
    shapes, values = _variables(model)
    exact = {
        "eval_keys": [sorted(before), sorted(result)],
        "global_step": int(result["global_step"]),
        "lines": _canned_lines(lines, workdir),
        "predictions": structure(rows),
        "variables": shapes,
        "files": listing(model_dir),
        "signatures": signatures(export_dir),
    }
    close = {
        **_floats({f"before/{k}": v for k, v in before.items()}),
        **_floats({f"eval/{k}": v for k, v in result.items()}),
        **{f"predict/{k}": v for k, v in _predictions(rows).items()},
        **{f"weights/{k}": v for k, v in values.items()},
    }
    return {"exact": exact, "close": close}


def _keras_start(model):
    """Fixes a Keras model's weights (every model starts there, under 2.15 as here)."""
    model.set_weights(
        [
            np.linspace(-0.5, 0.5, w.size, dtype=np.float32).reshape(w.shape)
            for w in model.get_weights()
        ]
    )
    return model


def _keras_guide_estimator(tf, workdir):
    """TF 1.x's distribution README after tf_upgrade_v2: a one-input Dense(1) model
    compiled with `tf.compat.v1.train.GradientDescentOptimizer(0.2)`, under
    `RunConfig(train_distribute=MirroredStrategy())`, in the default checkpoint format."""
    inputs = tf.keras.layers.Input(shape=(1,))
    predictions = tf.keras.layers.Dense(1)(inputs)
    model = _keras_start(tf.keras.models.Model(inputs=inputs, outputs=predictions))
    model.compile(
        loss="mean_squared_error",
        optimizer=tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.2),
    )
    config = tf.estimator.RunConfig(train_distribute=tf.distribute.MirroredStrategy())
    estimator = tf.keras.estimator.model_to_estimator(
        keras_model=model, config=config, model_dir=os.path.join(workdir, "guide")
    )
    return estimator, model.input_names[0]


def _keras_tf1_adam(tf, workdir):
    """A two-layer model compiled with `tf.compat.v1.train.AdamOptimizer` and metrics,
    through `tf.compat.v1.keras.estimator.model_to_estimator` (name-based checkpoints)."""
    inputs = tf.keras.layers.Input(shape=(2,), name="x")
    hidden = tf.keras.layers.Dense(3, name="hidden")(inputs)
    output = tf.keras.layers.Dense(1, name="out")(hidden)
    model = _keras_start(tf.keras.Model(inputs=inputs, outputs=output))
    model.compile(
        loss="mse",
        optimizer=tf.compat.v1.train.AdamOptimizer(0.01),
        metrics=["mae", tf.keras.metrics.RootMeanSquaredError()],
    )
    return tf.compat.v1.keras.estimator.model_to_estimator(
        keras_model=model, model_dir=os.path.join(workdir, "adam")
    )


@program
def keras_model_to_estimator_tf1_optimizer(tf, workdir):
    """`model_to_estimator` of Keras models compiled with `tf.compat.v1.train`
    optimizers, as TF 1.x's guides compiled them: the distribution README's model (its
    input_fn: one example repeated, batches of 10) trained under `MirroredStrategy()`,
    evaluated before and after, predicted and served; a TF1 Adam with metrics,
    evaluated, trained, predicted, exported (variable names, checkpoint values)."""
    tf.keras.backend.clear_session()  # (the guide's layers are named by Keras's counters)
    guide, input_name = _keras_guide_estimator(tf, workdir)

    def guide_input_fn():
        dataset = tf.data.Dataset.from_tensors(({input_name: [1.0]}, [1.0]))
        return dataset.repeat(10).batch(10)

    before = guide.evaluate(guide_input_fn)
    guide.train(input_fn=guide_input_fn, steps=10)
    after = guide.evaluate(guide_input_fn)
    points = {input_name: np.array([[0.0], [1.0], [2.0]], np.float32)}
    rows = list(guide.predict(lambda: tf.data.Dataset.from_tensor_slices(points).batch(3)))

    adam = _keras_tf1_adam(tf, workdir)
    x = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0], [-1.0, -1.0]], np.float32)
    y = np.array([[1.0], [0.0], [2.0], [-1.0]], np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)

    with _info_lines() as lines:
        adam_before = adam.evaluate(input_fn, steps=1)
        adam.train(input_fn, steps=5)
        adam_after = adam.evaluate(input_fn, steps=1)
    adam_rows = list(adam.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(4)))

    def receiver():
        inputs = {"x": tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")}
        return tf.estimator.export.ServingInputReceiver(inputs, inputs)

    export_dir = adam.export_saved_model(os.path.join(workdir, "export"), receiver).decode()
    shapes, values = _variables(adam)
    keras_dir = os.path.join(adam.model_dir, "keras")
    exact = {
        "guide_eval_keys": [sorted(before), sorted(after)],
        "guide_global_step": int(after["global_step"]),
        "guide_predictions": structure(rows),
        "eval_keys": [sorted(adam_before), sorted(adam_after)],
        "lines": _canned_lines(lines, workdir),
        "predictions": structure(adam_rows),
        "variables": shapes,
        "keras_checkpoint": sorted(name for name, _ in tf.train.list_variables(keras_dir)),
        "files": listing(adam.model_dir),
        "signatures": signatures(export_dir),
    }
    close = {
        **_floats({f"guide_before/{k}": v for k, v in before.items()}),
        **_floats({f"guide_after/{k}": v for k, v in after.items()}),
        **{f"guide_predict/{k}": v for k, v in _predictions(rows).items()},
        **_floats({f"before/{k}": v for k, v in adam_before.items()}),
        **_floats({f"eval/{k}": v for k, v in adam_after.items()}),
        **{f"predict/{k}": v for k, v in _predictions(adam_rows).items()},
        **{f"weights/{k}": v for k, v in values.items()},
    }
    return {"exact": exact, "close": close}


# ------------------------------------------------------------- DistributeConfig's users
# tf.contrib.distribute.DistributeConfig (gone with tf.contrib): a namedtuple of these.
DistributeConfig = collections.namedtuple(
    "DistributeConfig", ["train_distribute", "eval_distribute", "remote_cluster"]
)
DistributeConfig.__new__.__defaults__ = (None, None, None)


def _strategies_of(config):
    return [
        type(config.train_distribute).__name__,
        type(config.eval_distribute).__name__,
    ]


@program
def distribute_config(tf, workdir):
    """`RunConfig(experimental_distribute=DistributeConfig(...))` as contrib's users
    wrote it, with `train_distribute` too, `replace`d, and converted to
    `RunConfig(train_distribute=...)`; what model_fn saw training under each."""
    strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0"])
    configs = {
        "contrib": tf.estimator.RunConfig(
            experimental_distribute=DistributeConfig(train_distribute=strategy)
        ),
        "contrib_both": tf.estimator.RunConfig(
            experimental_distribute=DistributeConfig(
                train_distribute=strategy, eval_distribute=strategy
            )
        ),
        "converted": tf.estimator.RunConfig(train_distribute=strategy),
    }
    configs["replaced"] = configs["contrib_both"].replace(save_summary_steps=7)
    both = _raised(
        lambda: tf.estimator.RunConfig(
            train_distribute=strategy,
            experimental_distribute=DistributeConfig(train_distribute=strategy),
        )
    )
    eval_both = _raised(
        lambda: tf.estimator.RunConfig(
            eval_distribute=strategy,
            experimental_distribute=DistributeConfig(eval_distribute=strategy),
        )
    )
    seen, trained = {}, {}
    for name in ("contrib_both", "converted"):
        seen[name] = []
        model = tf.estimator.Estimator(
            _regression_model_fn(seen[name]),
            model_dir=os.path.join(workdir, name),
            config=configs[name],
        )
        model.train(_regression_input_fn(tf), steps=2)
        trained[name] = model.evaluate(_regression_input_fn(tf), steps=1)
    return {
        "exact": {
            "strategies": {name: _strategies_of(config) for name, config in configs.items()},
            "same_strategy": [configs["contrib"].train_distribute is strategy],
            "summary_steps": configs["replaced"].save_summary_steps,
            "both": both,
            "eval_both": eval_both,
            "model_fn_saw": seen,
            "global_steps": {name: int(result["global_step"]) for name, result in trained.items()},
        },
    }


# ----------------------------------------------------------- what a strategy did not take
def _loud_hook(tf, calls):
    class Hook(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            calls.append("begin")

        def after_run(self, run_context, run_values):
            calls.append("after_run")

        def end(self, session):
            calls.append("end")

    return Hook()


@program
def strategy_misuse(tf, workdir):
    """Under `MirroredStrategy(devices=["/cpu:0"])`: an input_fn returning tensors (to a
    canned regressor's training and evaluation, to a TF1 model_fn's evaluation), a TF1
    `SessionRunHook` beside a canned regressor, and an `eval_distribute` alone."""
    strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0"])
    config = tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)

    def tensors_input_fn():
        return {"x": tf.constant(x)}, tf.constant(x[:, :1] * 2.0)

    def first_of(result):
        return result and result[:1]

    tensors = tf.estimator.LinearRegressor(
        columns, model_dir=os.path.join(workdir, "tensors"), config=config
    )
    from_tensors = {"train": first_of(_raised(lambda: tensors.train(tensors_input_fn, steps=2)))}
    calls = []
    hooked = tf.estimator.LinearRegressor(
        columns, model_dir=os.path.join(workdir, "hooked"), config=config
    )
    input_fn = _regression_input_fn(tf, n=8)
    hook = _raised(lambda: hooked.train(input_fn, steps=2, hooks=[_loud_hook(tf, calls)]))
    from_tensors["evaluate"] = first_of(_raised(lambda: hooked.evaluate(tensors_input_fn)))
    seen = []
    eval_only = tf.estimator.Estimator(
        _regression_model_fn(seen),
        model_dir=os.path.join(workdir, "eval_only"),
        config=tf.estimator.RunConfig(eval_distribute=strategy),
        warm_start_from=_regression_start(tf, workdir),
    )
    eval_only.train(input_fn, steps=2)
    result = eval_only.evaluate(input_fn, steps=1)
    from_tensors["model_fn"] = first_of(_raised(lambda: eval_only.evaluate(tensors_input_fn)))
    return {
        "exact": {
            "from_tensors": from_tensors,
            "tensors_files": listing(os.path.join(workdir, "tensors")),
            "hook": first_of(hook),
            "hook_calls": sorted(set(calls)),
            "hooked_step": hooked.get_variable_value("global_step").tolist()
            if hook is None
            else None,
            "model_fn_saw": seen,
            "eval_keys": sorted(result),
        },
        "close": _floats({f"eval/{k}": v for k, v in result.items()}),
    }


# ------------------------------------------------------------- AutoGraph under a strategy
def _doubled_when_positive(tf, x):
    """A user's helper with a Python `if` on a tensor."""
    if tf.reduce_sum(x) > 0:
        return x * 2.0
    return x


def _branching_model_fn(features, labels, mode):
    import tensorflow as tf

    weights = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
    predictions = _doubled_when_positive(tf, tf.matmul(features["x"], weights) + 1.0)
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def autograph_under_strategy(tf, workdir):
    """A TF1 model_fn whose helper branches on a tensor in Python, trained under
    `MirroredStrategy(devices=["/cpu:0"])` and under none."""

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": [[1.0, 2.0]]}, [[3.0]])).repeat(4)

    outcomes, weights = {}, {}
    for name, strategy in (
        ("mirrored", tf.distribute.MirroredStrategy(devices=["/cpu:0"])),
        ("none", None),
    ):
        model = tf.estimator.Estimator(
            _branching_model_fn,
            model_dir=os.path.join(workdir, name),
            config=tf.estimator.RunConfig(train_distribute=strategy),
        )
        outcomes[name] = _raised(lambda model=model: model.train(input_fn, steps=2))
        outcomes[name] = outcomes[name] and outcomes[name][:1]
        if outcomes[name] is None:
            weights[name] = model.get_variable_value("w").ravel().tolist()
    return {"exact": {"outcomes": outcomes}, "close": weights}
