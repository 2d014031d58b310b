"""What users see when their Estimator code is wrong or at an edge, run on tf.estimator
2.15 and on the kit: each program makes a handful of the mistakes public code and its
users make daily (a model_fn's signature or what it returns, hooks, RunConfig values,
serving receivers, warm starts, ...) and returns, for each, the exception's type and the
first line of its message (`[type, first line]`; `["OK", what it gave]` where 2.15 took
it). A program's functions and the temporary folder are named alike on both sides
(addresses and the folder's path are replaced).

`tests/test_user_errors.py` compares them with 2.15's recording
(`tests/tf215/record_family.py user_error_programs`, into
`tests/data/tf215/user_errors.json`).
"""

import os
import re

import numpy as np

from tests.program_registry import registry

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "user_errors.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def seen(call, workdir):
    """[type name, first line of the message] of what `call()` raises (addresses and
    `workdir` replaced), or ["OK", repr of what it returned]."""
    try:
        result = ["OK", repr(call())]
    except Exception as error:  # what a user sees is the point
        result = [type(error).__name__, (str(error).splitlines() or [""])[0]]
    return [_ADDRESS.sub(" at 0x", part.replace(workdir, "<workdir>")) for part in result]


def seen_each(cases, workdir):
    """{case: seen(call)} of {case: call}, each call given its own folder."""
    results = {}
    for name, call in cases.items():
        folder = os.path.join(workdir, name)
        os.makedirs(folder)
        results[name] = seen(lambda call=call, folder=folder: call(folder), workdir)
    return {"exact": results}


def input_fn(tf, labels=True):
    """Four rows of one feature `x` (and a label), in batches of two."""

    def make():
        features = {"x": np.arange(4, dtype=np.float32).reshape(4, 1)}
        rows = (features, np.ones((4, 1), np.float32)) if labels else features
        return tf.data.Dataset.from_tensor_slices(rows).batch(2)

    return make


def model_fn_of(tf, **changes):
    """A TF1 model_fn (a dense layer, mean squared error, plain SGD) whose spec takes
    `changes` ({field: value}) over its own fields."""

    def model_fn(features, labels, mode):
        out = tf.compat.v1.layers.dense(features["x"], 1)
        fields = {"mode": mode, "predictions": {"y": out}}
        if mode != tf.estimator.ModeKeys.PREDICT:
            fields["loss"] = tf.compat.v1.losses.mean_squared_error(labels, out)
            optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
            global_step = tf.compat.v1.train.get_global_step()
            fields["train_op"] = optimizer.minimize(fields["loss"], global_step)
        fields.update(changes)
        return tf.estimator.EstimatorSpec(**fields)

    return model_fn


def trained_one_step(tf, folder, model_fn=None):
    estimator = tf.estimator.Estimator(model_fn or model_fn_of(tf), model_dir=folder)
    estimator.train(input_fn(tf), steps=1)
    return estimator


# ------------------------------------------------------------------ model_fn
@program
def model_fn_signatures(tf, workdir):
    """model_fns the Estimator refuses for their arguments, or calls and refuses for what
    they return."""

    def misnamed(feature, label, mode):
        return model_fn_of(tf)(feature, label, mode)

    def without_features(labels, mode):
        return None

    def asking_for_more(features, labels, mode, foo):
        return model_fn_of(tf)(features, labels, mode)

    def returning_a_tuple(features, labels, mode):
        spec = model_fn_of(tf)(features, labels, mode)
        return spec.loss, spec.train_op

    def returning_nothing(features, labels, mode):
        model_fn_of(tf)(features, labels, mode)

    def built(model_fn, **kwargs):
        return lambda folder: tf.estimator.Estimator(model_fn, model_dir=folder, **kwargs) and None

    def trained(model_fn):
        return lambda folder: trained_one_step(tf, folder, model_fn) and None

    return seen_each(
        {
            "misnamed_arguments": built(misnamed),
            "without_features": built(without_features),
            "an_argument_too_many": built(asking_for_more),
            "params_it_does_not_take": built(model_fn_of(tf), params={"a": 1}),
            "returning_a_tuple": trained(returning_a_tuple),
            "returning_nothing": trained(returning_nothing),
        },
        workdir,
    )


# ------------------------------------------------------------------ hooks
@program
def hooks_that_are_not_hooks(tf, workdir):
    """A name or a number where a hook goes: in a spec, and in train, evaluate, predict."""

    def in_the_spec(folder):
        trained_one_step(tf, folder, model_fn_of(tf, training_hooks=["logging"]))

    def given_to(call, hooks):
        def run(folder):
            estimator = trained_one_step(tf, folder)
            if call == "train":
                estimator.train(input_fn(tf), steps=1, hooks=hooks)
            elif call == "evaluate":
                estimator.evaluate(input_fn(tf), steps=1, hooks=hooks)
            else:
                next(estimator.predict(input_fn(tf, labels=False), hooks=hooks))

        return run

    return seen_each(
        {
            "in_the_spec": in_the_spec,
            "train": given_to("train", ["logging"]),
            "evaluate": given_to("evaluate", ["logging"]),
            "predict": given_to("predict", [1]),
        },
        workdir,
    )


# ------------------------------------------------------------------ not callables
@program
def not_callables(tf, workdir):
    """What is not a function where the Estimator calls one: a model_fn given as a name,
    none at all, a Dataset given to train() for its input_fn."""

    def built(model_fn):
        return lambda folder: tf.estimator.Estimator(model_fn, model_dir=folder) and None

    def dataset_as_input_fn(folder):
        estimator = tf.estimator.Estimator(model_fn_of(tf), model_dir=folder)
        estimator.train(input_fn(tf)(), steps=1)

    return seen_each(
        {
            "model_fn_a_name": built("model_fn"),
            "model_fn_none": built(None),
            "input_fn_a_dataset": dataset_as_input_fn,
        },
        workdir,
    )


# ------------------------------------------------------------------ warm starts
@program
def warm_starts_from_nowhere(tf, workdir):
    """`warm_start_from` naming no checkpoint (a path, `WarmStartSettings`, a canned
    estimator's), and a number: what building and training say."""

    def custom(given):
        def run(folder):
            made = tf.estimator.Estimator(model_fn_of(tf), folder, warm_start_from=given(folder))
            made.train(input_fn(tf), steps=1)

        return run

    def canned(folder):
        columns = [tf.feature_column.numeric_column("x")]
        made = tf.estimator.LinearRegressor(columns, folder, warm_start_from=folder + "_gone")
        made.train(input_fn(tf), steps=1)

    settings = tf.estimator.WarmStartSettings
    return seen_each(
        {
            "missing_folder": custom(lambda folder: folder + "_gone"),
            "missing_prefix": custom(lambda folder: settings(folder + "/model.ckpt-3")),
            "a_number": custom(lambda folder: 3),
            "canned_missing_folder": canned,
        },
        workdir,
    )


# ------------------------------------------------------------------ serving receivers
@program
def serving_receivers_refused(tf, workdir):
    """What a serving_input_receiver_fn's receiver refuses (None, a number, a key that is
    no string, alternatives that are no dict), made in a graph as an export makes it,
    and an export whose receiver has a feature that is a number."""

    def in_a_graph(make):
        def run(folder):
            with tf.Graph().as_default():
                x = tf.compat.v1.placeholder(tf.float32, [None, 1])
                make(tf.estimator.export, x)

        return run

    def exported(folder):
        def receiver_fn():
            x = tf.compat.v1.placeholder(tf.float32, [None, 1])
            return tf.estimator.export.ServingInputReceiver({"x": 1.0}, {"x": x})

        trained_one_step(tf, folder).export_saved_model(os.path.join(folder, "export"), receiver_fn)

    return seen_each(
        {
            "features_none": in_a_graph(lambda e, x: e.ServingInputReceiver(None, x)),
            "receivers_none": in_a_graph(lambda e, x: e.ServingInputReceiver(x, None)),
            "feature_a_number": in_a_graph(lambda e, x: e.ServingInputReceiver({"x": 3}, x)),
            "receiver_a_number": in_a_graph(lambda e, x: e.ServingInputReceiver(x, {"x": 3})),
            "feature_key_a_float": in_a_graph(lambda e, x: e.ServingInputReceiver({1.5: x}, x)),
            "receiver_key_an_int": in_a_graph(lambda e, x: e.ServingInputReceiver(x, {1: x})),
            "alternatives_a_list": in_a_graph(lambda e, x: e.ServingInputReceiver(x, x, [x])),
            "alternative_a_number": in_a_graph(
                lambda e, x: e.ServingInputReceiver(x, x, {"raw": {"x": 3}})
            ),
            "alternative_none": in_a_graph(
                lambda e, x: e.ServingInputReceiver(x, x, {"raw": None})
            ),
            "tensor_receiver_none": in_a_graph(lambda e, x: e.TensorServingInputReceiver(None, x)),
            "tensor_receiver_dict": in_a_graph(
                lambda e, x: e.TensorServingInputReceiver({"x": x}, x)
            ),
            "export_of_a_number": exported,
        },
        workdir,
    )


# ------------------------------------------------------------------ RunConfig
@program
def run_config_refusals(tf, workdir):
    """RunConfig settings 2.15 refused (out of range, of the wrong type, both ways of
    saving, an empty model_dir, also through replace()) and its unknown argument."""

    def made(**kwargs):
        return lambda folder: tf.estimator.RunConfig(**kwargs) and None

    return seen_each(
        {
            "steps_and_secs": made(save_checkpoints_steps=1, save_checkpoints_secs=1),
            "keep_checkpoint_max_negative": made(keep_checkpoint_max=-1),
            "save_summary_steps_negative": made(save_summary_steps=-1),
            "save_checkpoints_steps_negative": made(save_checkpoints_steps=-2),
            "log_step_count_steps_zero": made(log_step_count_steps=0),
            "keep_every_n_hours_zero": made(keep_checkpoint_every_n_hours=0),
            "tf_random_seed_text": made(tf_random_seed="42"),
            "session_config_a_dict": made(session_config={"a": 1}),
            "model_dir_empty": made(model_dir=""),
            "replaced_model_dir_empty": lambda folder: tf.estimator.RunConfig().replace(
                model_dir=""
            ),
            "replaced_seed_a_float": lambda folder: tf.estimator.RunConfig().replace(
                tf_random_seed=1.5
            ),
            "unknown_argument": made(save_steps=3),
        },
        workdir,
    )


# ------------------------------------------------------------------ EstimatorSpec
@program
def spec_fields_refused(tf, workdir):
    """EstimatorSpecs made in a graph with a field missing or of the wrong kind, one
    mistake or two at a time (which 2.15 named first)."""

    def spec(mode, **fields):
        def run(folder):
            with tf.Graph().as_default():
                made = {name: make(tf) for name, make in fields.items()}
                tf.estimator.EstimatorSpec(mode, **made)

        return run

    def loss(tf):
        return tf.constant(1.0)

    def train_op(tf):
        return tf.no_op()

    return seen_each(
        {
            "train_neither_loss_nor_train_op": spec("train"),
            "train_no_loss_train_op_text": spec("train", train_op=lambda tf: "step"),
            "train_loss_a_number_no_train_op": spec("train", loss=lambda tf: 1.0),
            "train_loss_a_number": spec("train", loss=lambda tf: 1.0, train_op=train_op),
            "train_no_loss": spec("train", train_op=train_op),
            "eval_no_loss": spec("eval"),
            "eval_loss_a_vector": spec("eval", loss=lambda tf: tf.constant([1.0, 2.0])),
            "predict_no_predictions": spec("infer"),
            "predictions_a_list": spec("infer", predictions=lambda tf: [tf.constant([1.0])]),
            "metrics_a_list": spec(
                "eval", loss=loss, eval_metric_ops=lambda tf: [tf.compat.v1.metrics.mean(1.0)]
            ),
            "metric_a_tensor": spec(
                "eval", loss=loss, eval_metric_ops=lambda tf: {"m": tf.constant(1.0)}
            ),
            "hooks_numbers": spec(
                "train", loss=loss, train_op=train_op, training_hooks=lambda tf: [1]
            ),
            "scaffold_a_number": spec("train", loss=loss, train_op=train_op, scaffold=lambda tf: 1),
            "export_outputs_tensors": spec(
                "infer",
                predictions=lambda tf: {"y": tf.constant([1.0])},
                export_outputs=lambda tf: {"y": tf.constant([1.0])},
            ),
        },
        workdir,
    )


# ------------------------------------------------------------------ canned estimators
@program
def canned_arguments_refused(tf, workdir):
    """Canned estimators given feature columns of the wrong kind (a name, a categorical
    column for a DNN), none, one class, a vocabulary that is a string: built, then
    trained one step."""

    def trained(namespace, class_name, *args, **kwargs):
        def run(folder):
            space = tf.estimator if namespace == "v2" else tf.compat.v1.estimator
            getattr(space, class_name)(*args, model_dir=folder, **kwargs).train(
                input_fn(tf), steps=1
            )

        return run

    x = tf.feature_column.numeric_column("x")
    category = tf.feature_column.categorical_column_with_identity("x", 3)
    return seen_each(
        {
            "linear_column_a_name": trained("v2", "LinearRegressor", ["x"]),
            "dnn_column_a_name": trained("v2", "DNNRegressor", [3], ["x"]),
            "dnn_categorical_column": trained("v2", "DNNClassifier", [3], [category]),
            "v1_dnn_categorical_column": trained("v1", "DNNClassifier", [3], [category]),
            "linear_no_columns": trained("v2", "LinearRegressor", []),
            "linear_one_class": trained("v2", "LinearClassifier", [x], n_classes=1),
            "v1_linear_one_class": trained("v1", "LinearClassifier", [x], n_classes=1),
            "vocabulary_a_string": trained("v2", "LinearClassifier", [x], label_vocabulary="ab"),
        },
        workdir,
    )


# ------------------------------------------------------------------ labels
@program
def label_types_refused(tf, workdir):
    """A classifier's labels of the wrong type: ids given a vocabulary, words given none,
    floats to more than two classes; two and three classes, V2 and V1 classes."""

    def labelled(labels):
        features = {"x": np.ones((len(labels), 1), np.float32)}
        return lambda: tf.data.Dataset.from_tensor_slices((features, np.array(labels))).batch(2)

    def trained(namespace, n_classes, labels, **kwargs):
        def run(folder):
            space = tf.estimator if namespace == "v2" else tf.compat.v1.estimator
            columns = [tf.feature_column.numeric_column("x")]
            made = space.LinearClassifier(columns, folder, n_classes, **kwargs)
            made.train(labelled(labels), steps=1)

        return run

    cases = {}
    for namespace in ("v2", "v1"):
        for n_classes in (2, 3):
            vocabulary = ["a", "b", "c"][:n_classes]
            cases[f"{namespace}_{n_classes}_ids_given_a_vocabulary"] = trained(
                namespace, n_classes, [[0], [1]], label_vocabulary=vocabulary
            )
            cases[f"{namespace}_{n_classes}_words_without_vocabulary"] = trained(
                namespace, n_classes, [[b"a"], [b"b"]]
            )
    cases["v2_3_floats"] = trained("v2", 3, [[0.5], [1.0]])
    return seen_each(cases, workdir)


# ------------------------------------------------------------------ input_fn
@program
def input_fn_mistakes(tf, workdir):
    """input_fns returning what the Estimator cannot read (three things, a Dataset of
    triples, a bare tensor to a canned estimator), asking for arguments it passes or
    not (`params`, `config`, `mode`, `input_context`, one of their own), and a canned
    estimator trained without labels."""

    def model_fn(features, labels, mode, params):
        features = features if isinstance(features, dict) else {"x": features}
        return model_fn_of(tf)(features, labels, mode)

    def trained(input_fn, canned=False):
        def run(folder):
            if canned:
                columns = [tf.feature_column.numeric_column("x")]
                made = tf.estimator.LinearRegressor(columns, model_dir=folder)
            else:
                made = tf.estimator.Estimator(model_fn, folder, params={"p": 1})
            made.train(input_fn, steps=1)
            return int(made.get_variable_value("global_step"))

        return run

    x, y = {"x": np.ones((2, 1), np.float32)}, np.ones((2, 1), np.float32)
    rows = input_fn(tf)
    asked = []

    def asking(name):
        def given(**kwargs):
            asked.append(f"{name}: {type(kwargs[name]).__name__}")
            return rows()

        return {
            "params": lambda params: given(params=params),
            "config": lambda config: given(config=config),
            "mode": lambda mode: given(mode=mode),
            "input_context": lambda input_context: given(input_context=input_context),
        }[name]

    cases = {
        "three_things": trained(lambda: (x, y, y)),
        "dataset_of_triples": trained(lambda: tf.data.Dataset.from_tensors((x, y, y))),
        "tensor_features_custom": trained(lambda: tf.data.Dataset.from_tensors((x["x"], y))),
        "tensor_features_canned": trained(
            lambda: tf.data.Dataset.from_tensors((x["x"], y)), canned=True
        ),
        "canned_without_labels": trained(input_fn(tf, labels=False), canned=True),
        "an_argument_of_its_own": trained(lambda batch_size: rows()),
    }
    for name in ("params", "config", "mode", "input_context"):
        cases[f"asking_for_{name}"] = trained(asking(name))
    results = seen_each(cases, workdir)
    results["exact"]["given"] = asked
    return results


# ------------------------------------------------------------------ calls
_SAID = re.compile(r"Skipping training|Could not find trained model|No checkpoint|fresh")


class _Said:
    """The lines TensorFlow's logger shows (at INFO, as samples set it) that speak of
    what a call skipped or could not find."""

    def __init__(self, tf, said=_SAID):
        import logging

        class Handler(logging.Handler):
            def emit(handler, record):
                line = f"{record.levelname}: {record.getMessage()}"
                if said.search(line):
                    self.lines.append(line)

        self.tf, self.lines, self.handler = tf, [], Handler(logging.INFO)

    def __enter__(self):
        self.level = self.tf.get_logger().level
        self.tf.compat.v1.logging.set_verbosity(self.tf.compat.v1.logging.INFO)
        self.tf.get_logger().addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        self.tf.get_logger().removeHandler(self.handler)
        self.tf.get_logger().setLevel(self.level)


@program
def call_mistakes(tf, workdir):
    """train/evaluate/predict called wrongly or at an edge: steps of 0 or -1, steps and
    max_steps both, max_steps already reached, evaluating and predicting before any
    checkpoint or from one that is not there, predict_keys naming no prediction, an
    export with no receiver: what each raised or gave, and the lines logged."""

    def estimator(folder):
        return tf.estimator.Estimator(model_fn_of(tf), model_dir=folder)

    def trained(folder):
        return trained_one_step(tf, folder)

    def first_prediction(made, **kwargs):
        return sorted(next(made.predict(input_fn(tf, labels=False), **kwargs)))

    def max_steps_again(folder):
        made = estimator(folder)
        made.train(input_fn(tf), max_steps=2)
        made.train(input_fn(tf), max_steps=2)
        made.train(input_fn(tf), max_steps=1)
        return int(made.get_variable_value("global_step"))

    missing = "model.ckpt-99"
    cases = {
        "train_steps_zero": lambda d: estimator(d).train(input_fn(tf), steps=0) and None,
        "train_steps_negative": lambda d: estimator(d).train(input_fn(tf), steps=-1) and None,
        "train_max_steps_zero": lambda d: estimator(d).train(input_fn(tf), max_steps=0) and None,
        "train_both_steps": lambda d: estimator(d).train(input_fn(tf), steps=1, max_steps=2),
        "train_steps_as_hooks": lambda d: estimator(d).train(input_fn(tf), 1) and None,
        "train_max_steps_reached": max_steps_again,
        "evaluate_untrained": lambda d: sorted(estimator(d).evaluate(input_fn(tf), steps=1)),
        "evaluate_steps_zero": lambda d: trained(d).evaluate(input_fn(tf), steps=0),
        "evaluate_missing_checkpoint": lambda d: trained(d).evaluate(
            input_fn(tf), steps=1, checkpoint_path=os.path.join(d, missing)
        ),
        "predict_untrained": lambda d: first_prediction(estimator(d)),
        "predict_missing_checkpoint": lambda d: first_prediction(
            trained(d), checkpoint_path=os.path.join(d, missing)
        ),
        "predict_missing_key": lambda d: first_prediction(trained(d), predict_keys=["nope"]),
        "export_without_receiver": lambda d: trained(d).export_saved_model(d, None),
    }
    with _Said(tf) as said:
        results = seen_each(cases, workdir)
    results["exact"]["logged"] = [line.replace(workdir, "<workdir>") for line in said.lines]
    return results


@program
def exports_before_training(tf, workdir):
    """export_saved_model and experimental_export_all_saved_models with no checkpoint
    given and none in model_dir: the error, and every line logged before it (2.15 looked
    for the checkpoint before it called model_fn)."""

    def exported(folder, export):
        made = tf.estimator.Estimator(model_fn_of(tf), model_dir=folder)
        with _Said(tf, re.compile("")) as said:
            error = seen(lambda: export(made, os.path.join(folder, "export")), workdir)
        return [*error, *(line.replace(workdir, "<workdir>") for line in said.lines)]

    def receiver():
        x = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    def supervised():
        x = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
        y = tf.compat.v1.placeholder(tf.float32, [None, 1], name="y")
        return tf.estimator.export.build_raw_supervised_input_receiver_fn({"x": x}, y)()

    exports = {
        "served": lambda made, to: made.export_saved_model(to, receiver),
        "evaluated": lambda made, to: made.export_saved_model(
            to, supervised, experimental_mode="eval"
        ),
        "every_mode": lambda made, to: made.experimental_export_all_saved_models(
            to, {"train": supervised, "infer": receiver}
        ),
    }
    return {
        "exact": {
            name: exported(os.path.join(workdir, name), export) for name, export in exports.items()
        }
    }


@program
def evaluation_names(tf, workdir):
    """evaluate(name=...) given a number or bytes (2.15 joined it to `eval_`), and
    eval_dir of a number, for a TF1 model_fn and a canned linear model."""
    column = tf.feature_column.numeric_column("x")

    def evaluated(make, name):
        def call(folder):
            return sorted(make(folder).evaluate(input_fn(tf), steps=1, name=name))

        return call

    def tf1(folder):
        return tf.estimator.Estimator(model_fn_of(tf), model_dir=folder)

    def linear(folder):
        return tf.estimator.LinearRegressor([column], model_dir=folder)

    return seen_each(
        {
            "tf1_number": evaluated(tf1, 3),
            "tf1_bytes": evaluated(tf1, b"held_out"),
            "tf1_empty": evaluated(tf1, ""),
            "linear_number": evaluated(linear, 3),
            "eval_dir_number": lambda d: tf1(d).eval_dir(7),
        },
        workdir,
    )


# ------------------------------------------------------------------ errors as ops ran
@program
def errors_when_steps_run(tf, workdir):
    """What a train step raises when an op fails as it runs, in a TF1 graph (a
    tf.compat.v1.estimator classifier's labels out of range or not in its vocabulary, a
    TF1 model_fn's loss that is not a scalar) and in a V2 class: the type and first line
    (a session's `Graph execution error:`)."""

    def labelled(labels):
        features = {"x": np.ones((len(labels), 1), np.float32)}
        return lambda: tf.data.Dataset.from_tensor_slices((features, np.array(labels))).batch(2)

    def classifier(namespace, labels, **kwargs):
        def run(folder):
            space = tf.estimator if namespace == "v2" else tf.compat.v1.estimator
            columns = [tf.feature_column.numeric_column("x")]
            space.LinearClassifier(columns, folder, **kwargs).train(labelled(labels), steps=1)

        return run

    def vector_loss(features, labels, mode):
        out = tf.compat.v1.layers.dense(features["x"], 1)
        loss = tf.reduce_sum(tf.square(out - labels), axis=1)
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
        step = optimizer.minimize(tf.reduce_mean(loss), tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=step)

    return seen_each(
        {
            "v1_label_out_of_range": classifier("v1", [[0], [2]]),
            "v1_three_classes_label_out_of_range": classifier("v1", [[0], [3]], n_classes=3),
            "v1_label_not_in_vocabulary": classifier(
                "v1", [[b"a"], [b"c"]], label_vocabulary=["a", "b"]
            ),
            "v2_label_out_of_range": classifier("v2", [[0], [2]]),
            "model_fn_loss_a_vector": lambda folder: trained_one_step(tf, folder, vector_loss),
        },
        workdir,
    )


# ------------------------------------------------------------------ missing features
@program
def features_missing(tf, workdir):
    """A feature column naming a feature the input_fn does not give: canned linear (V2
    and V1) and DNN estimators, and a TF1 model_fn's input_layer."""

    def canned(namespace, class_name, *args):
        def run(folder):
            space = tf.estimator if namespace == "v2" else tf.compat.v1.estimator
            columns = [tf.feature_column.numeric_column("z")]
            getattr(space, class_name)(*args, columns, folder).train(input_fn(tf), steps=1)

        return run

    def input_layer(features, labels, mode):
        columns = [tf.feature_column.numeric_column("z")]
        net = tf.compat.v1.feature_column.input_layer(features, columns)
        step = tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1)
        return tf.estimator.EstimatorSpec(mode, loss=tf.reduce_mean(net), train_op=step)

    return seen_each(
        {
            "linear": canned("v2", "LinearRegressor"),
            "v1_linear": canned("v1", "LinearRegressor"),
            "dnn": canned("v2", "DNNRegressor", [2]),
            "model_fn_input_layer": lambda folder: trained_one_step(tf, folder, input_layer),
        },
        workdir,
    )


# ------------------------------------------------------------------ reading a model
@program
def reading_what_is_not_there(tf, workdir):
    """get_variable_value of a name the checkpoint lacks, a canned linear model given
    no feature columns at all (None) and trained, and what an untrained model reads."""

    def linear_without_columns(folder):
        tf.estimator.LinearRegressor(None, folder).train(input_fn(tf), steps=1)

    def untrained(folder):
        return tf.estimator.Estimator(model_fn_of(tf), folder)

    return seen_each(
        {
            "variable_not_there": lambda d: trained_one_step(tf, d).get_variable_value("nope"),
            "variable_untrained": lambda d: untrained(d).get_variable_value("dense/kernel"),
            "names_untrained": lambda d: untrained(d).get_variable_names(),
            "latest_untrained": lambda d: untrained(d).latest_checkpoint(),
            "linear_columns_none": linear_without_columns,
        },
        workdir,
    )
