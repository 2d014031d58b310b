"""Recommender and click-through-rate Estimator code, as `tf_upgrade_v2` leaves it, on tiny
made-up data; the libraries' own code is written out here in its shape (they are not
installed on either side):

- `lambdaji_deepfm_libsvm`: lambdaji/tf_repos' `DeepFM.py`: libsvm lines read by a
  `TextLineDataset` and parsed by `tf.compat.v1.string_split` into `feat_ids` /
  `feat_vals`, a model_fn over `params` making its FM weights by `tf.compat.v1.get_variable`
  (glorot and constant initializers), first- and second-order terms from
  `tf.nn.embedding_lookup`, deep layers of `tf.compat.v1.layers.dense` with an L2
  regularizer (`tf.keras.regularizers.l2`, as users replaced contrib's), predictions of
  `prob` only, a `PredictOutput` keyed `serving_default`, an AUC metric, a TF1 Adam,
  `RunConfig().replace(session_config=..., log_step_count_steps=..., save_summary_steps=...)`,
  `train_and_evaluate`, `predict` and an export from a placeholder receiver;
- `youtube_dnn_sampled_softmax`: a YouTube-DNN candidate generator: watched-item ids
  averaged by `embedding_lookup_sparse` over a `VarLenFeature`, `tf.nn.sampled_softmax_loss`
  over item weights of the model's own in TRAIN, the full softmax in EVAL with
  `tf.compat.v1.metrics.recall_at_k` / `precision_at_k`, and `top_k` items predicted;
- `recommenders_wide_deep_regressor`: microsoft/recommenders' `wide_deep_utils.py`: a
  `tf.compat.v1.estimator.DNNLinearCombinedRegressor` over user and item identity columns,
  their crossed column (wide) and embedding columns (deep), TF1 Ftrl and Adagrad optimizers
  made before, `RunConfig(tf_random_seed=..., log_step_count_steps=...,
  save_checkpoints_steps=...)`, `pandas_input_fn` on a ratings DataFrame, an evaluation
  logging hook that predicts in `end`, and the predictions as a DataFrame column;
- `deepctr_deepfm_estimator`: shenweichen/DeepCTR's `deepctr.estimator` `DeepFMEstimator`:
  a linear logit of `tf.compat.v1.feature_column.linear_model` in the `linear` scope with
  L2 losses added to REGULARIZATION_LOSSES, `input_layer` embeddings in the `dnn` scope,
  its Keras `FM` and `DNN` layers (`add_weight`, seeded Glorot) and an unseeded `Dense`,
  its `Head`'s spec (`prediction/mean`, `label/mean`, `AUC` metrics named in a `metrics`
  scope, a `predict` export output), Ftrl and Adagrad minimizing over each scope's
  trainable variables and the global step's `assign_add` after them, over its
  `input_fn_tfrecord` (`parse_single_example`, an unseeded shuffle);
- `item_embedding_warm_start`: item embeddings carried over to a grown vocabulary by
  `WarmStartSettings(var_name_to_vocab_info={...: VocabInfo(...)})` (rows remapped, new
  items zeros), pretrained ones loaded by `embedding_column(ckpt_to_load_from=...,
  tensor_name_in_ckpt=...)`, and the same warm start without the remapping, which 2.15
  refused with a ValueError whose whole message was its first line (the kit's added
  detail now follows on a line of its own).

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (listings, keys, names, errors as [type, first line]) and `close`
values (seeded by `tf_random_seed` and Python's `random`: 1e-4). `tests/test_recsys.py` compares them with
2.15's recording (`tests/tf215/record_family.py recsys_programs`, into
`tests/data/tf215/recsys.json`).
"""

import os
import random

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _raised
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "recsys.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

FIELDS, FEATURES = 4, 20  # libsvm fields per line, feature ids


def _libsvm(path, rows, seed):
    """`label id:value ...` lines, one id per field, the label from two of the ids."""
    r = np.random.RandomState(seed)
    with open(path, "w") as f:
        for _ in range(rows):
            ids = [int(r.randint(0, 5)) + 5 * field for field in range(FIELDS)]
            label = int(ids[0] in (0, 1) or ids[2] == 10)
            pairs = " ".join(f"{i}:{r.uniform(0.5, 1.5):.3f}" for i in ids)
            f.write(f"{label} {pairs}\n")
    return path


def _deepfm_input_fn(tf, filenames, batch_size=8, num_epochs=1, perform_shuffle=False):
    def decode_libsvm(line):
        columns = tf.compat.v1.string_split([line], " ")
        labels = tf.strings.to_number(columns.values[0], out_type=tf.float32)
        splits = tf.compat.v1.string_split(columns.values[1:], ":")
        id_vals = tf.reshape(splits.values, splits.dense_shape)
        feat_ids, feat_vals = tf.split(id_vals, num_or_size_splits=2, axis=1)
        feat_ids = tf.strings.to_number(feat_ids, out_type=tf.int32)
        feat_vals = tf.strings.to_number(feat_vals, out_type=tf.float32)
        return {"feat_ids": feat_ids, "feat_vals": feat_vals}, labels

    dataset = (
        tf.data.TextLineDataset(filenames).map(decode_libsvm, num_parallel_calls=2).prefetch(64)
    )
    if perform_shuffle:
        dataset = dataset.shuffle(buffer_size=256)
    dataset = dataset.repeat(num_epochs).batch(batch_size)
    iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)
    batch_features, batch_labels = iterator.get_next()
    return batch_features, batch_labels


def _deepfm_model_fn(tf):
    def model_fn(features, labels, mode, params):
        field_size, feature_size = params["field_size"], params["feature_size"]
        embedding_size, l2_reg = params["embedding_size"], params["l2_reg"]
        layers = list(map(int, params["deep_layers"].split(",")))
        FM_B = tf.compat.v1.get_variable(
            name="fm_bias", shape=[1], initializer=tf.compat.v1.constant_initializer(0.0)
        )
        FM_W = tf.compat.v1.get_variable(
            name="fm_w",
            shape=[feature_size],
            initializer=tf.compat.v1.glorot_normal_initializer(),
        )
        FM_V = tf.compat.v1.get_variable(
            name="fm_v",
            shape=[feature_size, embedding_size],
            initializer=tf.compat.v1.glorot_normal_initializer(),
        )
        feat_ids = tf.reshape(features["feat_ids"], shape=[-1, field_size])
        feat_vals = tf.reshape(features["feat_vals"], shape=[-1, field_size])
        with tf.compat.v1.variable_scope("First-order"):
            feat_wgts = tf.nn.embedding_lookup(params=FM_W, ids=feat_ids)
            y_w = tf.reduce_sum(input_tensor=tf.multiply(feat_wgts, feat_vals), axis=1)
        with tf.compat.v1.variable_scope("Second-order"):
            embeddings = tf.nn.embedding_lookup(params=FM_V, ids=feat_ids)
            feat_vals = tf.reshape(feat_vals, shape=[-1, field_size, 1])
            embeddings = tf.multiply(embeddings, feat_vals)
            sum_square = tf.square(tf.reduce_sum(input_tensor=embeddings, axis=1))
            square_sum = tf.reduce_sum(input_tensor=tf.square(embeddings), axis=1)
            y_v = 0.5 * tf.reduce_sum(input_tensor=tf.subtract(sum_square, square_sum), axis=1)
        with tf.compat.v1.variable_scope("Deep-part"):
            deep_inputs = tf.reshape(embeddings, shape=[-1, field_size * embedding_size])
            for i, units in enumerate(layers):
                deep_inputs = tf.compat.v1.layers.dense(
                    deep_inputs,
                    units,
                    activation=tf.nn.relu,
                    kernel_regularizer=tf.keras.regularizers.l2(0.5 * (l2_reg)),
                    name=f"mlp{i}",
                )
            y_deep = tf.compat.v1.layers.dense(
                deep_inputs, 1, activation=tf.identity, name="deep_out"
            )
            y_d = tf.reshape(y_deep, shape=[-1])
        with tf.compat.v1.variable_scope("DeepFM-out"):
            y_bias = FM_B * tf.ones_like(y_d, dtype=tf.float32)
            y = y_bias + y_w + y_v + y_d
            pred = tf.sigmoid(y)
        predictions = {"prob": pred}
        export_outputs = {
            tf.compat.v1.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: (
                tf.estimator.export.PredictOutput(predictions)
            )
        }
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(
                mode=mode, predictions=predictions, export_outputs=export_outputs
            )
        loss = (
            tf.reduce_mean(
                input_tensor=tf.nn.sigmoid_cross_entropy_with_logits(logits=y, labels=labels)
            )
            + l2_reg * tf.nn.l2_loss(FM_W)
            + l2_reg * tf.nn.l2_loss(FM_V)
        )
        eval_metric_ops = {"auc": tf.compat.v1.metrics.auc(labels, pred)}
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(
                mode=mode, predictions=predictions, loss=loss, eval_metric_ops=eval_metric_ops
            )
        optimizer = tf.compat.v1.train.AdamOptimizer(
            learning_rate=params["learning_rate"], beta1=0.9, beta2=0.999, epsilon=1e-8
        )
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(
            mode=mode, predictions=predictions, loss=loss, train_op=train_op
        )

    return model_fn


@program
def lambdaji_deepfm_libsvm(tf, workdir):
    random.seed(3)  # (the dense layers' Glorot seeds come from Python's random, as in 2.15)
    tr = _libsvm(os.path.join(workdir, "tr.libsvm"), 48, 0)
    va = _libsvm(os.path.join(workdir, "va.libsvm"), 16, 1)
    model_dir = os.path.join(workdir, "model_ckpt")
    model_params = {
        "field_size": FIELDS,
        "feature_size": FEATURES,
        "embedding_size": 4,
        "learning_rate": 0.01,
        "l2_reg": 0.0001,
        "deep_layers": "8,4",
    }
    config = tf.estimator.RunConfig(tf_random_seed=7).replace(
        session_config=tf.compat.v1.ConfigProto(device_count={"GPU": 0, "CPU": 1}),
        log_step_count_steps=5,
        save_summary_steps=5,
    )
    DeepFM = tf.estimator.Estimator(
        model_fn=_deepfm_model_fn(tf), model_dir=model_dir, params=model_params, config=config
    )
    train_spec = tf.estimator.TrainSpec(
        input_fn=lambda: _deepfm_input_fn(tf, [tr], num_epochs=2), max_steps=10
    )
    eval_spec = tf.estimator.EvalSpec(
        input_fn=lambda: _deepfm_input_fn(tf, [va]),
        steps=None,
        start_delay_secs=0,
        throttle_secs=0,
    )
    result = tf.estimator.train_and_evaluate(DeepFM, train_spec, eval_spec)
    preds = DeepFM.predict(input_fn=lambda: _deepfm_input_fn(tf, [va]), predict_keys="prob")
    probs = [float(p["prob"]) for p in preds]

    def serving_input_receiver_fn():
        feat_ids = tf.compat.v1.placeholder(dtype=tf.int64, shape=[None, FIELDS], name="feat_ids")
        feat_vals = tf.compat.v1.placeholder(
            dtype=tf.float32, shape=[None, FIELDS], name="feat_vals"
        )
        receiver = {"feat_ids": feat_ids, "feat_vals": feat_vals}
        return tf.estimator.export.ServingInputReceiver(receiver, receiver)

    export = DeepFM.export_saved_model(os.path.join(workdir, "servable"), serving_input_receiver_fn)
    loaded = tf.saved_model.load(export)
    signature = loaded.signatures["serving_default"]
    metrics = result[0] if result else None
    return {
        "exact": {
            "train_and_evaluate": None if result is None else [sorted(metrics), result[1]],
            "variables": DeepFM.get_variable_names(),
            "model_dir": listing(model_dir),
            "signature_inputs": sorted(signature.structured_input_signature[1]),
            "signature_outputs": sorted(signature.structured_outputs),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in (metrics or {}).items()},
            "probs": probs,
            "fm_bias": DeepFM.get_variable_value("fm_bias").tolist(),
        },
    }


ITEMS = 12  # item ids of the candidate generator


def _watch_histories(tf, path, rows, seed):
    """TFRecords of tf.Examples: the items a user watched (a varying number) and the next."""
    r = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(rows):
            watched = r.randint(0, ITEMS, r.randint(1, 5))
            label = (int(watched[0]) + 1) % ITEMS
            feature = {
                "watched": tf.train.Feature(int64_list=tf.train.Int64List(value=watched)),
                "age": tf.train.Feature(float_list=tf.train.FloatList(value=[r.uniform()])),
                "next_item": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())
    return path


def _youtube_input_fn(tf, path, epochs):
    spec = {
        "watched": tf.io.VarLenFeature(tf.int64),
        "age": tf.io.FixedLenFeature([1], tf.float32),
        "next_item": tf.io.FixedLenFeature([1], tf.int64),
    }

    def input_fn():
        dataset = tf.data.TFRecordDataset(path).repeat(epochs).batch(8)
        dataset = dataset.map(lambda s: tf.io.parse_example(s, spec))
        return dataset.map(lambda f: (f, f.pop("next_item")))

    return input_fn


def _youtube_model_fn(features, labels, mode, params):
    import tensorflow as tf

    dim, n_items = params["embedding_dim"], params["n_items"]
    init = tf.compat.v1.truncated_normal_initializer(stddev=0.1, seed=1)
    item_emb = tf.compat.v1.get_variable("item_embedding", [n_items, dim], initializer=init)
    watched = tf.nn.embedding_lookup_sparse(item_emb, features["watched"], None, combiner="mean")
    user = tf.concat([watched, features["age"]], axis=1)
    user = tf.compat.v1.layers.dense(
        user, dim, activation=tf.nn.relu, kernel_initializer=init, name="user_tower"
    )
    softmax_w = tf.compat.v1.get_variable("softmax_w", [n_items, dim], initializer=init)
    softmax_b = tf.compat.v1.get_variable(
        "softmax_b", [n_items], initializer=tf.compat.v1.zeros_initializer()
    )
    logits = tf.matmul(user, softmax_w, transpose_b=True) + softmax_b
    top_scores, top_items = tf.nn.top_k(logits, k=params["top_k"])
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {"top_items": top_items, "top_scores": top_scores, "user_vector": user}
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    if mode == tf.estimator.ModeKeys.TRAIN:
        loss = tf.reduce_mean(
            tf.nn.sampled_softmax_loss(
                weights=softmax_w,
                biases=softmax_b,
                labels=labels,
                inputs=user,
                num_sampled=params["num_sampled"],
                num_classes=n_items,
                seed=5,
            )
        )
        tf.compat.v1.summary.scalar("sampled_softmax_loss", loss)
        optimizer = tf.compat.v1.train.AdagradOptimizer(params["learning_rate"])
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.squeeze(labels, 1), logits=logits)
    )
    metrics = {
        "recall_at_3": tf.compat.v1.metrics.recall_at_k(labels, logits, 3),
        "precision_at_3": tf.compat.v1.metrics.precision_at_k(labels, logits, 3),
        "recall_at_top_3": tf.compat.v1.metrics.recall_at_top_k(labels, top_items),
    }
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)


@program
def youtube_dnn_sampled_softmax(tf, workdir):
    path = _watch_histories(tf, os.path.join(workdir, "train.tfrecord"), 40, 0)
    params = {
        "embedding_dim": 6,
        "n_items": ITEMS,
        "num_sampled": 4,
        "top_k": 3,
        "learning_rate": 0.3,
    }
    model_dir = os.path.join(workdir, "youtube_dnn")
    est = tf.estimator.Estimator(
        _youtube_model_fn,
        model_dir=model_dir,
        params=params,
        config=tf.estimator.RunConfig(save_summary_steps=2, log_step_count_steps=2),
    )
    est.train(_youtube_input_fn(tf, path, 2), steps=8)
    metrics = est.evaluate(_youtube_input_fn(tf, path, 1), name="holdout")
    preds = list(est.predict(_youtube_input_fn(tf, path, 1), yield_single_examples=False))
    from tests.tutorial_programs import event_tags

    return {
        "exact": {
            "evaluate": sorted(metrics),
            "model_dir": listing(model_dir),
            "train_events": event_tags(model_dir),
            "variables": est.get_variable_names(),
            "predict": [sorted(p) for p in preds[:1]],
            "top_items": [p["top_items"].tolist() for p in preds],
        },
        "close": {
            "evaluate": {k: float(v) for k, v in metrics.items()},
            "top_scores": [p["top_scores"].tolist() for p in preds],
        },
    }


def _ratings(rows, seed):
    import pandas as pd

    r = np.random.RandomState(seed)
    users, items = r.randint(1, 8, rows), r.randint(1, 10, rows)
    rating = (1 + (users % 3) + (items % 2) + r.uniform(0, 1, rows)).round(1)
    return pd.DataFrame(
        {
            "userID": users,
            "itemID": items,
            "genre": r.choice(["a", "b"], rows),
            "rating": rating.astype(np.float32),
        }
    )


def _recommenders_feature_cols(tf):
    user_id = tf.feature_column.categorical_column_with_identity("userID", 8)
    item_id = tf.feature_column.categorical_column_with_identity("itemID", 10)
    genre = tf.feature_column.categorical_column_with_vocabulary_list("genre", ["a", "b"])
    wide_columns = [
        tf.feature_column.crossed_column([user_id, item_id], hash_bucket_size=50),
        genre,
    ]
    deep_columns = [
        tf.feature_column.embedding_column(user_id, 4, max_norm=None),
        tf.feature_column.embedding_column(item_id, 4, max_norm=None),
        tf.feature_column.indicator_column(genre),
    ]
    return wide_columns, deep_columns


@program
def recommenders_wide_deep_regressor(tf, workdir):
    random.seed(3)
    train, test = _ratings(48, 0), _ratings(12, 1)
    wide_columns, deep_columns = _recommenders_feature_cols(tf)
    model_dir = os.path.join(workdir, "wide_deep")
    config = tf.estimator.RunConfig(
        tf_random_seed=42,
        log_step_count_steps=5,
        save_checkpoints_steps=5,
        keep_checkpoint_max=2,
    )
    model = tf.compat.v1.estimator.DNNLinearCombinedRegressor(
        model_dir=model_dir,
        config=config,
        linear_feature_columns=wide_columns,
        linear_optimizer=tf.compat.v1.train.FtrlOptimizer(
            learning_rate=0.05, l1_regularization_strength=0.0
        ),
        dnn_feature_columns=deep_columns,
        dnn_hidden_units=[8, 4],
        dnn_optimizer=tf.compat.v1.train.AdagradOptimizer(learning_rate=0.05),
        dnn_dropout=0.0,
        batch_norm=False,
    )
    logged = []

    class EvaluationLogHook(tf.estimator.SessionRunHook):
        def __init__(self, estimator, every_n_iter):
            self.model, self.every_n_iter, self.step = estimator, every_n_iter, 0

        def after_run(self, run_context, run_values):
            self.step += 1

        def end(self, session):
            preds = self.model.predict(input_fn=test_fn, yield_single_examples=False)
            pred = np.concatenate([p["predictions"] for p in preds]).ravel()
            rmse = float(np.sqrt(np.mean((pred - test["rating"].values) ** 2)))
            logged.append([self.step, rmse])

    cols = ["userID", "itemID", "genre"]
    pandas_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn
    train_fn = pandas_input_fn(
        x=train[cols], y=train["rating"], batch_size=8, num_epochs=None, shuffle=False
    )
    test_fn = pandas_input_fn(x=test[cols], batch_size=6, num_epochs=1, shuffle=False)
    hook = EvaluationLogHook(model, 5)
    model.train(input_fn=train_fn, hooks=[hook], steps=6)
    model.train(input_fn=train_fn, steps=4)
    eval_fn = pandas_input_fn(x=test[cols], y=test["rating"], num_epochs=1, shuffle=False)
    metrics = model.evaluate(eval_fn)
    predictions = list(model.predict(input_fn=test_fn))
    test["prediction"] = [p["predictions"][0] for p in predictions]
    return {
        "exact": {
            "evaluate": sorted(metrics),
            "model_dir": listing(model_dir),
            "predict": sorted(predictions[0]),
            "prediction_dtype": str(test["prediction"].dtype),
            "logged_steps": [s for s, _ in logged],
        },
        "close": {
            "evaluate": {k: float(v) for k, v in metrics.items()},
            "predictions": test["prediction"].tolist(),
            "logged_rmse": [r for _, r in logged],
        },
    }


def _deepctr_head_spec(tf, mode, logits, labels, linear_optimizer, dnn_optimizer):
    """deepctr.estimator.utils' `Head(task="binary").create_estimator_spec` and train op."""
    with tf.name_scope("head"):
        logits = tf.reshape(logits, [-1, 1])
        pred = tf.sigmoid(logits)
        predictions = {"pred": pred, "logits": logits}
        export_outputs = {"predict": tf.estimator.export.PredictOutput(predictions)}
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(
                mode=mode, predictions=predictions, export_outputs=export_outputs
            )
        labels = tf.reshape(labels, [-1, 1])
        loss = tf.reduce_mean(
            tf.nn.sigmoid_cross_entropy_with_logits(
                logits=logits, labels=tf.cast(labels, tf.float32)
            )
        )
        training_loss = loss + tf.compat.v1.losses.get_regularization_loss()
        if mode == tf.estimator.ModeKeys.EVAL:
            labels, predictions_f = tf.cast(labels, tf.float32), tf.cast(pred, tf.float32)
            with tf.compat.v1.name_scope(None, "metrics", (labels, logits, predictions_f, loss)):
                metric_ops = {
                    "prediction/mean": tf.compat.v1.metrics.mean(
                        predictions_f, name="prediction/mean"
                    ),
                    "label/mean": tf.compat.v1.metrics.mean(labels, name="label/mean"),
                    "binary_crossentropy": tf.compat.v1.metrics.mean(
                        loss, name="binary_crossentropy"
                    ),
                    "AUC": tf.compat.v1.metrics.auc(labels, predictions_f, name="AUC"),
                }
            return tf.estimator.EstimatorSpec(
                mode=mode, predictions=predictions, loss=training_loss, eval_metric_ops=metric_ops
            )
        global_step = tf.compat.v1.train.get_global_step()
        collection = tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES
        train_ops = [
            dnn_optimizer.minimize(
                training_loss, var_list=tf.compat.v1.get_collection(collection, "dnn")
            ),
            linear_optimizer.minimize(
                training_loss, var_list=tf.compat.v1.get_collection(collection, "linear")
            ),
        ]
        with tf.control_dependencies([tf.group(*train_ops)]):
            train_op = tf.compat.v1.assign_add(global_step, 1).op
        return tf.estimator.EstimatorSpec(
            mode=mode, predictions=predictions, loss=training_loss, train_op=train_op
        )


def _deepctr_layers(tf):
    class FM(tf.keras.layers.Layer):
        def call(self, inputs, **kwargs):
            square_of_sum = tf.square(tf.reduce_sum(inputs, axis=1, keepdims=True))
            sum_of_square = tf.reduce_sum(inputs * inputs, axis=1, keepdims=True)
            return 0.5 * tf.reduce_sum(square_of_sum - sum_of_square, axis=2, keepdims=False)

    class DNN(tf.keras.layers.Layer):
        def __init__(self, hidden_units, l2_reg=0.0, seed=1024, **kwargs):
            self.hidden_units, self.l2_reg, self.seed = hidden_units, l2_reg, seed
            super().__init__(**kwargs)

        def build(self, input_shape):
            sizes = [int(input_shape[-1]), *list(self.hidden_units)]
            self.kernels = [
                self.add_weight(
                    name="kernel" + str(i),
                    shape=(sizes[i], sizes[i + 1]),
                    initializer=tf.keras.initializers.glorot_normal(seed=self.seed),
                    regularizer=tf.keras.regularizers.l2(self.l2_reg),
                    trainable=True,
                )
                for i in range(len(self.hidden_units))
            ]
            self.bias = [
                self.add_weight(
                    name="bias" + str(i),
                    shape=(units,),
                    initializer=tf.keras.initializers.Zeros(),
                    trainable=True,
                )
                for i, units in enumerate(self.hidden_units)
            ]
            super().build(input_shape)

        def call(self, inputs, training=None, **kwargs):
            deep_input = inputs
            for i in range(len(self.hidden_units)):
                fc = tf.nn.bias_add(
                    tf.tensordot(deep_input, self.kernels[i], axes=(-1, 0)), self.bias[i]
                )
                deep_input = tf.nn.relu(fc)
            return deep_input

    return FM, DNN


def _deepctr_columns(tf):
    user = tf.feature_column.categorical_column_with_identity("user", 8)
    item = tf.feature_column.categorical_column_with_hash_bucket("item", 16)
    price = tf.feature_column.numeric_column("price")
    linear = [user, item, price]
    dnn = [
        tf.feature_column.embedding_column(user, 4),
        tf.feature_column.embedding_column(item, 4),
        price,
    ]
    return linear, dnn


def DeepFMEstimator(
    tf,
    linear_feature_columns,
    dnn_feature_columns,
    dnn_hidden_units=(8, 4),
    l2_reg_linear=0.00001,
    l2_reg_embedding=0.00001,
    l2_reg_dnn=0.0,
    seed=1024,
    model_dir=None,
    config=None,
):
    FM, DNN = _deepctr_layers(tf)

    def _model_fn(features, labels, mode, config):
        with tf.compat.v1.variable_scope("linear"):
            linear_logits = tf.compat.v1.feature_column.linear_model(
                features, linear_feature_columns
            )
            collection = tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES
            for var in tf.compat.v1.get_collection(collection, "linear")[:-1]:
                tf.compat.v1.losses.add_loss(
                    l2_reg_linear * tf.nn.l2_loss(var, name=var.name.split(":")[0] + "_l2loss"),
                    tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES,
                )
        with tf.compat.v1.variable_scope("dnn"):
            sparse, dense = [], []
            for feat in dnn_feature_columns:
                value = tf.compat.v1.feature_column.input_layer(features, [feat])
                if "embedding" in feat.name:
                    sparse.append(tf.expand_dims(value, axis=1))
                    tf.compat.v1.losses.add_loss(
                        l2_reg_embedding * tf.nn.l2_loss(value, name=feat.name + "_l2loss"),
                        tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES,
                    )
                else:
                    dense.append(value)
            dnn_input = tf.concat(
                [tf.keras.layers.Flatten()(tf.concat(sparse, axis=-1)), *dense], -1
            )
            fm_logit = FM()(tf.concat(sparse, axis=1))
            dnn_output = DNN(dnn_hidden_units, l2_reg_dnn, seed)(dnn_input)
            dnn_logit = tf.keras.layers.Dense(1, use_bias=False, activation=None)(dnn_output)
        logits = linear_logits + fm_logit + dnn_logit
        return _deepctr_head_spec(
            tf,
            mode,
            logits,
            labels,
            tf.compat.v1.train.FtrlOptimizer(0.005),
            tf.compat.v1.train.AdagradOptimizer(0.01),
        )

    return tf.estimator.Estimator(_model_fn, model_dir=model_dir, config=config)


def input_fn_tfrecord(
    tf,
    filenames,
    feature_description,
    label=None,
    batch_size=8,
    num_epochs=1,
    num_parallel_calls=2,
    shuffle_factor=10,
    prefetch_factor=1,
):
    """deepctr.estimator.inputs' reader of tf.Example TFRecords."""

    def _parse_examples(serial_exmp):
        features = tf.io.parse_single_example(serial_exmp, features=feature_description)
        if label is not None:
            labels = features.pop(label)
            return features, labels
        return features

    def input_fn():
        dataset = tf.data.TFRecordDataset(filenames)
        dataset = dataset.map(_parse_examples, num_parallel_calls=num_parallel_calls)
        if shuffle_factor > 0:
            dataset = dataset.shuffle(buffer_size=batch_size * shuffle_factor)
        dataset = dataset.repeat(num_epochs).batch(batch_size)
        if prefetch_factor > 0:
            dataset = dataset.prefetch(buffer_size=batch_size * prefetch_factor)
        return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()

    return input_fn


def _clicks(tf, path, rows, seed):
    r = np.random.RandomState(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(rows):
            user, item, price = int(r.randint(0, 8)), f"i{r.randint(0, 6)}", r.uniform()
            label = float(user % 2 == 0 and price > 0.3)
            feature = {
                "user": tf.train.Feature(int64_list=tf.train.Int64List(value=[user])),
                "item": tf.train.Feature(bytes_list=tf.train.BytesList(value=[item.encode()])),
                "price": tf.train.Feature(float_list=tf.train.FloatList(value=[price])),
                "label": tf.train.Feature(float_list=tf.train.FloatList(value=[label])),
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())
    return path


@program
def deepctr_deepfm_estimator(tf, workdir):
    random.seed(3)
    train = _clicks(tf, os.path.join(workdir, "train.tfrecord"), 40, 0)
    test = _clicks(tf, os.path.join(workdir, "test.tfrecord"), 10, 1)
    linear_cols, dnn_cols = _deepctr_columns(tf)
    model_dir = os.path.join(workdir, "deepctr")
    model = DeepFMEstimator(
        tf,
        linear_cols,
        dnn_cols,
        model_dir=model_dir,
        config=tf.estimator.RunConfig(tf_random_seed=1024, save_summary_steps=5),
    )
    feature_description = {
        "user": tf.io.FixedLenFeature([1], tf.int64),
        "item": tf.io.FixedLenFeature([1], tf.string),
        "price": tf.io.FixedLenFeature([1], tf.float32),
        "label": tf.io.FixedLenFeature([1], tf.float32),
    }
    model.train(input_fn_tfrecord(tf, train, feature_description, "label", num_epochs=2))
    eval_fn = input_fn_tfrecord(tf, test, feature_description, "label", shuffle_factor=0)
    metrics = model.evaluate(eval_fn)
    predict_fn = input_fn_tfrecord(tf, test, feature_description, shuffle_factor=0)
    preds = list(model.predict(predict_fn))
    return {
        "exact": {
            "evaluate": sorted(metrics),
            "variables": model.get_variable_names(),
            "model_dir": listing(model_dir),
            "predict": sorted(preds[0]),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in metrics.items()},
            "pred": [float(p["pred"][0]) for p in preds],
        },
    }


def _item_clicks(tf, items):
    """An input_fn of `item` strings, clicked for two of them."""
    labels = np.isin(items, ["a", "e"]).astype(np.int64)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"item": items}, labels)).batch(8).repeat(2)

    return input_fn


def _item_columns(tf, path, size, **embedding):
    item = tf.feature_column.categorical_column_with_vocabulary_file(
        "item", path, vocabulary_size=size, num_oov_buckets=1
    )
    return [tf.feature_column.embedding_column(item, 3, **embedding)]


@program
def item_embedding_warm_start(tf, workdir):
    """A retrained recommender's item embeddings carried over to a grown vocabulary
    (`VocabInfo` remapping rows, zeros for new items), pretrained embeddings loaded by
    `ckpt_to_load_from`, and the slip of warm-starting them without remapping."""
    old_vocab, new_vocab = (os.path.join(workdir, name) for name in ("v1.txt", "v2.txt"))
    for path, words in ((old_vocab, "a b c d"), (new_vocab, "d e a f b")):
        with open(path, "w") as f:
            f.write("\n".join(words.split()) + "\n")
    input_fn = _item_clicks(tf, np.random.RandomState(0).choice(list("abcdef"), 32))
    config = tf.estimator.RunConfig(tf_random_seed=1)
    first_dir = os.path.join(workdir, "day1")
    day1 = tf.estimator.DNNClassifier(
        [4], _item_columns(tf, old_vocab, 4), first_dir, config=config
    )
    day1.train(input_fn, steps=4)
    emb = "dnn/input_from_feature_columns/input_layer/item_embedding/embedding_weights"
    vocab_info = tf.estimator.VocabInfo(
        new_vocab=new_vocab,
        new_vocab_size=5,
        num_oov_buckets=1,
        old_vocab=old_vocab,
        old_vocab_size=4,
        backup_initializer=tf.compat.v1.initializers.zeros(),
    )
    ws = tf.estimator.WarmStartSettings(
        ckpt_to_initialize_from=first_dir,
        vars_to_warm_start=".*embedding.*",
        var_name_to_vocab_info={emb: vocab_info},
    )
    frozen = tf.keras.optimizers.legacy.SGD(0.0)
    day2 = tf.estimator.DNNClassifier(
        [4],
        _item_columns(tf, new_vocab, 5),
        os.path.join(workdir, "day2"),
        config=config,
        warm_start_from=ws,
        optimizer=frozen,
    )
    day2.train(input_fn, steps=1)
    pre = _item_columns(
        tf, old_vocab, 4, ckpt_to_load_from=first_dir, tensor_name_in_ckpt=emb, trainable=False
    )
    loaded = tf.estimator.DNNClassifier([4], pre, os.path.join(workdir, "pre"), config=config)
    loaded.train(input_fn, steps=2)
    unmapped = tf.estimator.DNNClassifier(
        [4],
        _item_columns(tf, new_vocab, 5),
        os.path.join(workdir, "unmapped"),
        config=config,
        warm_start_from=tf.estimator.WarmStartSettings(first_dir, ".*embedding.*"),
    )
    error = _raised(lambda: unmapped.train(input_fn, steps=1))
    return {
        "exact": {
            "loaded_variables": loaded.get_variable_names(),
            "unmapped": error and [error[0], error[1].splitlines()[0]],
        },
        "close": {
            "day1": day1.get_variable_value(emb).tolist(),
            "day2": day2.get_variable_value(emb).tolist(),
            "loaded": loaded.get_variable_value(emb).tolist(),
        },
    }
