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
  session, its calibrators and linear weights found by op name);
- `keras_sequential_input_shape_export`: that model's commonest form, a Keras `Sequential`
  whose first layer is given `input_shape=`, in a model_fn under a head, exported;
- `tf_lattice_internal_imports`: the same estimator as TF-Lattice writes its class, a
  subclass of `estimator_lib.EstimatorV2` (`tensorflow_estimator.python.estimator.estimator`)
  settling its config by `maybe_overwrite_model_dir_and_session_config` before its
  feature analysis, its optimizer from `canned.optimizers.get_optimizer_instance_v2`, its
  head `head.binary_class_head.BinaryClassHead`, and what those helpers refuse;
- `tf_ranking_keras_model_to_estimator`: TF-Ranking 0.5's
  `tfr.keras.estimator.model_to_estimator`: a functional ranking model of `tf.keras.Input`s
  compiled outside (a Keras loss and metric of its own, a legacy Adagrad), cloned in the
  model_fn by `clone_model` and `from_config`, its optimizer's `iterations` the global step,
  `get_updates` grouped with `get_updates_for(None)` and `get_updates_for(features)`, three
  export outputs;
- `object_detection_model_main`: tensorflow/models' research/object_detection
  `model_lib.py` and `model_main.py` (a tiny detector in place of the configured one):
  `set_learning_phase`, a feature extractor and box predictor of `tf.compat.v1.layers` under
  their variable scopes with batch norm and an L2 regularizer, `Loss/...` losses and the
  regularization loss, a decayed learning rate, `optimize_loss` written out (loss and
  gradient summaries, clipping, the loss as the train op), an evaluator's py_func metric
  ops (an update op of no outputs, value ops on the first), losses as means and the learning
  rate as `(tensor, no_op)`, a sharded `Saver` in SAVERS and the `Scaffold` in every mode,
  an export output keyed `tensorflow/serving/predict` alone, TFRecords of `tf.Example`s,
  `train_and_evaluate` with an EvalSpec named `0` and a `FinalExporter('Servo')` of a
  scalar serialized-example receiver, an evaluation by `checkpoint_path`, the export served
  and read by its `inference_op` collection and tensor names;
- `deep_speech_estimator`: tensorflow/models' research/deep_speech `deep_speech.py`: a
  subclassed Keras model (conv, batch norm, a bidirectional LSTM, a dense layer) in a
  model_fn with `params`, `ctc_batch_cost` over the softmax, a TF1 Adam grouped with
  UPDATE_OPS (the same spec in EVAL), `RunConfig(train_distribute=...)` of one device,
  `train(max_steps=...)`, evaluate, and predictions decoded greedily.

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
from tests.tf1_fidelity_programs import _info_lines, _normalized, _raised
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


def _tfl_model_fn(tf, feature_columns, keypoints, head, make_optimizer):
    """tfl.estimators' _calibrated_linear_model_fn, its optimizer from `make_optimizer()`."""
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
            optimizer = make_optimizer()
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

    return model_fn


def _tfl_classifier(tf, feature_columns, keypoints, model_dir, head):
    def make_optimizer():
        return tf.keras.optimizers.legacy.Adagrad(learning_rate=0.5)

    model_fn = _tfl_model_fn(tf, feature_columns, keypoints, head, make_optimizer)
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


@program
def tf_lattice_internal_imports(tf, workdir):
    """tfl.estimators.CannedClassifier's own lines: tf.estimator 2.15's internal modules."""
    from tensorflow_estimator.python.estimator import estimator as estimator_lib
    from tensorflow_estimator.python.estimator.canned import optimizers
    from tensorflow_estimator.python.estimator.head import binary_class_head

    class CannedClassifier(estimator_lib.EstimatorV2):
        def __init__(self, feature_columns, model_dir=None, config=None, optimizer="Adagrad"):
            config = estimator_lib.maybe_overwrite_model_dir_and_session_config(config, model_dir)
            model_dir = config.model_dir
            input_fn = _tfl_input_fn(tf, False)
            keypoints = _tfl_keypoints(tf, feature_columns, input_fn, model_dir)

            def make_optimizer():
                return optimizers.get_optimizer_instance_v2(optimizer, learning_rate=0.5)

            head = binary_class_head.BinaryClassHead()
            model_fn = _tfl_model_fn(tf, feature_columns, keypoints, head, make_optimizer)
            super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)

    model_dir = os.path.join(workdir, "tfl")
    est = CannedClassifier(_tfl_columns(tf), model_dir=model_dir)
    est.train(_tfl_input_fn(tf, True), steps=3)
    metrics = est.evaluate(_tfl_input_fn(tf, False))
    settle = estimator_lib.maybe_overwrite_model_dir_and_session_config
    configured = settle(tf.estimator.RunConfig(model_dir=model_dir, save_summary_steps=7), None)
    temporary = settle(None, None)
    named = optimizers.get_optimizer_instance_v2("SGD")
    return {
        "exact": {
            "model_dir": _normalized(est.model_dir, workdir),
            "listing": sorted(p for p in listing(model_dir) if not p.endswith(".meta")),
            "variables": sorted(est.get_variable_names()),
            "configured": [
                _normalized(configured.model_dir, workdir),
                configured.save_summary_steps,
            ],
            "temporary": os.path.isdir(temporary.model_dir),
            "named": [type(named).__name__, float(named.learning_rate)],
            "refused": [
                _raised(lambda: settle(tf.estimator.RunConfig(model_dir=model_dir), "elsewhere")),
                _raised(lambda: settle("a config", None)),
                _raised(lambda: optimizers.get_optimizer_instance_v2("Nadam")),
            ],
        },
        "close": {"metrics": _floats(metrics)},
    }


# --- tensorflow/models research/object_detection: model_lib.py's model_fn, model_main.py ---

_OD_SIZE = 8


def _od_data(rows=4):
    rng = np.random.RandomState(0)
    images = rng.uniform(0, 255, (rows, _OD_SIZE, _OD_SIZE, 3)).astype(np.uint8)
    boxes = np.array([[[0.1, 0.1, 0.5, 0.5]], [[0.2, 0.3, 0.9, 0.8]]] * (rows // 2), np.float32)
    classes = np.array([[1], [2]] * (rows // 2), np.int64)
    return images, boxes, classes


def _od_examples(tf, rows=4):
    images, boxes, classes = _od_data(rows)
    serialized = []
    for image, box, cls in zip(images, boxes, classes, strict=True):
        feature = {
            "image/encoded": tf.train.Feature(
                bytes_list=tf.train.BytesList(value=[image.tobytes()])
            ),
            "image/object/bbox": tf.train.Feature(
                float_list=tf.train.FloatList(value=box.flatten().tolist())
            ),
            "image/object/class/label": tf.train.Feature(
                int64_list=tf.train.Int64List(value=cls.tolist())
            ),
        }
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        serialized.append(example.SerializeToString())
    return serialized


def _od_decode(tf, serialized):
    """The input's decoder (TfExampleDecoder's shape): one example to its tensors."""
    parsed = tf.io.parse_single_example(
        serialized,
        {
            "image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/object/bbox": tf.io.FixedLenFeature([4], tf.float32),
            "image/object/class/label": tf.io.FixedLenFeature([1], tf.int64),
        },
    )
    image = tf.reshape(tf.io.decode_raw(parsed["image/encoded"], tf.uint8), [_OD_SIZE, _OD_SIZE, 3])
    return {
        "image": tf.cast(image, tf.float32),
        "true_image_shape": tf.constant([_OD_SIZE, _OD_SIZE, 3], tf.int32),
        "hash": tf.strings.to_hash_bucket_fast(parsed["image/encoded"], 2**31 - 1),
    }, {
        "groundtruth_boxes": tf.reshape(parsed["image/object/bbox"], [1, 4]),
        "groundtruth_classes": tf.one_hot(parsed["image/object/class/label"] - 1, 2),
    }


def _od_input_fn(tf, path, repeat):
    def input_fn(params=None):
        del params
        dataset = tf.data.TFRecordDataset(path).map(lambda s: _od_decode(tf, s))
        if repeat:
            dataset = dataset.repeat()
        return dataset.batch(2, drop_remainder=True)

    return input_fn


def _od_predict_input_fn(tf):
    """model_lib's create_predict_input_fn: one serialized tf.Example, a scalar."""

    def _predict_input_fn():
        example = tf.compat.v1.placeholder(dtype=tf.string, shape=[], name="tf_example")
        features, _ = _od_decode(tf, example)
        images = tf.expand_dims(features["image"], axis=0)
        true_image_shape = tf.expand_dims(features["true_image_shape"], axis=0)
        return tf.estimator.export.ServingInputReceiver(
            features={"image": images, "true_image_shape": true_image_shape},
            receiver_tensors={"serialized_example": example},
        )

    return _predict_input_fn


class _TinyDetector:
    """A detection model's interface (preprocess, predict, loss, postprocess, updates)."""

    def __init__(self, tf, is_training):
        self.tf, self.is_training = tf, is_training

    def predict(self, images):
        tf = self.tf
        with tf.compat.v1.variable_scope("FeatureExtractor"):
            net = tf.compat.v1.layers.conv2d(
                images / 255.0,
                4,
                3,
                strides=2,
                use_bias=False,
                kernel_initializer=tf.compat.v1.constant_initializer(0.05),
                kernel_regularizer=tf.keras.regularizers.l2(0.5 * 4e-5),
                name="Conv2d_0",
            )
            net = tf.compat.v1.layers.batch_normalization(
                net, training=self.is_training, name="Conv2d_0/BatchNorm"
            )
            net = tf.reduce_mean(tf.nn.relu6(net), axis=[1, 2])
        with tf.compat.v1.variable_scope("BoxPredictor"):
            boxes = tf.compat.v1.layers.dense(
                net,
                4,
                kernel_initializer=tf.compat.v1.constant_initializer(0.1),
                name="BoxEncodingPredictor",
            )
            scores = tf.compat.v1.layers.dense(
                net,
                2,
                kernel_initializer=tf.compat.v1.constant_initializer(-0.1),
                name="ClassPredictor",
            )
        return {
            "box_encodings": tf.expand_dims(boxes, 1),
            "class_predictions": tf.expand_dims(scores, 1),
        }

    def loss(self, prediction_dict, labels):
        tf = self.tf
        with tf.compat.v1.name_scope("Loss"):
            localization = tf.compat.v1.losses.huber_loss(
                labels["groundtruth_boxes"],
                prediction_dict["box_encodings"],
                reduction=tf.compat.v1.losses.Reduction.SUM,
                loss_collection=None,
            )
            classification = tf.compat.v1.losses.sigmoid_cross_entropy(
                labels["groundtruth_classes"],
                prediction_dict["class_predictions"],
                reduction=tf.compat.v1.losses.Reduction.SUM,
                loss_collection=None,
            )
        return {
            "Loss/localization_loss": localization,
            "Loss/classification_loss": classification,
        }

    def postprocess(self, prediction_dict):
        tf = self.tf
        with tf.compat.v1.name_scope("Postprocessor"):
            scores = tf.sigmoid(prediction_dict["class_predictions"])
            boxes = tf.clip_by_value(prediction_dict["box_encodings"], 0.0, 1.0)
            nms = tf.image.combined_non_max_suppression(
                tf.expand_dims(boxes, 2), scores, 1, 1, score_threshold=0.0
            )
        return {
            "detection_boxes": nms.nmsed_boxes,
            "detection_scores": nms.nmsed_scores,
            "detection_classes": nms.nmsed_classes + 1.0,
            "num_detections": tf.cast(nms.valid_detections, tf.float32),
        }

    def updates(self):
        return self.tf.compat.v1.get_collection(self.tf.compat.v1.GraphKeys.UPDATE_OPS)


class _CocoLikeEvaluator:
    """The shape of object_detection's evaluators' get_estimator_eval_metric_ops: an
    update op of py_func adding each batch, value ops of py_funcs computing on the first."""

    names = ["DetectionBoxes_Precision/mAP", "DetectionBoxes_Recall/AR@1"]

    def __init__(self):
        self._scores, self._metrics = [], {}

    def get_estimator_eval_metric_ops(self, tf, eval_dict):
        def update_op(scores, classes):
            self._scores.append(float(np.mean(scores * (classes > 0))))

        update = tf.compat.v1.py_func(
            update_op, [eval_dict["detection_scores"], eval_dict["detection_classes"]], []
        )

        def first_value_func():
            self._metrics = {
                self.names[0]: np.float32(np.mean(self._scores)),
                self.names[1]: np.float32(len(self._scores)),
            }
            self._scores = []
            return self._metrics[self.names[0]]

        def value_func_factory(name):
            return lambda: np.float32(self._metrics[name])

        first_value_op = tf.compat.v1.py_func(first_value_func, [], tf.float32)
        ops = {self.names[0]: (first_value_op, update)}
        with tf.control_dependencies([first_value_op]):
            for name in self.names[1:]:
                ops[name] = (tf.compat.v1.py_func(value_func_factory(name), [], np.float32), update)
        return ops


def _od_optimize_loss(tf, loss, global_step, optimizer, update_ops, variables, clip):
    """tf.contrib.layers.optimize_loss(..., learning_rate=None, name='') as its users
    wrote it out: summaries of the loss and gradients, clipping, the loss as the train op."""
    with tf.control_dependencies(update_ops):
        loss = tf.identity(loss)
    tf.compat.v1.summary.scalar("loss", loss)
    gradients = optimizer.compute_gradients(loss, variables)
    grads, names = zip(*gradients, strict=True)
    clipped, norm = tf.clip_by_global_norm(grads, clip)
    tf.compat.v1.summary.scalar("global_norm/gradient_norm", norm)
    tf.compat.v1.summary.scalar("global_norm/clipped_gradient_norm", tf.linalg.global_norm(clipped))
    for grad, var in zip(clipped, names, strict=True):
        name = var.name.replace(":", "_")
        tf.compat.v1.summary.histogram(f"gradients/{name}", grad)
        tf.compat.v1.summary.scalar(f"gradient_norm/{name}", tf.linalg.global_norm([grad]))
    apply = optimizer.apply_gradients(
        list(zip(clipped, names, strict=True)), global_step=global_step, name="train"
    )
    with tf.control_dependencies([apply]):
        return tf.identity(loss, name="train_op")


def _od_model_fn(tf, fine_tune_checkpoint=None):
    def model_fn(features, labels, mode, params=None):
        params = params or {}
        is_training = mode == tf.estimator.ModeKeys.TRAIN
        tf.compat.v1.keras.backend.set_learning_phase(is_training)
        model = _TinyDetector(tf, is_training)
        prediction_dict = model.predict(features["image"])
        detections = model.postprocess(prediction_dict)
        total_loss, losses_dict, train_op, eval_metric_ops = None, {}, None, None
        if mode in (tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL):
            if is_training and fine_tune_checkpoint:
                tf.compat.v1.train.init_from_checkpoint(
                    fine_tune_checkpoint, {"FeatureExtractor/": "FeatureExtractor/"}
                )
            losses_dict = model.loss(prediction_dict, labels)
            losses = list(losses_dict.values())
            regularization_losses = tf.compat.v1.losses.get_regularization_losses()
            if regularization_losses:
                regularization_loss = tf.add_n(regularization_losses, name="regularization_loss")
                losses.append(regularization_loss)
                losses_dict["Loss/regularization_loss"] = regularization_loss
            total_loss = tf.add_n(losses, name="total_loss")
            losses_dict["Loss/total_loss"] = total_loss
        global_step = tf.compat.v1.train.get_or_create_global_step()
        learning_rate = tf.compat.v1.train.exponential_decay(
            0.05, global_step, 4, 0.5, staircase=True, name="learning_rate"
        )
        optimizer_summary_vars = [learning_rate]
        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = tf.compat.v1.train.MomentumOptimizer(learning_rate, momentum=0.9)
            for var in optimizer_summary_vars:
                tf.compat.v1.summary.scalar(var.op.name, var)
            train_op = _od_optimize_loss(
                tf,
                total_loss,
                global_step,
                optimizer,
                model.updates(),
                tf.compat.v1.trainable_variables(),
                10.0,
            )
        export_outputs = None
        if mode == tf.estimator.ModeKeys.PREDICT:
            outputs = {k: tf.identity(v, name=k) for k, v in detections.items()}
            for output in outputs.values():
                tf.compat.v1.add_to_collection("inference_op", output)
            export_outputs = {
                "tensorflow/serving/predict": tf.estimator.export.PredictOutput(outputs)
            }
        if mode == tf.estimator.ModeKeys.EVAL:
            eval_metric_ops = _CocoLikeEvaluator().get_estimator_eval_metric_ops(tf, detections)
            for loss_key, loss_tensor in iter(losses_dict.items()):
                eval_metric_ops[loss_key] = tf.compat.v1.metrics.mean(loss_tensor)
            for var in optimizer_summary_vars:
                eval_metric_ops[var.op.name] = (var, tf.no_op())
            eval_metric_ops = {str(k): v for k, v in eval_metric_ops.items()}
        saver = tf.compat.v1.train.Saver(
            max_to_keep=3,
            sharded=True,
            keep_checkpoint_every_n_hours=10000.0,
            save_relative_paths=True,
        )
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.SAVERS, saver)
        scaffold = tf.compat.v1.train.Scaffold(saver=saver)
        return tf.estimator.EstimatorSpec(
            mode=mode,
            predictions=detections,
            loss=total_loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=export_outputs,
            scaffold=scaffold,
        )

    return model_fn


@program
def object_detection_model_main(tf, workdir):
    model_dir = os.path.join(workdir, "od")
    paths = {}
    for name, rows in (("train", 4), ("eval", 4)):
        paths[name] = os.path.join(workdir, f"{name}.record")
        with tf.io.TFRecordWriter(paths[name]) as writer:
            for record in _od_examples(tf, rows):
                writer.write(record)
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=3)
    estimator = tf.estimator.Estimator(model_fn=_od_model_fn(tf), config=config)
    train_spec = tf.estimator.TrainSpec(
        input_fn=_od_input_fn(tf, paths["train"], True), max_steps=6
    )
    exporter = tf.estimator.FinalExporter(
        name="Servo", serving_input_receiver_fn=_od_predict_input_fn(tf)
    )
    eval_spec = tf.estimator.EvalSpec(
        name="0", input_fn=_od_input_fn(tf, paths["eval"], False), steps=None, exporters=exporter
    )
    with _info_lines() as lines:
        metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
        again = estimator.evaluate(
            _od_input_fn(tf, paths["eval"], False),
            steps=None,
            checkpoint_path=tf.train.latest_checkpoint(model_dir),
        )
    export_dir = exports[0].decode() if isinstance(exports[0], bytes) else exports[0]
    loaded = tf.saved_model.load(export_dir)
    serve = loaded.signatures["serving_default"]
    served = serve(serialized_example=tf.constant(_od_examples(tf, 2)[1]))
    signatures = {
        key: [sorted(fn.structured_input_signature[1]), sorted(fn.structured_outputs)]
        for key, fn in sorted(loaded.signatures.items())
    }
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session() as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], export_dir)
        inference = sorted(t.name for t in graph.get_collection("inference_op"))
        tensor_names = {
            key: sorted([k, v.name] for k, v in sig.outputs.items())
            for key, sig in sorted(meta.signature_def.items())
        }
    with open(os.path.join(model_dir, "checkpoint")) as f:
        state = f.read().splitlines()
    return {
        "exact": {
            "listing": listing(model_dir),
            "evaluate_keys": sorted(metrics),
            "variables": sorted(estimator.get_variable_names()),
            "train_tags": _event_tags(model_dir),
            "eval_tags": _event_tags(os.path.join(model_dir, "eval_0")),
            "signatures": signatures,
            "tensor_names": tensor_names,
            "inference_op": inference,
            "checkpoint_state": state,
            "lines": _kept_lines(
                lines,
                workdir,
                "Saving checkpoints",
                "Loss for",
                "loss = ",
                "Saving dict",
                "Signatures",
                "Restoring",
            ),
        },
        "close": {
            "metrics": _floats(metrics),
            "again": _floats(again),
            "served": {k: np.asarray(v).tolist() for k, v in sorted(served.items())},
        },
    }


# --- tensorflow/ranking 0.5: tfr.keras.estimator.model_to_estimator of a ranking Keras model ---


def _tfr_keras_objects(tf):
    class SoftmaxLoss(tf.keras.losses.Loss):
        """tfr.keras.losses.SoftmaxLoss's shape: a listwise loss with its config."""

        def __init__(self, reduction=tf.keras.losses.Reduction.AUTO, name="softmax_loss"):
            super().__init__(reduction=reduction, name=name)

        def call(self, y_true, y_pred):
            valid = tf.greater_equal(y_true, 0.0)
            labels = tf.compat.v1.where(valid, y_true, tf.zeros_like(y_true))
            logits = tf.compat.v1.where(valid, y_pred, -1e3 * tf.ones_like(y_pred))
            labels = tf.math.divide_no_nan(labels, tf.reduce_sum(labels, 1, keepdims=True))
            return tf.nn.softmax_cross_entropy_with_logits(labels, logits)

    class MRRMetric(tf.keras.metrics.Mean):
        """tfr.keras.metrics.MRRMetric's shape: a Mean over lists."""

        def __init__(self, name="metric/mrr", topn=None, dtype=None, **kwargs):
            super().__init__(name=name, dtype=dtype, **kwargs)
            self.topn = topn

        def update_state(self, y_true, y_pred, sample_weight=None):
            order = tf.argsort(y_pred, axis=1, direction="DESCENDING", stable=True)
            ranked = tf.gather(y_true, order, batch_dims=1)
            ranks = tf.cast(tf.range(1, tf.shape(ranked)[1] + 1), tf.float32)
            rr = tf.reduce_max(tf.cast(ranked > 0, tf.float32) / ranks, axis=1)
            return super().update_state(rr, sample_weight=sample_weight)

        def get_config(self):
            return {**super().get_config(), "topn": self.topn}

    return SoftmaxLoss, MRRMetric


def _tfr_keras_model(tf):
    """tfr.keras.model.create_keras_model's shape: Inputs per feature, a scorer per
    example over the list, the model compiled with its loss, metrics and optimizer."""
    SoftmaxLoss, MRRMetric = _tfr_keras_objects(tf)
    context = tf.keras.Input(shape=(1,), name="query_length", dtype=tf.float32)
    example = tf.keras.Input(shape=(_LIST, 1), name="doc_score", dtype=tf.float32)
    tiled = tf.keras.layers.RepeatVector(_LIST)(context)
    joined = tf.keras.layers.Concatenate(axis=2)([tiled, example])
    hidden = tf.keras.layers.Dense(
        4, activation="relu", kernel_initializer=tf.keras.initializers.Constant(0.1), name="hidden"
    )(joined)
    hidden = tf.keras.layers.BatchNormalization(name="batch_norm")(hidden)
    scores = tf.keras.layers.Dense(
        1, kernel_initializer=tf.keras.initializers.Constant(0.2), name="scores"
    )(hidden)
    logits = tf.keras.layers.Reshape((_LIST,))(scores)
    model = tf.keras.Model(inputs={"query_length": context, "doc_score": example}, outputs=logits)
    model.compile(
        optimizer=tf.keras.optimizers.legacy.Adagrad(learning_rate=0.1),
        loss=SoftmaxLoss(),
        metrics=[MRRMetric(name="metric/mrr")],
    )
    return model, {"SoftmaxLoss": SoftmaxLoss, "MRRMetric": MRRMetric}


def _tfr_model_to_estimator(tf, model, model_dir, custom_objects):
    import inspect

    def _clone_fn(obj):
        if "custom_objects" in inspect.signature(obj.__class__.from_config).parameters:
            return obj.__class__.from_config(obj.get_config(), custom_objects=custom_objects)
        return obj.__class__.from_config(obj.get_config())

    def _model_fn(features, labels, mode, params, config):
        del config, params
        ranker = tf.keras.models.clone_model(model, clone_function=_clone_fn)
        training = mode == tf.estimator.ModeKeys.TRAIN
        logits = ranker(features, training=training)
        export_outputs = {
            "serving_default": tf.estimator.export.RegressionOutput(logits),
            "regression": tf.estimator.export.RegressionOutput(logits),
            "predict": tf.estimator.export.PredictOutput(logits),
        }
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(
                mode=mode, predictions=logits, export_outputs=export_outputs
            )
        total_loss = _clone_fn(model.loss)(labels, logits)
        eval_metric_ops = {}
        for keras_metric in [_clone_fn(m) for m in model.metrics if m.name != "loss"]:
            keras_metric.update_state(labels, logits)
            eval_metric_ops[keras_metric.name] = keras_metric
        train_op = None
        if training:
            optimizer = _clone_fn(model.optimizer)
            optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
            update_ops = ranker.get_updates_for(None) + ranker.get_updates_for(features)
            minimize_op = optimizer.get_updates(loss=total_loss, params=ranker.trainable_variables)[
                0
            ]
            train_op = tf.group(minimize_op, *update_ops)
        return tf.estimator.EstimatorSpec(
            mode=mode,
            predictions=logits,
            loss=total_loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=export_outputs,
        )

    return tf.estimator.Estimator(model_fn=_model_fn, model_dir=model_dir)


def _tfr_keras_input_fn(tf, repeat):
    def data():
        features, labels = _ranking_data()
        return {
            "query_length": features["query_length"],
            "doc_score": features["doc_score"],
        }, labels

    return _input_fn(tf, data, 2, repeat)


@program
def tf_ranking_keras_model_to_estimator(tf, workdir):
    model_dir = os.path.join(workdir, "keras_ranking")
    model, custom_objects = _tfr_keras_model(tf)
    est = _tfr_model_to_estimator(tf, model, model_dir, custom_objects)
    with _info_lines() as lines:
        est.train(_tfr_keras_input_fn(tf, True), steps=4)
        metrics = est.evaluate(_tfr_keras_input_fn(tf, False))
    predictions = [p.tolist() for p in est.predict(_tfr_keras_input_fn(tf, False))]
    spec = {
        "query_length": tf.io.FixedLenFeature([1], tf.float32),
        "doc_score": tf.io.FixedLenFeature([_LIST, 1], tf.float32),
    }
    export_dir = est.export_saved_model(
        os.path.join(workdir, "export"),
        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec),
    )
    loaded = tf.saved_model.load(export_dir)
    signatures = {
        key: [sorted(fn.structured_input_signature[1]), sorted(fn.structured_outputs)]
        for key, fn in sorted(loaded.signatures.items())
    }
    return {
        "exact": {
            "listing": listing(model_dir),
            "variables": sorted(est.get_variable_names()),
            "evaluate_keys": sorted(metrics),
            "signatures": signatures,
            "lines": _kept_lines(lines, workdir, "Saving checkpoints", "Loss for", "loss = "),
        },
        "close": {
            "metrics": _floats(metrics),
            "predictions": predictions,
            "moving_mean": est.get_variable_value("batch_norm/moving_mean").tolist(),
        },
    }


@program
def keras_sequential_input_shape_export(tf, workdir):
    """The commonest form of tf_lattice_canned_classifier's functional model: a Keras
    `Sequential` whose first layer is given `input_shape=` (which makes a `tf.keras.Input`)
    in a TF2-style model_fn, under a head given a legacy Keras optimizer, exported."""

    def model_fn(features, labels, mode):
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(
                    3, activation="relu", input_shape=(1,), kernel_initializer="ones"
                ),
                tf.keras.layers.Dense(1, kernel_initializer="ones"),
            ]
        )
        logits = model(features["x"], training=mode == tf.estimator.ModeKeys.TRAIN)
        optimizer = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = tf.keras.optimizers.legacy.SGD(0.1)
            optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
        return tf.estimator.RegressionHead().create_estimator_spec(
            features=features,
            mode=mode,
            labels=labels,
            logits=logits,
            optimizer=optimizer,
            trainable_variables=model.trainable_variables,
        )

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": [[0.5], [0.2]]}, [[1.0], [0.0]]))

    est = tf.estimator.Estimator(model_fn, os.path.join(workdir, "model"))
    est.train(input_fn, steps=2)
    spec = {"x": tf.io.FixedLenFeature([1], tf.float32)}
    export_dir = est.export_saved_model(
        os.path.join(workdir, "export"),
        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec),
    )
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session() as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], export_dir)
        outputs = {
            key: sorted([k, v.name] for k, v in sig.outputs.items())
            for key, sig in sorted(meta.signature_def.items())
        }
    served = tf.saved_model.load(export_dir).signatures["predict"]
    example = tf.train.Example(
        features=tf.train.Features(
            feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5]))}
        )
    )
    value = served(examples=tf.constant([example.SerializeToString()]))["predictions"]
    return {
        "exact": {
            "variables": sorted(est.get_variable_names()),
            "export_listing": listing(export_dir.decode()),
            "outputs": outputs,
        },
        "close": {"served": np.asarray(value).tolist()},
    }


# --- tensorflow/models research/deep_speech: deep_speech.py's model_fn ---


def _deep_speech_model(tf):
    const = tf.keras.initializers.Constant

    class DeepSpeech2(tf.keras.Model):
        """deep_speech_model.DeepSpeech2's shape: conv + batch norm, a bidirectional RNN,
        a dense softmax layer over the characters."""

        def __init__(self, num_classes):
            super().__init__()
            self.conv = tf.keras.layers.Conv2D(
                4,
                (3, 3),
                strides=(2, 1),
                padding="same",
                use_bias=False,
                kernel_initializer=const(0.05),
                name="cnn_1",
            )
            self.bn = tf.keras.layers.BatchNormalization(
                momentum=0.997, epsilon=1e-5, name="bn_cnn_1"
            )
            self.rnn = tf.keras.layers.Bidirectional(
                tf.keras.layers.LSTM(
                    3,
                    return_sequences=True,
                    kernel_initializer=const(0.02),
                    recurrent_initializer=const(0.01),
                    name="rnn_1",
                )
            )
            self.dense = tf.keras.layers.Dense(
                num_classes, kernel_initializer=const(0.03), name="densor"
            )

        def call(self, inputs, training=None):
            net = tf.nn.relu6(self.bn(self.conv(inputs), training=training))
            shape = tf.shape(net)
            net = tf.reshape(net, [shape[0], shape[1], 4 * 4])
            return self.dense(self.rnn(net, training=training))

    return DeepSpeech2


def _deep_speech_model_fn(tf):
    DeepSpeech2 = _deep_speech_model(tf)

    def model_fn(features, labels, mode, params):
        num_classes = params["num_classes"]
        input_length = features["input_length"]
        label_length = features["label_length"]
        features = features["features"]
        model = DeepSpeech2(num_classes)
        if mode == tf.estimator.ModeKeys.PREDICT:
            logits = model(features, training=False)
            predictions = {
                "classes": tf.argmax(logits, axis=2),
                "probabilities": tf.nn.softmax(logits),
                "logits": logits,
            }
            return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
        logits = model(features, training=True)
        probs = tf.nn.softmax(logits)
        max_time_steps = tf.shape(features)[1]
        ctc_time_steps = tf.shape(probs)[1]
        ctc_input_length = tf.cast(
            tf.multiply(input_length, ctc_time_steps), dtype=tf.float32
        ) / tf.cast(max_time_steps, dtype=tf.float32)
        ctc_input_length = tf.cast(ctc_input_length, dtype=tf.int32)
        loss = tf.reduce_mean(
            tf.keras.backend.ctc_batch_cost(labels, probs, ctc_input_length, label_length)
        )
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=params["learning_rate"])
        global_step = tf.compat.v1.train.get_or_create_global_step()
        minimize_op = optimizer.minimize(loss, global_step=global_step)
        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        train_op = tf.group(minimize_op, update_ops)
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)

    return model_fn


def _deep_speech_input_fn(tf, repeat):
    rows, steps = 4, 8
    spectrogram = (np.arange(rows * steps * 4, dtype=np.float32) % 7 / 7.0).reshape(
        rows, steps, 4, 1
    )
    labels = np.array([[1, 2, 0], [2, 1, 1], [1, 1, 0], [2, 0, 2]], np.int32)
    features = {
        "features": spectrogram,
        "input_length": np.full([rows, 1], steps, np.int32),
        "label_length": np.array([[2], [2], [2], [3]], np.int32),
    }

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(2)
        return dataset.repeat() if repeat else dataset

    return input_fn


@program
def deep_speech_estimator(tf, workdir):
    model_dir = os.path.join(workdir, "deep_speech")
    distribution = tf.distribute.OneDeviceStrategy("device:CPU:0")
    run_config = tf.estimator.RunConfig(train_distribute=distribution)
    estimator = tf.estimator.Estimator(
        model_fn=_deep_speech_model_fn(tf),
        model_dir=model_dir,
        config=run_config,
        params={"num_classes": 4, "learning_rate": 0.01},
    )
    with _info_lines() as lines:
        estimator.train(input_fn=_deep_speech_input_fn(tf, True), max_steps=3)
        eval_results = estimator.evaluate(_deep_speech_input_fn(tf, False))
        probs = [p["probabilities"] for p in estimator.predict(_deep_speech_input_fn(tf, False))]
    decoded = [np.argmax(p, axis=1).tolist() for p in probs]
    return {
        "exact": {
            "listing": sorted(p for p in listing(model_dir) if not p.endswith(".meta")),
            "variables": sorted(estimator.get_variable_names()),
            "evaluate_keys": sorted(eval_results),
            "decoded": decoded,
            "shapes": [list(p.shape) for p in probs],
            "lines": _kept_lines(
                lines, workdir, "Saving checkpoints", "Loss for", "loss = ", "Saving dict"
            ),
        },
        "close": {
            "eval": _floats(eval_results),
            "probabilities": [p.tolist() for p in probs[:2]],
            "moving_mean": estimator.get_variable_value(
                "deep_speech2/bn_cnn_1/moving_mean"
            ).tolist(),
        },
    }
