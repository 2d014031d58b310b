"""Programs shaped like GoogleCloudPlatform/cloudml-samples' census trainers, after
`tf_upgrade_v2` and the hand edits its report asks for (`tf.contrib.lookup`'s index table
as a `tf.lookup.StaticHashTable`, `tf.compat.v1.train.get_or_create_global_step`), on a
tiny made-up census CSV:

- `custom_census`: `census/customestimator`: `ModeKeys` imported from TF 2.15's
  `tensorflow.python.estimator.model_fn` stub, a compat.v1 DNN over `input_layer` whose
  model_fn summarizes its own loss as `"loss"`, string labels looked up in a hash table,
  Ftrl, accuracy and AUC, a predict-only export through a `FinalExporter` of a JSON
  receiver, all inside `train_and_evaluate`;
- `canned_census_logging`: `census/estimator`: a `DNNLinearCombinedClassifier` exported by
  a `FinalExporter` in a program that never configured Python's logging (the sample only
  sets TensorFlow's verbosity): what Python's root logger has afterwards;
- `internal_module_names`: the public names TF1-era samples import from the stub modules
  TF 2.15 kept under `tensorflow.python.estimator` (`model_fn.ModeKeys`,
  `inputs.numpy_io.numpy_input_fn`, `export.export_output.PredictOutput`, ...): which of
  tf.estimator's (or tf.compat.v1.estimator's) objects each one is.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_cloudml_census.py` with what `tests/tf215/record_family.py
cloudml_census_programs` recorded under tf.estimator 2.15
(`tests/data/tf215/cloudml_census.json`).  The custom DNN starts from constant weights
and reads its rows in file order, so its values match to 1e-4.
"""

import importlib
import json
import logging
import os
import random

from tests.program_registry import registry
from tests.tutorial_programs import DATA_DIR, event_tags, listing, signatures

RECORDED = os.path.join(DATA_DIR, "cloudml_census.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

FIELDS = [
    ("age", 0),
    ("workclass", ""),
    ("fnlwgt", 0),
    ("education", ""),
    ("education_num", 0),
    ("marital_status", ""),
    ("occupation", ""),
    ("relationship", ""),
    ("race", ""),
    ("gender", ""),
    ("capital_gain", 0),
    ("capital_loss", 0),
    ("hours_per_week", 0),
    ("native_country", ""),
    ("income_bracket", ""),
]
INCOMES = [" <=50K", " >50K"]
CHOICES = {
    "workclass": [" Private", " State-gov", " Self-emp-inc"],
    "education": [" Bachelors", " HS-grad", " Masters", " Doctorate"],
    "marital_status": [" Divorced", " Never-married", " Married-civ-spouse"],
    "occupation": [" Sales", " Tech-support", " Craft-repair"],
    "relationship": [" Husband", " Wife", " Own-child"],
    "race": [" White", " Black", " Asian-Pac-Islander"],
    "gender": [" Male", " Female"],
    "native_country": [" United-States", " Canada"],
}


def write_census(path, rows, seed):
    """Rows as the census CSV has them: `, `-separated, strings with their leading space."""
    draw = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(rows):
            age = draw.randint(18, 75)
            row = {name: draw.choice(CHOICES[name]) for name in CHOICES}
            row.update(
                age=age,
                fnlwgt=draw.randint(20000, 400000),
                education_num=draw.randint(1, 16),
                capital_gain=draw.choice([0, 0, 5178]),
                capital_loss=0,
                hours_per_week=draw.randint(15, 60),
                income_bracket=INCOMES[age > 44],
            )
            f.write(",".join(str(row[name]) for name, _ in FIELDS) + "\n")


def census_input(tf, path, batch_size, num_epochs=None, shuffle=False):
    """The trainer's input_fn: decoded lines, each column [batch, 1], the label popped."""

    def decode(line):
        columns = tf.io.decode_csv(line, record_defaults=[[d] for _, d in FIELDS])
        features = dict(zip([name for name, _ in FIELDS], columns, strict=True))
        features.pop("fnlwgt")
        return {key: tf.expand_dims(value, -1) for key, value in features.items()}

    def input_fn():
        dataset = tf.data.TextLineDataset([path]).map(decode)
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 10)
        batches = dataset.repeat(num_epochs).batch(batch_size)
        features = tf.compat.v1.data.make_one_shot_iterator(batches).get_next()
        return features, features.pop("income_bracket")

    return input_fn


def census_columns(tf):
    """The census feature columns: vocabularies, hashed ones, numbers."""
    fc = tf.feature_column
    hashed_keys = ("occupation", "native_country")
    vocabularies = [
        fc.categorical_column_with_vocabulary_list(k, v)
        for k, v in CHOICES.items()
        if k not in hashed_keys
    ]
    hashed = [fc.categorical_column_with_hash_bucket(k, hash_bucket_size=20) for k in hashed_keys]
    numbers = [fc.numeric_column(k) for k in ("age", "education_num", "hours_per_week")]
    return vocabularies, hashed, numbers


def json_receiver(tf):
    """The JSON serving input: one placeholder per input column, features as given."""
    vocabularies, hashed, numbers = census_columns(tf)
    inputs = {}
    for column in (*vocabularies, *hashed, *numbers):
        dtype = tf.float32 if column in numbers else tf.string
        inputs[column.name] = tf.compat.v1.placeholder(shape=[None], dtype=dtype)
    return tf.estimator.export.ServingInputReceiver(inputs, inputs)


def make_model_fn(tf, hidden_units, embedding_size=3, learning_rate=0.1):
    """The customestimator trainer's model_fn generator, ModeKeys from TF 2.15's stub."""
    from tensorflow.python.estimator.model_fn import ModeKeys as Modes

    constant = tf.compat.v1.constant_initializer

    def model_fn(mode, features, labels):
        vocabularies, hashed, numbers = census_columns(tf)
        columns = [tf.feature_column.indicator_column(c) for c in vocabularies]
        columns += [
            tf.feature_column.embedding_column(c, embedding_size, initializer=constant(0.05))
            for c in hashed
        ]
        net = tf.compat.v1.feature_column.input_layer(features, columns + numbers)
        for width in hidden_units:
            net = tf.compat.v1.layers.dense(
                net, width, activation=tf.nn.relu, kernel_initializer=constant(0.01)
            )
        logits = tf.compat.v1.layers.dense(net, len(INCOMES), kernel_initializer=constant(0.02))
        label_values = tf.constant(INCOMES)
        probabilities = tf.nn.softmax(logits)
        predicted = tf.argmax(probabilities, 1)
        if mode == Modes.PREDICT:
            predictions = {
                "classes": tf.gather(label_values, predicted),
                "scores": tf.reduce_max(probabilities, axis=1),
            }
            outputs = {"prediction": tf.estimator.export.PredictOutput(predictions)}
            return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs=outputs)
        ids = tf.range(tf.size(label_values, out_type=tf.int64), dtype=tf.int64)
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(label_values, ids), -1
        )
        label_ids = tf.squeeze(table.lookup(labels), axis=[1])
        global_step = tf.compat.v1.train.get_or_create_global_step()
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=label_ids)
        )
        tf.compat.v1.summary.scalar("loss", loss)
        if mode == Modes.TRAIN:
            optimizer = tf.compat.v1.train.FtrlOptimizer(
                learning_rate, l1_regularization_strength=3.0, l2_regularization_strength=10.0
            )
            train_op = optimizer.minimize(loss, global_step=global_step)
            return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        one_hot = tf.one_hot(label_ids, depth=len(INCOMES), on_value=True, off_value=False)
        metrics = {
            "accuracy": tf.compat.v1.metrics.accuracy(label_ids, predicted),
            "auroc": tf.compat.v1.metrics.auc(one_hot, probabilities),
        }
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

    return model_fn


def _variables(tf, model_dir):
    """{checkpoint variable: shape} of the latest checkpoint."""
    return dict(tf.train.list_variables(tf.train.latest_checkpoint(model_dir)))


def _export(model_dir, name):
    """The export folder `FinalExporter(name)` wrote (its one timestamp)."""
    base = os.path.join(model_dir, "export", name)
    return os.path.join(base, os.listdir(base)[0])


@program
def custom_census(tf, workdir):
    train_csv, eval_csv = (os.path.join(workdir, f"{s}.csv") for s in ("train", "eval"))
    write_census(train_csv, 48, seed=1)
    write_census(eval_csv, 16, seed=2)
    model_dir = os.path.join(workdir, "job")
    train_spec = tf.estimator.TrainSpec(census_input(tf, train_csv, 16), max_steps=6)
    exporter = tf.estimator.FinalExporter("census", lambda: json_receiver(tf))
    eval_spec = tf.estimator.EvalSpec(
        census_input(tf, eval_csv, 8), steps=2, exporters=[exporter], name="census-eval"
    )
    estimator = tf.estimator.Estimator(
        model_fn=make_model_fn(tf, hidden_units=[6, 4]),
        model_dir=model_dir,
        config=tf.estimator.RunConfig(save_summary_steps=2),
    )
    metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    predicted = list(estimator.predict(census_input(tf, eval_csv, 8, num_epochs=1)))
    return {
        "exact": {
            "train_tags": event_tags(model_dir),
            "eval_tags": sorted(event_tags(estimator.eval_dir("census-eval"))),
            "metric_keys": sorted(metrics),
            "listing": listing(model_dir),
            "variables": _variables(tf, model_dir),
            "signatures": signatures(_export(model_dir, "census")),
            "classes": [row["classes"].decode() for row in predicted],
        },
        "close": {
            **{k: float(v) for k, v in metrics.items() if k != "global_step"},
            "scores": [float(row["scores"]) for row in predicted],
        },
    }


@program
def canned_census_logging(tf, workdir):
    train_csv = os.path.join(workdir, "train.csv")
    write_census(train_csv, 32, seed=3)
    vocabularies, hashed, numbers = census_columns(tf)
    model_dir = os.path.join(workdir, "job")
    estimator = tf.estimator.DNNLinearCombinedClassifier(
        config=tf.estimator.RunConfig(model_dir=model_dir),
        linear_feature_columns=vocabularies + hashed,
        dnn_feature_columns=[tf.feature_column.embedding_column(c, 2) for c in hashed] + numbers,
        dnn_hidden_units=[4, 2],
        label_vocabulary=INCOMES,
    )
    root = logging.getLogger()
    kept, root.handlers = root.handlers, []  # a script that never configured logging
    try:
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
        train_spec = tf.estimator.TrainSpec(census_input(tf, train_csv, 16), max_steps=2)
        exporter = tf.estimator.FinalExporter("census", lambda: json_receiver(tf))
        eval_spec = tf.estimator.EvalSpec(
            census_input(tf, train_csv, 16), steps=1, exporters=[exporter], name="census-eval"
        )
        tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
        root_handlers = [type(h).__name__ for h in root.handlers]
    finally:
        root.handlers = kept
    return {
        "exact": {
            "root_handlers": root_handlers,
            "signatures": signatures(_export(model_dir, "census")),
        },
        "close": {},
    }


# The stub modules' public names samples import, by module under tensorflow.python.estimator.
STUB_NAMES = {
    "estimator": ["Estimator", "EstimatorV2", "ModeKeys", "WarmStartSettings", "VocabInfo"],
    "model_fn": ["ModeKeys", "EstimatorSpec", "LOSS_METRIC_KEY", "AVERAGE_LOSS_METRIC_KEY"],
    "run_config": ["RunConfig"],
    "training": ["TrainSpec", "EvalSpec", "train_and_evaluate"],
    "exporter": ["FinalExporter", "LatestExporter", "BestExporter", "Exporter"],
    "export.export": [
        "ServingInputReceiver",
        "TensorServingInputReceiver",
        "build_parsing_serving_input_receiver_fn",
        "build_raw_serving_input_receiver_fn",
    ],
    "export.export_output": ["PredictOutput", "ClassificationOutput", "RegressionOutput"],
    "inputs.inputs": ["numpy_input_fn", "pandas_input_fn"],
    "inputs.numpy_io": ["numpy_input_fn"],
    "inputs.pandas_io": ["pandas_input_fn"],
    "canned.dnn": ["DNNClassifier", "DNNClassifierV2", "DNNRegressorV2"],
    "canned.linear": ["LinearRegressor", "LinearClassifierV2", "LinearSDCA"],
    "canned.dnn_linear_combined": ["DNNLinearCombinedClassifierV2"],
    "canned.baseline": ["BaselineRegressor", "BaselineEstimatorV2"],
}


def _public_name(tf, value):
    """Which public name `value` is: tf.estimator's, its export's or experimental's, or
    tf.compat.v1.estimator's (and its inputs'); a string as itself."""
    if isinstance(value, str):
        return value
    places = {
        "tf.estimator": tf.estimator,
        "tf.estimator.export": tf.estimator.export,
        "tf.estimator.experimental": tf.estimator.experimental,
        "tf.compat.v1.estimator": tf.compat.v1.estimator,
        "tf.compat.v1.estimator.inputs": tf.compat.v1.estimator.inputs,
    }
    for place, namespace in places.items():
        for name in dir(namespace):
            if not name.startswith("_") and getattr(namespace, name, None) is value:
                return f"{place}.{name}"
    return f"unknown {type(value).__name__}"


@program
def internal_module_names(tf, workdir):
    found = {}
    for module_name, names in STUB_NAMES.items():
        module = importlib.import_module(f"tensorflow.python.estimator.{module_name}")
        found[module_name] = {name: _public_name(tf, getattr(module, name)) for name in names}
    from tensorflow.python.estimator import model_fn as model_fn_lib
    from tensorflow.python.estimator.inputs import numpy_io

    found["from_imports"] = [
        _public_name(tf, model_fn_lib.ModeKeys),
        _public_name(tf, numpy_io.numpy_input_fn),
    ]
    return {"exact": {"names": json.loads(json.dumps(found))}, "close": {}}
