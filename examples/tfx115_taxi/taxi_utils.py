"""A TFX <= 1.15 Estimator module, written as TFX's Chicago taxi example wrote its own:
`preprocessing_fn` for Transform and `trainer_fn` for the Trainer.

Its imports are TFX 1.15's: the Trainer and Transform of this kit make
`from tensorflow import estimator` the kit's Estimator (docs/tfx115-migration.md).
"""

import tensorflow as tf
import tensorflow_model_analysis as tfma
import tensorflow_transform as tft
from tensorflow import estimator as tf_estimator

DENSE_FLOAT_FEATURE_KEYS = ["trip_miles", "fare", "trip_seconds"]
FEATURE_BUCKET_COUNT = 10
BUCKET_FEATURE_KEYS = [
    "pickup_latitude",
    "pickup_longitude",
    "dropoff_latitude",
    "dropoff_longitude",
]
VOCAB_SIZE = 1000
OOV_SIZE = 10
VOCAB_FEATURE_KEYS = ["payment_type", "company"]
CATEGORICAL_FEATURE_KEYS = ["trip_start_hour", "trip_start_day", "trip_start_month"]
MAX_CATEGORICAL_FEATURE_VALUES = [24, 31, 13]
LABEL_KEY = "tips"
FARE_KEY = "fare"


def transformed_name(key):
    return key + "_xf"


def _fill_in_missing(x):
    """A dense [batch] tensor from a feature that may be missing (a SparseTensor)."""
    if not isinstance(x, tf.sparse.SparseTensor):
        return tf.squeeze(x, axis=1)
    default_value = "" if x.dtype == tf.string else 0
    return tf.squeeze(
        tf.sparse.to_dense(
            tf.SparseTensor(x.indices, x.values, [x.dense_shape[0], 1]), default_value
        ),
        axis=1,
    )


def preprocessing_fn(inputs):
    outputs = {}
    for key in DENSE_FLOAT_FEATURE_KEYS:
        outputs[transformed_name(key)] = tft.scale_to_z_score(
            tf.cast(_fill_in_missing(inputs[key]), tf.float32)
        )
    for key in VOCAB_FEATURE_KEYS:
        outputs[transformed_name(key)] = tft.compute_and_apply_vocabulary(
            _fill_in_missing(inputs[key]), top_k=VOCAB_SIZE, num_oov_buckets=OOV_SIZE
        )
    for key in BUCKET_FEATURE_KEYS:
        outputs[transformed_name(key)] = tft.bucketize(
            _fill_in_missing(inputs[key]), FEATURE_BUCKET_COUNT
        )
    for key in CATEGORICAL_FEATURE_KEYS:
        outputs[transformed_name(key)] = _fill_in_missing(inputs[key])
    fare = _fill_in_missing(inputs[FARE_KEY])
    tips = _fill_in_missing(inputs[LABEL_KEY])
    # Big tippers: tips above 20% of the fare.
    outputs[transformed_name(LABEL_KEY)] = tf.where(
        tf.math.is_nan(fare),
        tf.cast(tf.zeros_like(fare), tf.int64),
        tf.cast(tf.greater(tips, tf.multiply(fare, tf.constant(0.2))), tf.int64),
    )
    return outputs


def _build_estimator(config, hidden_units=None, warm_start_from=None):
    real_valued_columns = [
        tf.feature_column.numeric_column(transformed_name(key), shape=())
        for key in DENSE_FLOAT_FEATURE_KEYS
    ]
    categorical_columns = [
        tf.feature_column.categorical_column_with_identity(
            transformed_name(key), num_buckets=VOCAB_SIZE + OOV_SIZE, default_value=0
        )
        for key in VOCAB_FEATURE_KEYS
    ]
    categorical_columns += [
        tf.feature_column.categorical_column_with_identity(
            transformed_name(key), num_buckets=FEATURE_BUCKET_COUNT, default_value=0
        )
        for key in BUCKET_FEATURE_KEYS
    ]
    categorical_columns += [
        tf.feature_column.categorical_column_with_identity(
            transformed_name(key), num_buckets=num_buckets, default_value=0
        )
        for key, num_buckets in zip(
            CATEGORICAL_FEATURE_KEYS, MAX_CATEGORICAL_FEATURE_VALUES, strict=True
        )
    ]
    return tf_estimator.DNNLinearCombinedClassifier(
        config=config,
        linear_feature_columns=categorical_columns,
        dnn_feature_columns=real_valued_columns,
        dnn_hidden_units=hidden_units or [100, 70, 50, 25],
        warm_start_from=warm_start_from,
    )


def _example_serving_receiver_fn(tf_transform_output, schema):
    """Raw tf.Examples (no label) in, transformed features out."""
    raw_feature_spec = tf_transform_output.raw_feature_spec()
    raw_feature_spec.pop(LABEL_KEY)
    raw_input_fn = tf_estimator.export.build_parsing_serving_input_receiver_fn(
        raw_feature_spec, default_batch_size=None
    )
    serving_input_receiver = raw_input_fn()
    transformed_features = tf_transform_output.transform_raw_features(
        serving_input_receiver.features
    )
    return tf_estimator.export.ServingInputReceiver(
        transformed_features, serving_input_receiver.receiver_tensors
    )


def _eval_input_receiver_fn(tf_transform_output, schema):
    """TFMA's EvalSavedModel receiver (TFX <= 1.15): the Trainer exports the eval model,
    which a `ModelSpec(signature_name="eval")` Evaluator reads, from it."""
    raw_feature_spec = tf_transform_output.raw_feature_spec()
    serialized = tf.compat.v1.placeholder(dtype=tf.string, shape=[None], name="input_example")
    features = tf.io.parse_example(serialized, raw_feature_spec)
    transformed = tf_transform_output.transform_raw_features(features)
    return tfma.export.EvalInputReceiver(
        features=transformed,
        receiver_tensors={"examples": serialized},
        labels=transformed[transformed_name(LABEL_KEY)],
    )


def _input_fn(filenames, tf_transform_output, batch_size=200):
    """Transformed features and the label, as TFX 1.15's taxi module read them: the next
    element of a one-shot iterator (a new batch each step, on a graph)."""
    transformed_feature_spec = tf_transform_output.transformed_feature_spec().copy()
    dataset = tf.data.experimental.make_batched_features_dataset(
        filenames,
        batch_size,
        transformed_feature_spec,
        reader=lambda files: tf.data.TFRecordDataset(files, compression_type="GZIP"),
    )
    transformed_features = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    return transformed_features, transformed_features.pop(transformed_name(LABEL_KEY))


def trainer_fn(trainer_fn_args, schema):
    """The Estimator and its train and eval specs, as TFX <= 1.15 asked for them."""
    train_batch_size = 40
    eval_batch_size = 40
    tf_transform_output = tft.TFTransformOutput(trainer_fn_args.transform_output)

    def train_input_fn():
        return _input_fn(trainer_fn_args.train_files, tf_transform_output, train_batch_size)

    def eval_input_fn():
        return _input_fn(trainer_fn_args.eval_files, tf_transform_output, eval_batch_size)

    train_spec = tf_estimator.TrainSpec(train_input_fn, max_steps=trainer_fn_args.train_steps)

    def serving_receiver_fn():
        return _example_serving_receiver_fn(tf_transform_output, schema)

    exporter = tf_estimator.FinalExporter("chicago-taxi", serving_receiver_fn)
    eval_spec = tf_estimator.EvalSpec(
        eval_input_fn,
        steps=trainer_fn_args.eval_steps,
        exporters=[exporter],
        name="chicago-taxi-eval",
    )
    run_config = tf_estimator.RunConfig(save_checkpoints_steps=999, keep_checkpoint_max=1)
    run_config = run_config.replace(model_dir=trainer_fn_args.serving_model_dir)
    estimator = _build_estimator(
        hidden_units=[16, 8],
        config=run_config,
        warm_start_from=trainer_fn_args.base_model,
    )
    return {
        "estimator": estimator,
        "train_spec": train_spec,
        "eval_spec": eval_spec,
        "eval_input_receiver_fn": lambda: _eval_input_receiver_fn(tf_transform_output, schema),
    }
