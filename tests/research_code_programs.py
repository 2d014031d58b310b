"""Research and production repositories' Estimator code the other families leave out, as
`tf_upgrade_v2` leaves it, on tiny made-up data; the libraries' own code is written out
here in its shape (they are not installed on either side):

- `tf_ranking_groupwise`: tensorflow/ranking 0.x's `tfr_tfrecord` example over
  `tfr.model.make_groupwise_ranking_fn` and `tfr.head.create_ranking_head`: a transform_fn
  encoding context and per-example features through `tf.compat.v1.keras.layers.DenseFeatures`
  (not trainable outside training) with [batch, list, ...] features flattened and back,
  the groupwise model's `infer_sizes` / `gather_nd` / `scatter_nd` / `div_no_nan` under its
  name scopes, a score_fn of `tf.compat.v1.layers` with batch norm and its summaries in the
  `group_score` variable scope, the model_fn adding the transformed tensors to `features`,
  the head's specs (a tensor of predictions in every mode; a softmax loss over valid
  entries, `metric/...` means and `labels_mean` / `logits_mean`; regression, regression
  and predict export outputs), a TF1 Adagrad made before the Estimator and grouped with
  UPDATE_OPS, `train_and_evaluate` with an EvalSpec named `eval` given one
  `LatestExporter` of a parsing receiver (tf.Example, group size 1), and
  `tfr.estimator.GAMEstimatorBuilder`'s signatures added to the spec's `export_outputs`
  after it was made;
- `tf_lattice_canned_classifier`: tensorflow/lattice 2.x's `tfl.estimators.CannedClassifier`
  (a calibrated linear model): its feature analysis (the input read by a
  `SingularMonitoredSession` in a graph of its own, quantiles written to
  `model_dir/keypoints.json`), `transform_features` (feature columns'
  `_transform_feature`), a Keras functional model of `tf.keras.Input`s, piecewise-linear
  and categorical calibration layers and a linear layer whose weights have Keras
  constraints, `BinaryClassHead.create_estimator_spec` given a legacy Keras Adagrad whose
  `iterations` is the global step, the model's trainable variables, `model.updates` and
  losses, and `tfl.estimators.get_model_graph`'s reading of the export (loaded in a
  session, its calibrators and linear weights found by op name).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (listings, variable names, keys, tags, signatures, op names, log
lines: equal) and `close` values (models that start from fixed values, fed in file order:
1e-4). `tests/test_research_code.py` compares them with 2.15's recording
(`tests/tf215/record_family.py research_code_programs`, into
`tests/data/tf215/research_code.json`).
"""

import itertools
import os

import numpy as np

from tests.program_registry import registry
from tests.public_code_programs import _floats, _kept_lines
from tests.tf1_fidelity_programs import _info_lines, _normalized
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "research_code.json")
PROGRAMS, program = registry()


def _event_tags(folder):
    import tensorflow as tf

    tags = set()
    for name in sorted(os.listdir(folder)):
        if name.startswith("events."):
            for event in tf.compat.v1.train.summary_iterator(os.path.join(folder, name)):
                for value in event.summary.value:
                    tags.add(value.tag)
    return sorted(tags)


# --- tensorflow/ranking 0.x: tfr.estimator's groupwise model_fn and ranking head ---

_LIST = 3


def _ranking_columns(tf):
    context = {"query_length": tf.feature_column.numeric_column("query_length", (1,))}
    example = {
        "doc_score": tf.feature_column.numeric_column("doc_score", (1,)),
        "doc_kind": tf.feature_column.embedding_column(
            tf.feature_column.categorical_column_with_vocabulary_list("doc_kind", ["a", "b"]),
            2,
            initializer=tf.compat.v1.constant_initializer(0.1),
        ),
    }
    return context, example


def _ranking_data():
    rows = 4
    query = (np.arange(rows, dtype=np.float32) / rows).reshape(rows, 1)
    score = (np.arange(rows * _LIST, dtype=np.float32) % 5 / 5.0).reshape(rows, _LIST, 1)
    kind = np.array([["a", "b", "a"], ["b", "a", "b"]] * 2).reshape(rows, _LIST, 1)
    labels = np.array([[1, 0, -1], [0, 2, 1], [1, 1, 0], [2, 0, 0]], np.float32)
    return {"query_length": query, "doc_score": score, "doc_kind": kind}, labels


def _reshape_first_ndims(tf, tensor, first_ndims, new_shape):
    shape = tf.shape(input=tensor)
    return tf.reshape(tensor, tf.concat([new_shape, shape[first_ndims:]], 0))


def _encode_features(tf, features, columns, mode):
    cols_to_tensors = {}
    layer = tf.compat.v1.keras.layers.DenseFeatures(
        feature_columns=columns,
        name="encoding_layer",
        trainable=mode == tf.estimator.ModeKeys.TRAIN,
    )
    layer(features, cols_to_output_tensors=cols_to_tensors)
    return cols_to_tensors


def _ranking_transform_fn(tf):
    def transform_fn(features, mode):
        context_columns, example_columns = _ranking_columns(tf)
        if mode == tf.estimator.ModeKeys.PREDICT:  # tf.Example served: group_size 1
            columns = list(context_columns.values()) + list(example_columns.values())
            encoded = _encode_features(tf, features, columns, mode)
            context = {name: encoded[col] for name, col in context_columns.items()}
            example = {
                name: tf.expand_dims(encoded[col], 1) for name, col in example_columns.items()
            }
            return context, example
        encoded = _encode_features(tf, features, list(context_columns.values()), mode)
        context = {name: encoded[col] for name, col in context_columns.items()}
        specs = tf.feature_column.make_parse_example_spec(list(example_columns.values()))
        first = next(iter(specs))
        batch = tf.shape(input=features[first])[0]
        size = tf.shape(input=features[first])[1]
        reshaped = {
            name: _reshape_first_ndims(tf, features[name], 2, [batch * size]) for name in specs
        }
        encoded = _encode_features(tf, reshaped, list(example_columns.values()), mode)
        example = {
            name: _reshape_first_ndims(tf, encoded[col], 1, [batch, size])
            for name, col in example_columns.items()
        }
        return context, example

    return transform_fn


def _ranking_score_fn(tf):
    def score_fn(context_features, group_features, mode, params, config):
        del params, config
        with tf.compat.v1.name_scope("input_layer"):
            context_input = [
                tf.compat.v1.layers.flatten(context_features[n]) for n in sorted(context_features)
            ]
            group_input = [
                tf.compat.v1.layers.flatten(group_features[n]) for n in sorted(group_features)
            ]
            input_layer = tf.concat(context_input + group_input, 1)
            tf.compat.v1.summary.scalar("input_sparsity", tf.nn.zero_fraction(input_layer))
        is_training = mode == tf.estimator.ModeKeys.TRAIN
        cur = tf.compat.v1.layers.batch_normalization(input_layer, training=is_training)
        cur = tf.compat.v1.layers.dense(
            cur, units=4, kernel_initializer=tf.compat.v1.constant_initializer(0.05)
        )
        cur = tf.nn.relu(tf.compat.v1.layers.batch_normalization(cur, training=is_training))
        tf.compat.v1.summary.scalar("fully_connected_0_sparsity", tf.nn.zero_fraction(cur))
        cur = tf.compat.v1.layers.dropout(cur, rate=0.0, training=is_training)
        return tf.compat.v1.layers.dense(
            cur, units=1, kernel_initializer=tf.compat.v1.constant_initializer(0.1)
        )

    return score_fn


class _GroupwiseModel:
    """tfr.model._GroupwiseRankingModel with group_size=1 (its gather and scatter)."""

    def __init__(self, tf, score_fn, transform_fn):
        self.tf, self.score_fn, self.transform_fn = tf, score_fn, transform_fn

    def compute_logits(self, features, labels, mode, params, config):
        tf = self.tf
        with tf.compat.v1.name_scope("transform"):
            context, example = self.transform_fn(features, mode)
        with tf.compat.v1.name_scope("groupwise_dnn_v2"):
            with tf.compat.v1.name_scope("infer_sizes"):
                if labels is not None:
                    batch, size = tf.unstack(tf.shape(input=labels))
                    is_valid = tf.greater_equal(labels, 0.0)
                else:
                    shape = tf.shape(input=next(iter(example.values())))
                    batch, size = shape[0], shape[1]
                    is_valid = tf.ones([batch, size], tf.bool)
            rows = tf.tile(tf.expand_dims(tf.range(batch), 1), [1, size])
            cols = tf.tile(tf.expand_dims(tf.range(size), 0), [batch, 1])
            gather = tf.expand_dims(tf.stack([rows, cols], 2), 2)  # [b, groups, 1, 2]
            mask = is_valid
            with tf.compat.v1.name_scope("group_features"):
                ctx = {
                    n: _reshape_first_ndims(
                        tf, tf.repeat(tf.expand_dims(v, 1), [size], 1), 2, [batch * size]
                    )
                    for n, v in context.items()
                }
                grp = {
                    n: _reshape_first_ndims(tf, tf.gather_nd(v, gather), 3, [batch * size, 1])
                    for n, v in example.items()
                }
            with tf.compat.v1.variable_scope("group_score"):
                scores = self.score_fn(ctx, grp, mode, params, config)
            with tf.compat.v1.name_scope("accumulate_scores"):
                scores_mask = tf.expand_dims(mask, 2)
                counts = tf.scatter_nd(gather, tf.cast(scores_mask, tf.float32), [batch, size])
                scores = tf.reshape(scores, tf.shape(input=gather)[0:3])
                scores = tf.compat.v1.where(scores_mask, scores, tf.zeros_like(scores))
                logits = tf.compat.v1.div_no_nan(
                    tf.scatter_nd(gather, scores, [batch, size]), counts
                )
        if mode != tf.estimator.ModeKeys.PREDICT:
            features.update(context)
            features.update(example)
        return logits


def _softmax_loss(tf):
    def loss_fn(labels, logits, features):
        del features
        valid = tf.greater_equal(labels, 0.0)
        labels = tf.compat.v1.where(valid, labels, tf.zeros_like(labels))
        logits = tf.compat.v1.where(valid, logits, -1e3 * tf.ones_like(logits))
        sums = tf.reduce_sum(labels, 1, keepdims=True)
        weights = tf.reshape(tf.reduce_sum(labels, 1), [-1])
        labels = tf.compat.v1.math.divide_no_nan(labels, sums)
        return tf.compat.v1.losses.softmax_cross_entropy(
            labels,
            logits,
            weights=weights,
            reduction=tf.compat.v1.losses.Reduction.SUM_BY_NONZERO_WEIGHTS,
        )

    return loss_fn


def _mrr_metric(tf, topn):
    def metric_fn(labels, predictions, features):
        del features
        valid = tf.greater_equal(labels, 0.0)
        scores = tf.compat.v1.where(valid, predictions, -1e6 * tf.ones_like(predictions))
        order = tf.argsort(scores, axis=1, direction="DESCENDING", stable=True)
        ranked = tf.gather(labels, order, batch_dims=1)[:, :topn]
        relevant = tf.cast(ranked > 0, tf.float32)
        ranks = tf.cast(tf.range(1, tf.shape(ranked)[1] + 1), tf.float32)
        rr = tf.reduce_max(relevant / ranks, axis=1)
        weights = tf.cast(tf.reduce_any(labels > 0, axis=1), tf.float32)
        return tf.compat.v1.metrics.mean(rr, weights)

    return metric_fn


class _RankingHead:
    """tfr.head._RankingHead: its specs, metrics and exports."""

    def __init__(self, tf, loss_fn, eval_metric_fns, train_op_fn):
        self.tf, self.loss_fn = tf, loss_fn
        self.eval_metric_fns, self.train_op_fn = eval_metric_fns, train_op_fn

    def create_estimator_spec(self, features, mode, logits, labels=None):
        tf = self.tf
        logits = tf.convert_to_tensor(value=logits)
        with tf.compat.v1.name_scope(None, "head"):
            if mode == tf.estimator.ModeKeys.PREDICT:
                return tf.estimator.EstimatorSpec(
                    mode=mode,
                    predictions=logits,
                    export_outputs={
                        "serving_default": tf.estimator.export.RegressionOutput(logits),
                        "regression": tf.estimator.export.RegressionOutput(logits),
                        "predict": tf.estimator.export.PredictOutput(logits),
                    },
                )
            labels = tf.cast(labels, tf.float32)
            loss = self.loss_fn(labels, logits, features)
            if mode == tf.estimator.ModeKeys.EVAL:
                ops = {
                    name: fn(labels=labels, predictions=logits, features=features)
                    for name, fn in self.eval_metric_fns.items()
                }
                valid = tf.reshape(tf.greater_equal(labels, 0.0), [-1])
                for name, tensor in [("labels_mean", labels), ("logits_mean", logits)]:
                    ops[name] = tf.compat.v1.metrics.mean(
                        tf.boolean_mask(tensor=tf.reshape(tensor, [-1]), mask=valid)
                    )
                return tf.estimator.EstimatorSpec(
                    mode=mode, predictions=logits, loss=loss, eval_metric_ops=ops
                )
            return tf.estimator.EstimatorSpec(
                mode=mode, loss=loss, train_op=self.train_op_fn(loss), predictions=logits
            )


def _ranking_estimator(tf, model_dir, subscores=False):
    optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=0.1)

    def train_op_fn(loss):
        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        minimize_op = optimizer.minimize(
            loss=loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return tf.group([minimize_op, update_ops])

    metrics = {f"metric/mrr@{n}": _mrr_metric(tf, n) for n in (1, 3)}
    head = _RankingHead(tf, _softmax_loss(tf), metrics, train_op_fn)
    model = _GroupwiseModel(tf, _ranking_score_fn(tf), _ranking_transform_fn(tf))

    def model_fn(features, labels, mode, params, config):
        logits = model.compute_logits(features, labels, mode, params, config)
        spec = head.create_estimator_spec(
            features=features, mode=mode, logits=logits, labels=labels
        )
        if subscores and mode == tf.estimator.ModeKeys.PREDICT:
            # tfr.estimator.GAMEstimatorBuilder: signatures added to the spec's export_outputs.
            graph = tf.compat.v1.get_default_graph()
            added = {}
            for node in graph.as_graph_def().node:
                if node.name.endswith("input_sparsity"):
                    added["input_sparsity"] = tf.estimator.export.PredictOutput(
                        graph.get_tensor_by_name(node.name + ":0")
                    )
            spec.export_outputs.update(added)
        return spec

    config = tf.estimator.RunConfig(save_checkpoints_steps=4, keep_checkpoint_max=2)
    return tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir, config=config)


def _input_fn(tf, data, batch, repeat):
    """An input_fn of `data()`'s (features, labels) in batches of `batch`, repeated or once."""
    features, labels = data()

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(batch)
        return dataset.repeat() if repeat else dataset

    return input_fn


def _ranking_input_fn(tf, repeat):
    return _input_fn(tf, _ranking_data, 2, repeat)


def _ranking_serving_fn(tf):
    context_columns, example_columns = _ranking_columns(tf)
    spec = tf.feature_column.make_parse_example_spec(
        list(context_columns.values()) + list(example_columns.values())
    )
    parsing = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)

    return parsing


@program
def tf_ranking_groupwise(tf, workdir):
    model_dir = os.path.join(workdir, "ranking")
    est = _ranking_estimator(tf, model_dir)
    train_spec = tf.estimator.TrainSpec(input_fn=_ranking_input_fn(tf, True), max_steps=6)
    exporter = tf.estimator.LatestExporter(
        "saved_model_exporter", serving_input_receiver_fn=_ranking_serving_fn(tf)
    )
    eval_spec = tf.estimator.EvalSpec(
        name="eval",
        input_fn=_ranking_input_fn(tf, False),
        steps=1,
        exporters=exporter,
        start_delay_secs=0,
        throttle_secs=15,
    )
    with _info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(est, train_spec, eval_spec)
    features, _ = _ranking_data()
    pointwise = {k: v[:, 0] for k, v in features.items() if k != "query_length"}
    pointwise["query_length"] = features["query_length"]
    predictions = [
        p.tolist()
        for p in est.predict(lambda: tf.data.Dataset.from_tensor_slices(pointwise).batch(2))
    ]
    export_root = os.path.join(model_dir, "export", "saved_model_exporter")
    export_dir = os.path.join(export_root, sorted(os.listdir(export_root))[0])
    loaded = tf.saved_model.load(export_dir)
    signatures = {
        key: [
            sorted(fn.structured_input_signature[1]),
            sorted(fn.structured_outputs),
        ]
        for key, fn in sorted(loaded.signatures.items())
    }
    gam = _ranking_estimator(tf, model_dir, subscores=True)
    gam_dir = gam.export_saved_model(os.path.join(workdir, "gam"), _ranking_serving_fn(tf))
    gam_keys = sorted(tf.saved_model.load(gam_dir).signatures.keys())
    return {
        "exact": {
            "listing": listing(model_dir),
            "variables": sorted(est.get_variable_names()),
            "evaluate_keys": sorted(metrics),
            "exports": [_normalized(str(e), workdir) for e in (exports or [])],
            "signatures": signatures,
            "gam_signatures": gam_keys,
            "train_tags": _event_tags(model_dir),
            "eval_tags": _event_tags(os.path.join(model_dir, "eval_eval")),
            "lines": _kept_lines(
                lines,
                workdir,
                "Saving checkpoints",
                "Loss for",
                "Saving dict",
                "Signatures",
                "Export",
                "global step",
            ),
        },
        "close": {"metrics": _floats(metrics), "predictions": predictions},
    }


# --- tensorflow/lattice 2.x: tfl.estimators.CannedClassifier (a calibrated linear model) ---


def _tfl_layers(tf):
    """Vendored shapes of tfl's PWLCalibration and Linear layers and their constraints."""

    class Monotonic(tf.keras.constraints.Constraint):
        def __call__(self, w):  # deltas after the first kept non-negative
            return tf.concat([w[:1], tf.nn.relu(w[1:])], 0)

    class PWLCalibration(tf.keras.layers.Layer):
        def __init__(self, input_keypoints, **kwargs):
            super().__init__(**kwargs)
            self.input_keypoints = [float(k) for k in input_keypoints]

        def build(self, input_shape):
            keys = self.input_keypoints
            self._interpolation_keypoints = tf.constant(keys[:-1], name="interpolation_keypoints")
            lengths = [b - a for a, b in itertools.pairwise(keys)]
            self._lengths = tf.constant(lengths, name="lengths")
            init = [[0.0]] + [[1.0 / len(lengths)]] * len(lengths)
            self.kernel = self.add_weight(
                "pwl_calibration_kernel",
                shape=[len(keys), 1],
                initializer=tf.constant_initializer(init),
                constraint=Monotonic(),
            )
            super().build(input_shape)

        def call(self, inputs):
            parts = tf.clip_by_value(
                (inputs - self._interpolation_keypoints) / self._lengths, 0.0, 1.0
            )
            ones = tf.ones_like(inputs)
            return tf.matmul(tf.concat([ones, parts], 1), self.kernel)

    class CategoricalCalibration(tf.keras.layers.Layer):
        def __init__(self, num_buckets, **kwargs):
            super().__init__(**kwargs)
            self.num_buckets = num_buckets

        def build(self, input_shape):
            self.kernel = self.add_weight(
                "categorical_calibration_kernel",
                shape=[self.num_buckets, 1],
                initializer=tf.constant_initializer(0.25),
            )
            super().build(input_shape)

        def call(self, inputs):
            return tf.gather(self.kernel, tf.reshape(tf.cast(inputs, tf.int32), [-1]))

    class Linear(tf.keras.layers.Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight(
                "linear_layer_kernel",
                shape=[int(input_shape[-1]), 1],
                initializer=tf.constant_initializer(0.5),
                constraint=tf.keras.constraints.NonNeg(),
            )
            self.bias = self.add_weight(
                "linear_layer_bias", shape=[], initializer=tf.constant_initializer(0.0)
            )
            super().build(input_shape)

        def call(self, inputs):
            return tf.matmul(inputs, self.kernel) + self.bias

    return PWLCalibration, CategoricalCalibration, Linear


def _tfl_transform_features(tf, features, feature_columns):
    """tfl.estimators.transform_features: each column's own tensor, under 'transform'."""
    import collections

    with tf.name_scope("transform"):
        parsed = collections.OrderedDict()
        for column in feature_columns:
            if hasattr(column, "num_oov_buckets"):
                default = column.num_buckets - 1 if column.num_oov_buckets else column.default_value
                parsed[column.name] = tf.reshape(
                    tf.sparse.to_dense(column._transform_feature(features), default_value=default),
                    shape=[-1, 1],
                )
            else:
                parsed[column.name] = column._transform_feature(features)
    return parsed


def _tfl_columns(tf):
    return [
        tf.feature_column.numeric_column("age"),
        tf.feature_column.categorical_column_with_vocabulary_list(
            "thal", ["fixed", "normal", "reversible"]
        ),
    ]


def _tfl_data():
    age = np.array([29.0, 41, 52, 60, 35, 67, 48, 55], np.float32)
    thal = np.array(
        ["fixed", "normal", "reversible", "normal", "fixed", "reversible", "normal", "fixed"]
    )
    labels = np.array([0, 0, 1, 1, 0, 1, 0, 1], np.int64)
    return {"age": age, "thal": thal}, labels


def _tfl_input_fn(tf, repeat):
    return _input_fn(tf, _tfl_data, 4, repeat)


def _tfl_keypoints(tf, feature_columns, input_fn, model_dir):
    """tfl's feature analysis: the input read in a graph of its own by a
    SingularMonitoredSession, quantiles written to model_dir/keypoints.json."""
    import json

    with tf.Graph().as_default():
        features, labels = tf.compat.v1.data.make_one_shot_iterator(input_fn()).get_next()
        values = _tfl_transform_features(tf, features, feature_columns)
        values["__label__"] = labels
        splits = []
        with tf.compat.v1.train.SingularMonitoredSession() as sess:
            try:
                while True:
                    splits.append(sess.run(values))
            except (tf.errors.OutOfRangeError, StopIteration):
                pass
    ages = np.concatenate([s["age"] for s in splits]).flatten()
    keypoints = {"age": [float(q) for q in np.quantile(ages, [0.0, 0.5, 1.0])]}
    tf.io.gfile.makedirs(model_dir)
    path = os.path.join(model_dir, "keypoints.json")
    with tf.io.gfile.GFile(path + "tmp", "w") as f:
        f.write(json.dumps(keypoints, indent=2))
    tf.io.gfile.rename(path + "tmp", path)
    return keypoints


def _tfl_classifier(tf, feature_columns, keypoints, model_dir, head):
    PWLCalibration, CategoricalCalibration, Linear = _tfl_layers(tf)

    def model_fn(features, labels, mode, config):
        del config
        transformed = _tfl_transform_features(tf, features, feature_columns)
        inputs, outputs = [], []
        for name in transformed:
            dtype = tf.int32 if name == "thal" else tf.float32
            layer_input = tf.keras.layers.Input(shape=[1], dtype=dtype, name="tfl_input_" + name)
            inputs.append(layer_input)
            if name == "thal":
                layer = CategoricalCalibration(3, name="tfl_calib_" + name)
            else:
                layer = PWLCalibration(keypoints[name], name="tfl_calib_" + name)
            outputs.append(layer(layer_input))
        concatenated = tf.keras.layers.Concatenate(axis=1)(outputs)
        output = Linear(name="tfl_linear_0")(concatenated)
        model = tf.keras.Model(inputs=inputs, outputs=output)
        training = mode == tf.estimator.ModeKeys.TRAIN
        tensors = [tf.cast(t, tf.int32) if n == "thal" else t for n, t in transformed.items()]
        logits = tf.identity(model(tensors, training=training), name="output")
        optimizer = None
        if training:
            optimizer = tf.keras.optimizers.legacy.Adagrad(learning_rate=0.5)
            optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
        return head.create_estimator_spec(
            features=features,
            mode=mode,
            labels=labels,
            optimizer=optimizer,
            logits=logits,
            trainable_variables=model.trainable_variables,
            update_ops=model.updates,
            regularization_losses=model.losses or None,
        )

    return tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)


def _tfl_model_graph(tf, export_dir):
    """tfl.estimators.get_model_graph's reading: ops found by name in the export."""
    import re

    found = {}
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session() as sess:
        tf.compat.v1.saved_model.loader.load(sess, ["serve"], export_dir)
        ops = [op.name for op in graph.get_operations()]
        patterns = {
            "lengths": r"^tfl_calib_(.*)/lengths$",
            "lookup": r"transform(_\d)?/thal_lookup/Const",
            "pwl_kernel": r"^tfl_calib_(.*)/pwl_calibration_kernel/Read/ReadVariableOp$",
            "cat_kernel": r"^tfl_calib_(.*)/categorical_calibration_kernel/Read/ReadVariableOp$",
            "linear_kernel": r"^tfl_linear_(.*)/linear_layer_kernel/Read/ReadVariableOp$",
            "linear_bias": r"^tfl_linear_(.*)/linear_layer_bias/Read/ReadVariableOp$",
            "output": r"^output$",
        }
        names = {key: sorted(op for op in ops if re.search(p, op)) for key, p in patterns.items()}
        values = {
            key: sess.run(graph.get_operation_by_name(ops_[0]).outputs[0]).tolist()
            for key, ops_ in names.items()
            if ops_ and key != "output"
        }
        found["vocabulary"] = [v.decode() for v in values.pop("lookup", [])]
    found["names"] = names
    return found, values


@program
def tf_lattice_canned_classifier(tf, workdir):
    model_dir = os.path.join(workdir, "tfl")
    columns = _tfl_columns(tf)
    keypoints = _tfl_keypoints(tf, columns, _tfl_input_fn(tf, False), model_dir)
    head = tf.estimator.BinaryClassHead()
    est = _tfl_classifier(tf, columns, keypoints, model_dir, head)
    with _info_lines() as lines:
        est.train(_tfl_input_fn(tf, True), steps=6)
        metrics = est.evaluate(_tfl_input_fn(tf, False))
    predicted = list(est.predict(_tfl_input_fn(tf, False)))
    spec = tf.feature_column.make_parse_example_spec(columns)
    export_dir = est.export_saved_model(
        os.path.join(workdir, "export"),
        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec),
    )
    found, values = _tfl_model_graph(tf, export_dir)
    kernels = {
        name: est.get_variable_value(name).tolist()
        for name in est.get_variable_names()
        if name.endswith("kernel")
    }
    return {
        "exact": {
            "listing": listing(model_dir),
            "variables": sorted(est.get_variable_names()),
            "evaluate_keys": sorted(metrics),
            "graph": found,
            "classes": [p["classes"][0].decode() for p in predicted],
            "lines": _kept_lines(lines, workdir, "Saving checkpoints", "Loss for", "loss = "),
        },
        "close": {
            "metrics": _floats(metrics),
            "logits": [float(p["logits"][0]) for p in predicted],
            "kernels": kernels,
            "export_values": values,
        },
    }
