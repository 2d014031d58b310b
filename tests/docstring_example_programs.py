"""Programs made of the usage examples in tf.estimator 2.15's own API docstrings, filled in
with tiny data: KMeans's training loop, MultiHead (its doctest, and a model_fn with
logits as a dict and concatenated), the parse-example-spec helpers feeding a
DNNClassifier (the docstring's `crossed_column(columns=...)` spelled `keys=`).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (keys, shapes, listings, names, signatures, errors) and `close`
values (1e-4); `tests/test_docstring_examples.py` compares them with 2.15's recording
(`tests/tf215/record_family.py docstring_example_programs`, into
`tests/data/tf215/docstring_examples.json`). Values come from models that start from
given centers or fixed numbers.
"""

import os

import numpy as np

from tests.tf1_fidelity_programs import _raised
from tests.tutorial_programs import listing, signatures

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "docstring_examples.json")

POINTS = np.array(
    [[1.0, 1.0], [1.5, 2.0], [8.0, 8.0], [9.0, 8.5], [0.5, 1.5], [8.5, 9.5]], np.float32
)


def _floats(value):
    return np.round(np.asarray(value, np.float64), 6).tolist()


def _rows(rows):
    """{prediction key: [dtype, shape]} of the first row, keys as text (MultiHead's are
    tuples)."""
    return {
        str(k): [np.asarray(v).dtype.name, list(np.shape(v))]
        for k, v in sorted(rows[0].items(), key=lambda kv: str(kv[0]))
    }


def _variables(estimator):
    return {n: estimator.get_variable_value(n).shape for n in estimator.get_variable_names()}


def _shapes(estimator):
    return {n: list(shape) for n, shape in sorted(_variables(estimator).items())}


def _last_export(export_base):
    (stamp,) = os.listdir(export_base)
    return os.path.join(export_base, stamp)


def kmeans_training_loop(tf, workdir):
    """KMeans's docstring: train one epoch at a time, print the centers' delta and the
    score, then each point's cluster (here from given initial centers)."""
    model_dir = os.path.join(workdir, "kmeans")

    def input_fn():
        return tf.compat.v1.train.limit_epochs(
            tf.convert_to_tensor(POINTS, dtype=tf.float32), num_epochs=1
        )

    kmeans = tf.compat.v1.estimator.experimental.KMeans(
        num_clusters=2,
        use_mini_batch=False,
        initial_clusters=np.array([[0.0, 0.0], [5.0, 0.0]], np.float32),
        model_dir=model_dir,
    )
    centers, scores, steps = [], [], []
    for _ in range(3):
        kmeans.train(input_fn)
        centers.append(_floats(kmeans.cluster_centers()))
        scores.append(float(kmeans.score(input_fn)))
        steps.append(int(kmeans.get_variable_value("global_step")))
    indices = list(kmeans.predict_cluster_index(input_fn))
    distances = list(kmeans.transform(input_fn))
    rows = list(kmeans.predict(input_fn))
    loaded = tf.train.load_variable(model_dir, kmeans.CLUSTER_CENTERS_VAR_NAME)
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"points": tf.zeros([1, 2], tf.float32)}
    )
    export = kmeans.export_saved_model(os.path.join(workdir, "export"), receiver)
    return {
        "exact": {
            "steps": steps,
            "cluster_indices": [int(i) for i in indices],
            "prediction_rows": _rows(rows),
            "variables": _shapes(kmeans),
            "constants": [
                kmeans.CLUSTER_CENTERS_VAR_NAME,
                kmeans.SCORE,
                kmeans.CLUSTER_INDEX,
                kmeans.ALL_DISTANCES,
            ],
            "model_dir": listing(model_dir),
            "signatures": signatures(export.decode() if isinstance(export, bytes) else export),
            "num_clusters_wrong": _raised(
                lambda: tf.compat.v1.estimator.experimental.KMeans(num_clusters=None)
            ),
        },
        "close": {
            "centers": centers,
            "scores": scores,
            "transform": _floats(distances),
            "loaded_centers": _floats(loaded),
        },
    }


def _two_heads(tf):
    head1 = tf.estimator.MultiClassHead(n_classes=3, name="head1")
    head2 = tf.estimator.BinaryClassHead(name="head2")
    return tf.estimator.MultiHead([head1, head2])


def _fixed_dense(tf, inputs, units, name):
    """A dense layer from fixed numbers (the values compare across versions)."""
    kernel = tf.compat.v1.get_variable(
        f"{name}/kernel",
        initializer=np.linspace(-0.5, 0.5, inputs.shape[-1] * units, dtype=np.float32).reshape(
            [inputs.shape[-1], units]
        ),
    )
    bias = tf.compat.v1.get_variable(f"{name}/bias", initializer=np.zeros([units], np.float32))
    return tf.matmul(inputs, kernel) + bias


def _sgd_step(loss):
    import tensorflow as tf

    return tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )


def multi_head_dict_model_fn(features, labels, mode):
    import tensorflow as tf

    head = _two_heads(tf)
    logits1 = _fixed_dense(tf, features["x"], 3, "logits1")
    logits2 = _fixed_dense(tf, features["x"], 1, "logits2")
    return head.create_estimator_spec(
        features=features,
        mode=mode,
        logits={"head1": logits1, "head2": logits2},
        labels=labels,
        train_op_fn=_sgd_step,
    )


def multi_head_concat_model_fn(features, labels, mode):
    import tensorflow as tf

    head = _two_heads(tf)
    logits = _fixed_dense(tf, features["x"], head.logits_dimension, "logits")
    return head.create_estimator_spec(
        features=features,
        mode=mode,
        logits=logits,
        labels=labels,
        train_op_fn=_sgd_step,
    )


def _multi_head_input_fn(tf):
    features = {"x": tf.constant([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -1.0]])}
    labels = {
        "head1": tf.constant([[0], [1], [2], [1]]),
        "head2": tf.constant([[1], [0], [1], [0]]),
    }
    return features, labels


def _multi_head_program(model_fn):
    def program(tf, workdir):
        """MultiHead's docstring: a model_fn whose logits feed a MultiClassHead and a
        BinaryClassHead; labels a dict keyed by head name."""
        model_dir = os.path.join(workdir, "multi")
        estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)
        estimator.train(input_fn=lambda: _multi_head_input_fn(tf), steps=3)
        metrics = estimator.evaluate(input_fn=lambda: _multi_head_input_fn(tf), steps=1)
        rows = list(
            estimator.predict(
                input_fn=lambda: tf.data.Dataset.from_tensors(_multi_head_input_fn(tf)[0])
            )
        )
        receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
            {"x": tf.zeros([1, 2], tf.float32)}
        )
        export = estimator.export_saved_model(os.path.join(workdir, "export"), receiver)
        return {
            "exact": {
                "metric_keys": sorted(metrics),
                "prediction_rows": _rows(rows),
                "model_dir": listing(model_dir),
                "signatures": signatures(export.decode() if isinstance(export, bytes) else export),
                "unlabelled_head": _raised(
                    lambda: estimator.train(
                        input_fn=lambda: (
                            _multi_head_input_fn(tf)[0],
                            {"head1": tf.constant([[0], [1], [2], [1]])},
                        ),
                        steps=1,
                    )
                ),
            },
            "close": {
                "metrics": {k: float(v) for k, v in sorted(metrics.items()) if k != "global_step"},
                "rows": {
                    str(k): _floats([r[k] for r in rows])
                    for k in sorted(rows[0], key=str)
                    if np.asarray(rows[0][k]).dtype.kind == "f"
                },
            },
        }

    return program


def multi_head_doctest(tf, workdir):
    """MultiHead's doctest: two MultiLabelHeads' loss, metrics and predictions, eagerly."""
    head1 = tf.estimator.MultiLabelHead(n_classes=2, name="head1")
    head2 = tf.estimator.MultiLabelHead(n_classes=3, name="head2")
    multi_head = tf.estimator.MultiHead([head1, head2])
    logits = {
        "head1": np.array([[-10.0, 10.0], [-15.0, 10.0]], dtype=np.float32),
        "head2": np.array([[20.0, -20.0, 20.0], [-30.0, 20.0, -20.0]], dtype=np.float32),
    }
    labels = {
        "head1": np.array([[1, 0], [1, 1]], dtype=np.int64),
        "head2": np.array([[0, 1, 0], [1, 1, 0]], dtype=np.int64),
    }
    features = {"x": np.array(((42,),), dtype=np.float32)}
    loss = multi_head.loss(labels, logits, features=features)
    updated = multi_head.update_metrics(multi_head.metrics(), features, logits, labels)
    printed = [f"{k} : {updated[k].result().numpy():.2f}" for k in sorted(updated)]
    preds = multi_head.predictions(logits)
    return {
        "exact": {
            "loss": f"{loss.numpy():.2f}",
            "metrics": printed,
            "prediction_keys": sorted(str(k) for k in preds),
            "logits_dimension": multi_head.logits_dimension,
            "unnamed_head": _raised(
                lambda: tf.estimator.MultiHead([tf.estimator.MultiLabelHead(n_classes=2)])
            ),
        },
        "close": {"head1_logits": _floats(preds[("head1", "logits")])},
    }


def parse_example_specs(tf, workdir):
    """classifier_parse_example_spec's docstring: the spec of a numeric, a bucketized and a
    crossed column with a string label; regressor_parse_example_spec's; a DNNClassifier
    with a label vocabulary and weight column reading tf.Examples parsed by it."""
    feature_b = tf.feature_column.numeric_column("feature_b")
    feature_c_bucketized = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("feature_c"), [0.0, 1.0]
    )
    feature_a_x_feature_c = tf.feature_column.crossed_column(
        keys=["feature_a", feature_c_bucketized], hash_bucket_size=10
    )
    columns = [feature_b, feature_c_bucketized, feature_a_x_feature_c]
    spec = tf.estimator.classifier_parse_example_spec(
        columns, label_key="my-label", label_dtype=tf.string, weight_column="example-weight"
    )
    regressor_spec = tf.estimator.regressor_parse_example_spec(
        columns, label_key="price", label_dimension=2, weight_column="w"
    )
    path = os.path.join(workdir, "train.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for i, (a, b, c, label) in enumerate(
            [(b"x", 1.0, 0.5, b"photos"), (b"y", 2.0, 1.5, b"keep"), (b"x", 0.5, -1.0, b"keep")]
        ):
            feature = tf.train.Features(
                feature={
                    "feature_a": tf.train.Feature(bytes_list=tf.train.BytesList(value=[a])),
                    "feature_b": tf.train.Feature(float_list=tf.train.FloatList(value=[b])),
                    "feature_c": tf.train.Feature(float_list=tf.train.FloatList(value=[c])),
                    "my-label": tf.train.Feature(bytes_list=tf.train.BytesList(value=[label])),
                    "example-weight": tf.train.Feature(
                        float_list=tf.train.FloatList(value=[1.0 + i])
                    ),
                }
            )
            writer.write(tf.train.Example(features=feature).SerializeToString())

    def input_fn_train():
        dataset = tf.data.TFRecordDataset(path).batch(3)
        dataset = dataset.map(lambda records: tf.io.parse_example(records, spec))
        return dataset.map(lambda features: (features, features.pop("my-label")))

    dnn_columns = [feature_b, tf.feature_column.indicator_column(feature_a_x_feature_c)]
    model_dir = os.path.join(workdir, "dnn")
    estimator = tf.estimator.DNNClassifier(
        n_classes=3,
        feature_columns=dnn_columns,
        weight_column="example-weight",
        label_vocabulary=["photos", "keep", "other"],
        hidden_units=[4, 2],
        model_dir=model_dir,
    )
    estimator.train(input_fn=input_fn_train, steps=2)
    metrics = estimator.evaluate(input_fn=input_fn_train, steps=1)
    return {
        "exact": {
            "spec": {k: repr(v) for k, v in sorted(spec.items())},
            "regressor_spec": {k: repr(v) for k, v in sorted(regressor_spec.items())},
            "metric_keys": sorted(metrics),
            "variables": _shapes(estimator),
            "label_in_features": _raised(
                lambda: tf.estimator.classifier_parse_example_spec(columns, label_key="feature_b")
            ),
            "weight_is_label": _raised(
                lambda: tf.estimator.regressor_parse_example_spec(
                    columns, label_key="w", weight_column="w"
                )
            ),
            "bad_dimension": _raised(
                lambda: tf.estimator.regressor_parse_example_spec(
                    columns, label_key="price", label_dimension=0
                )
            ),
        },
        "close": {},
    }


def _batches_in_a_session(tf, input_fn, monitored):
    """Every batch `input_fn()`'s tensors give in a TF1 graph, read by a plain session
    (its queue runners started, as TF1 code did) or by a MonitoredSession."""
    batches = []
    with tf.Graph().as_default():
        tensors = input_fn()
        if monitored:
            session = tf.compat.v1.train.MonitoredSession()
        else:
            session = tf.compat.v1.Session()
            tf.compat.v1.train.start_queue_runners(session)
        with session:
            while True:
                try:
                    batch = session.run(tensors)
                except tf.errors.OutOfRangeError:
                    break
                batches.append(batch)
                if monitored and session.should_stop():
                    break
    features, labels = zip(*batches, strict=True)
    return {
        "batch_sizes": [len(label) for label in labels],
        **{k: _floats(np.concatenate([f[k] for f in features])) for k in sorted(features[0])},
        "labels": _floats(np.concatenate(labels)),
    }


def input_fns_in_a_session(tf, workdir):
    """numpy_input_fn's docstring example (and pandas_input_fn's, shaped like it): the
    input_fn called by the program's own code in a TF1 graph and its tensors run in a
    session, batch by batch until the data ends (the kit returned a Dataset there)."""
    import pandas as pd

    age = np.arange(4) * 1.0
    height = np.arange(32, 36)
    x = {"age": age, "height": height}
    y = np.arange(-32, -28)
    numpy_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x, y, batch_size=2, shuffle=False, num_epochs=1
    )
    frame = pd.DataFrame(x, index=[10, 11, 12, 13])
    pandas_fn = tf.compat.v1.estimator.inputs.pandas_input_fn(
        frame, pd.Series(y, index=frame.index), batch_size=3, shuffle=False, num_epochs=1
    )
    read = {
        "numpy_session": _batches_in_a_session(tf, numpy_fn, monitored=False),
        "numpy_monitored": _batches_in_a_session(tf, numpy_fn, monitored=True),
        "pandas_session": _batches_in_a_session(tf, pandas_fn, monitored=False),
    }
    return {
        "exact": {name: values.pop("batch_sizes") for name, values in read.items()},
        "close": read,
    }


PROGRAMS = {
    "kmeans_training_loop": kmeans_training_loop,
    "multi_head_dict_logits": _multi_head_program(multi_head_dict_model_fn),
    "multi_head_concatenated_logits": _multi_head_program(multi_head_concat_model_fn),
    "multi_head_doctest": multi_head_doctest,
    "parse_example_specs": parse_example_specs,
    "input_fns_in_a_session": input_fns_in_a_session,
}
