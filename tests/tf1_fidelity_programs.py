"""More TF1-style Estimator programs in the shape of public samples after `tf_upgrade_v2`.

As `tests/tf1_programs.py`: each program takes the estimator module (`tf.estimator`
under TF 2.15, this kit's under TF 2.21) and a fresh folder and returns what a user
sees, as JSON-able values.  `tests/tf215/record_tf1_fidelity.py` recorded them under
tf.estimator 2.15 into `tests/data/tf215/tf1_fidelity.json`;
`tests/test_estimator_tf1_fidelity.py` runs them here and compares.  Every model starts
from zeros (or fixed values), so trained values are deterministic on both sides.
"""

import contextlib
import logging
import os
import re

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1
X = np.linspace(-1, 1, 32).astype(np.float32)
Y = (X > 0.1).astype(np.int64)


def _batches(batch=8):
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(batch)


def logistic_model_fn(est, events=None, learning_rate=0.5):
    """A zero-initialized logistic regression on `get_variable`, with TF1 metrics, a TF1
    summary, export outputs of each kind, and (given `events`) recording hooks in each
    of the spec's hook lists."""

    def model_fn(features, labels, mode, params):
        x = tf.reshape(tf.cast(features["x"], tf.float32), [-1, 1])
        with v1.variable_scope("logistic"):
            weight = v1.get_variable("weight", [1, 1], initializer=v1.zeros_initializer())
            bias = v1.get_variable("bias", [1], initializer=v1.constant_initializer(0.25))
        logits = tf.matmul(x, weight) + bias
        probability = tf.sigmoid(logits)
        classes = tf.cast(probability > 0.5, tf.int64)
        predictions = {"probability": probability, "class": classes}
        hooks = {}
        if events is not None:
            hooks = {
                "training_chief_hooks": [Recorder("chief", events)],
                "training_hooks": [Recorder("spec", events)],
                "evaluation_hooks": [Recorder("eval_spec", events)],
                "prediction_hooks": [Recorder("predict_spec", events)],
            }
        if mode == est.ModeKeys.PREDICT:
            scores = tf.concat([1 - probability, probability], axis=1)
            names = tf.tile(tf.constant([["no", "yes"]]), [tf.shape(x)[0], 1])
            return est.EstimatorSpec(
                mode,
                predictions=predictions,
                export_outputs={
                    "serving_default": est.export.ClassificationOutput(scores, names),
                    "probability": est.export.RegressionOutput(tf.reshape(probability, [-1])),
                    "everything": est.export.PredictOutput(predictions),
                },
                prediction_hooks=hooks.get("prediction_hooks"),
            )
        labels = tf.reshape(tf.cast(labels, tf.float32), [-1, 1])
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        v1.summary.scalar("mean_probability", tf.reduce_mean(probability))
        train_op = v1.train.GradientDescentOptimizer(learning_rate).minimize(
            loss, global_step=v1.train.get_or_create_global_step()
        )
        metrics = {
            "accuracy": v1.metrics.accuracy(labels, tf.cast(classes, tf.float32)),
            "auc": v1.metrics.auc(labels, probability),
            "mean_probability": v1.metrics.mean(probability),
        }
        return est.EstimatorSpec(
            mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=metrics,
            training_chief_hooks=hooks.get("training_chief_hooks"),
            training_hooks=hooks.get("training_hooks"),
            evaluation_hooks=hooks.get("evaluation_hooks"),
        )

    return model_fn


class Recorder(v1.train.SessionRunHook):
    """Appends each call of TF1's hook protocol to `events`, with the global step as the
    session holds it at that point (read in a run of its own: no race with the train op)."""

    def __init__(self, name, events):
        self.name, self.events = name, events

    def begin(self):
        self.step = v1.train.get_global_step()
        self.events.append(f"{self.name}.begin")

    def after_create_session(self, session, coord):
        self.events.append(f"{self.name}.after_create_session:{session.run(self.step)}")

    def before_run(self, run_context):
        self.events.append(f"{self.name}.before_run")

    def after_run(self, run_context, run_values):
        step = run_context.session.run(self.step)
        self.events.append(f"{self.name}.after_run:{step}")

    def end(self, session):
        self.events.append(f"{self.name}.end:{session.run(self.step)}")


class Listener(v1.train.CheckpointSaverListener):
    def __init__(self, events):
        self.events = events

    def begin(self):
        self.events.append("listener.begin")

    def before_save(self, session, global_step_value):
        self.events.append(f"listener.before_save:{global_step_value}")

    def after_save(self, session, global_step_value):
        self.events.append(f"listener.after_save:{global_step_value}")

    def end(self, session, global_step_value):
        self.events.append(f"listener.end:{global_step_value}")


def _floats(values, digits=6):
    return {k: round(float(v), digits) for k, v in sorted(values.items())}


# ------------------------------------------------------------ hook protocol
def hook_protocol(est, workdir):
    """Every hook list of train, evaluate and predict, and a saving listener: the order
    of their calls, interleaved, with the global step each saw."""
    events = []
    model = est.Estimator(
        logistic_model_fn(est, events),
        model_dir=os.path.join(workdir, "model"),
        config=est.RunConfig(save_checkpoints_steps=2, save_summary_steps=100),
    )
    model.train(
        _batches,
        steps=3,
        hooks=[Recorder("call", events)],
        saving_listeners=[Listener(events)],
    )
    train_events = list(events)
    del events[:]
    model.evaluate(_batches, steps=2, hooks=[Recorder("eval_call", events)])
    eval_events = list(events)
    del events[:]

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X[:6]}).batch(4)

    predictions = list(model.predict(predict_input_fn, hooks=[Recorder("predict_call", events)]))
    return {
        "train": train_events,
        "evaluate": eval_events,
        "predict": list(events),
        "predictions": len(predictions),
    }


# -------------------------------------------------- a CheckpointSaverHook of the user's
def own_checkpoint_saver(est, workdir):
    """A `CheckpointSaverHook` passed to train(): the Estimator adds no saver of its own
    and hands it the saving listeners."""
    events = []
    model_dir = os.path.join(workdir, "model")
    model = est.Estimator(
        logistic_model_fn(est),
        model_dir=model_dir,
        config=est.RunConfig(save_checkpoints_steps=100, keep_checkpoint_max=3),
    )
    saver_hook = est.CheckpointSaverHook(model_dir, save_steps=3, listeners=[Listener(events)])
    model.train(_batches, steps=7, hooks=[saver_hook], saving_listeners=[Listener(events)])
    state = tf.train.get_checkpoint_state(model_dir)
    return {
        "events": events,
        "checkpoints": [os.path.basename(p) for p in state.all_model_checkpoint_paths],
    }


# ------------------------------------------------------------- model_dir contents
def _event_steps(folder):
    """{tag: [steps]} of the events files directly in `folder` (not sub-folders)."""
    steps = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in v1.train.summary_iterator(path):
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(int(event.step))
    return {tag: sorted(found) for tag, found in sorted(steps.items())}


def _listing(folder):
    """The files under `folder`, events files by their prefix."""
    names = []
    for root, _, files in tf.io.gfile.walk(folder):
        for name in files:
            if name.startswith("events.out.tfevents."):
                name = "events.out.tfevents.*"
            names.append(os.path.relpath(os.path.join(root, name), folder))
    return sorted(set(names))


def model_dir_contents(est, workdir):
    """What train (twice) and evaluate leave in model_dir: checkpoints, the graph,
    events' tags and steps; and evaluate's and the variables' values."""
    model_dir = os.path.join(workdir, "model")
    model = est.Estimator(
        logistic_model_fn(est),
        model_dir=model_dir,
        config=est.RunConfig(
            save_checkpoints_steps=4,
            save_summary_steps=3,
            log_step_count_steps=5,
            keep_checkpoint_max=2,
        ),
    )
    model.train(_batches, steps=10)
    model.train(_batches, max_steps=13)
    metrics = model.evaluate(_batches, steps=3, name="validation")
    # Tags only: the summary saver reads the global step beside the train op, before or
    # after its update (on 2.15 as here), so its steps may shift by one from run to run.
    tags = sorted(_event_steps(model_dir))
    return {
        "files": _listing(model_dir),
        "event_tags": tags,
        "eval_events": _event_steps(os.path.join(model_dir, "eval_validation")),
        "metrics": _floats(metrics),
        "variable_names": model.get_variable_names(),
        "weight": round(float(model.get_variable_value("logistic/weight")[0, 0]), 5),
        "latest": os.path.basename(model.latest_checkpoint()),
    }


# ------------------------------------------------------------ the Estimator's log
_NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def _info_lines():
    """Collects INFO lines from TensorFlow's logger and the root (this kit logs under
    its modules' names); yields the list they go to."""
    handler = _Lines()
    loggers = [logging.getLogger(), logging.getLogger("tensorflow")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)


def _normalized(line, workdir):
    line = line.replace(workdir, "<workdir>")
    # The export's temporary folder (2.15: temp-<timestamp>; the kit: .tmp-<timestamp>-<us>).
    line = re.sub(r"/(temp|\.tmp)-[\d-]+/", "/<temp>/", line)
    return _NUMBER.sub("N", line)


LOG_MARKERS = (
    "loss = ",
    "Loss for final step",
    "Saving checkpoints for",
    "Saving dict for global step",
    "Restoring parameters from",
    "Calling checkpoint listeners",
    "Done calling model_fn",
    "Starting evaluation",
    "Inference Time",
    "Evaluation [",
    "Finished evaluation",
    "Create CheckpointSaverHook",
    "Graph was finalized",
    "Running local_init_op",
    "Done running local_init_op",
    "Signatures INCLUDED",
    "Signatures EXCLUDED",
    "Restoring parameters",
    "SavedModel written to",
    "Skipping training",
)


def log_lines(est, workdir):
    """The Estimator's INFO lines a user reads in train, evaluate, predict and export,
    numbers and the folder replaced."""
    with _info_lines() as seen:
        model = est.Estimator(
            logistic_model_fn(est),
            model_dir=os.path.join(workdir, "model"),
            config=est.RunConfig(log_step_count_steps=4, save_checkpoints_steps=5),
        )
        model.train(_batches, steps=6)
        model.train(_batches, max_steps=6)
        model.evaluate(_batches, steps=2)
        list(model.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X[:2]}).batch(2)))
        model.export_saved_model(
            os.path.join(workdir, "export"),
            est.export.build_parsing_serving_input_receiver_fn(
                {"x": tf.io.FixedLenFeature([1], tf.float32)}
            ),
        )
    return {"lines": marked_lines(seen, workdir, LOG_MARKERS)}


def marked_lines(lines, workdir, markers):
    """The first lines of `lines` holding any of `markers`, numbers and the folder
    replaced, each once."""
    kept = []
    for line in lines:
        first = line.splitlines()[0] if line else line
        if any(marker in first for marker in markers):
            normalized = _normalized(first, workdir)
            if not kept or kept[-1] != normalized:  # (two loggers may both see one)
                kept.append(normalized)
    return kept


# --------------------------------------------------------- every export mode at once
def _meta_graphs(export_dir):
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    result = {}
    for graph in saved.meta_graphs:
        tags = ",".join(sorted(graph.meta_info_def.tags))
        result[tags] = {
            "signatures": {
                name: {
                    "method": sig.method_name,
                    "inputs": sorted(sig.inputs),
                    "outputs": sorted(sig.outputs),
                }
                for name, sig in sorted(graph.signature_def.items())
            },
            "train_op": "saved_model_train_op" in graph.collection_def,
        }
    return result


def _run_signature(export_dir, tags, name, feeds, fetch_keys, repeat=1, then=()):
    """Loads the MetaGraph `tags`, feeds signature `name`, runs `fetch_keys` `repeat`
    times, then `then` once; returns the last values."""
    with tf.Graph().as_default(), v1.Session() as session:
        graph = v1.saved_model.loader.load(session, tags, export_dir)
        signature = graph.signature_def[name]
        feed = {signature.inputs[k].name: v for k, v in feeds.items()}
        for _ in range(repeat):
            values = session.run({k: signature.outputs[k].name for k in fetch_keys}, feed)
        if then:
            values = session.run({k: signature.outputs[k].name for k in then}, feed)
        return {k: np.asarray(v).ravel().round(5).tolist() for k, v in values.items()}


def export_all_modes(est, workdir):
    """`experimental_export_all_saved_models` with TRAIN, EVAL and PREDICT receivers and
    `export_saved_model(experimental_mode=EVAL)`: MetaGraphs, signatures and what they
    compute when loaded."""
    model = est.Estimator(logistic_model_fn(est), model_dir=os.path.join(workdir, "model"))
    model.train(_batches, steps=5)
    features = {"x": tf.constant(X[:4])}
    supervised = est.experimental.build_raw_supervised_input_receiver_fn(
        features, tf.constant(Y[:4])
    )
    serving = est.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([1], tf.float32)}
    )
    all_dir = model.experimental_export_all_saved_models(
        os.path.join(workdir, "all"),
        {
            est.ModeKeys.TRAIN: supervised,
            est.ModeKeys.EVAL: supervised,
            est.ModeKeys.PREDICT: serving,
        },
    )
    eval_dir = model.export_saved_model(
        os.path.join(workdir, "eval"), supervised, experimental_mode=est.ModeKeys.EVAL
    )
    all_dir, eval_dir = (p.decode() if isinstance(p, bytes) else p for p in (all_dir, eval_dir))
    feeds = {"x": X[:8], "label": Y[:8]}
    return {
        "all": _meta_graphs(all_dir),
        "eval_only": _meta_graphs(eval_dir),
        "variables": sorted(
            name
            for name, _ in tf.train.list_variables(os.path.join(all_dir, "variables", "variables"))
        ),
        # (Updates, then the value: fetched in one run, the value may read the totals
        # before or after the update.)
        "eval_run": _run_signature(
            all_dir, ["eval"], "eval", feeds, ["loss", "metrics/accuracy/update_op"], 2
        ),
        "eval_value": _run_signature(
            all_dir,
            ["eval"],
            "eval",
            feeds,
            ["metrics/accuracy/update_op"],
            2,
            then=["metrics/accuracy/value", "metrics/auc/value"],
        ),
        "train_run": _run_signature(all_dir, ["train"], "train", feeds, ["loss"]),
        "files": _listing(all_dir),
    }


# ------------------------------------------------------------------ input_fns
def input_fn_shapes(est, workdir):
    """numpy_input_fn, a one-shot iterator's next element, and (features, labels) tensors
    from an input_fn, in train, evaluate and predict."""
    model = est.Estimator(logistic_model_fn(est), model_dir=os.path.join(workdir, "model"))
    numpy_train = v1.estimator.inputs.numpy_input_fn(
        {"x": X}, Y, batch_size=8, num_epochs=None, shuffle=False
    )
    model.train(numpy_train, steps=3)

    def one_shot():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": X[::-1]}, Y[::-1])).repeat().batch(4)
        return v1.data.make_one_shot_iterator(dataset).get_next()

    model.train(one_shot, steps=2)

    def tensors():
        return {"x": tf.constant(X[:5])}, tf.constant(Y[:5])

    model.train(tensors, steps=2)
    numpy_eval = v1.estimator.inputs.numpy_input_fn(
        {"x": X}, Y, batch_size=10, num_epochs=1, shuffle=False
    )
    finite = model.evaluate(numpy_eval)
    by_tensors = model.evaluate(tensors, steps=1)
    numpy_predict = v1.estimator.inputs.numpy_input_fn(
        {"x": X[:7]}, batch_size=3, num_epochs=1, shuffle=False
    )
    predictions = [round(float(p["probability"][0]), 5) for p in model.predict(numpy_predict)]
    return {
        "finite_eval": _floats(finite),
        "tensors_eval": _floats(by_tensors),
        "predictions": predictions,
        "weight": round(float(model.get_variable_value("logistic/weight")[0, 0]), 5),
    }


# --------------------------------------------------------------- warm starts
def embedding_model_fn(est, prefix):
    """Words through a TF1 embedding (`get_variable`) and a dense layer under `prefix`."""

    def model_fn(features, labels, mode, params):
        table = tf.lookup.StaticVocabularyTable(
            tf.lookup.TextFileInitializer(
                params["vocabulary"],
                tf.string,
                tf.lookup.TextFileIndex.WHOLE_LINE,
                tf.int64,
                tf.lookup.TextFileIndex.LINE_NUMBER,
            ),
            num_oov_buckets=1,
        )
        ids = table.lookup(features["word"])
        embeddings = v1.get_variable(
            "embeddings",
            [params["size"] + 1, 2],
            initializer=v1.constant_initializer(np.arange(2 * params["size"] + 2) / 10),
        )
        hidden = tf.nn.embedding_lookup(embeddings, ids)
        logits = v1.layers.dense(
            hidden, 1, name=f"{prefix}dense", kernel_initializer=v1.zeros_initializer()
        )
        labels = tf.reshape(tf.cast(labels, tf.float32), [-1, 1])
        loss = v1.losses.sigmoid_cross_entropy(labels, logits)
        # A rate of 0: training moves nothing, so the values read are the warm start's.
        train_op = v1.train.GradientDescentOptimizer(0.0).minimize(
            loss, global_step=v1.train.get_global_step()
        )
        return est.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def warm_start_settings(est, workdir):
    """`WarmStartSettings` with a regex, a renamed variable and a reordered vocabulary."""
    old_vocab = os.path.join(workdir, "old.txt")
    new_vocab = os.path.join(workdir, "new.txt")
    os.makedirs(workdir, exist_ok=True)
    with open(old_vocab, "w") as f:
        f.write("apple\nbanana\ncherry\n")
    with open(new_vocab, "w") as f:
        f.write("cherry\ndate\napple\nfig\n")

    def input_fn():
        words = tf.constant(["apple", "fig"])
        return {"word": words}, tf.constant([1, 0])

    first_dir = os.path.join(workdir, "first")
    first = est.Estimator(
        embedding_model_fn(est, ""),
        model_dir=first_dir,
        params={"vocabulary": old_vocab, "size": 3},
    )
    first.train(input_fn, steps=1)
    warm = est.Estimator(
        embedding_model_fn(est, "renamed_"),
        model_dir=os.path.join(workdir, "warm"),
        params={"vocabulary": new_vocab, "size": 4},
        warm_start_from=est.WarmStartSettings(
            ckpt_to_initialize_from=first_dir,
            vars_to_warm_start="embeddings|renamed_dense/bias",
            var_name_to_vocab_info={
                "embeddings": est.VocabInfo(
                    new_vocab=new_vocab,
                    new_vocab_size=4,
                    num_oov_buckets=1,
                    old_vocab=old_vocab,
                    old_vocab_size=3,
                )
            },
            var_name_to_prev_var_name={"renamed_dense/bias": "dense/bias"},
        ),
    )
    warm.train(input_fn, steps=1)
    return {
        "embeddings": np.asarray(warm.get_variable_value("embeddings")).round(5).tolist(),
        "bias": np.asarray(warm.get_variable_value("renamed_dense/bias")).round(5).tolist(),
        "first_bias": np.asarray(first.get_variable_value("dense/bias")).round(5).tolist(),
        "variables": warm.get_variable_names(),
    }


# --------------------------------------------------------------- stock hooks
def _shown(value):
    """A logged value as a formatter sees it: its type, and numbers to 4 digits."""
    array = np.asarray(value)
    if array.dtype.kind == "f":
        return f"{type(value).__name__}:{np.round(array, 4).ravel()[:2].tolist()}"
    return f"{type(value).__name__}:{value!r}"


def stock_hook_options(est, workdir):
    """LoggingTensorHook with a formatter and at_end beside StopAtStepHook(num_steps)."""
    model = est.Estimator(
        logistic_model_fn(est),
        model_dir=os.path.join(workdir, "model"),
        config=est.RunConfig(log_step_count_steps=None),
    )

    def formatter(values):
        return "seen:" + ",".join(f"{k}={_shown(values[k])}" for k in sorted(values))

    # (Tensors the train op does not write: a variable read beside it may show either
    # value, on 2.15 as here.)
    logged = {"loss": "sigmoid_cross_entropy_loss/value:0", "p": "Sigmoid"}
    with _info_lines() as lines:
        model.train(
            _batches,
            hooks=[
                est.LoggingTensorHook(logged, every_n_iter=2, at_end=True, formatter=formatter),
                est.StopAtStepHook(num_steps=5),
            ],
        )
    seen = []
    for line in lines:
        if line.startswith("seen:") and (not seen or seen[-1] != line):
            seen.append(line)
    return {"seen": seen, "global_step": int(model.get_variable_value("global_step"))}


# ------------------------------------------------------------------- misuse
def _raised(call):
    """(exception type, message) of `call()`, or None when it returns."""
    try:
        result = call()
        if hasattr(result, "__next__"):
            list(result)
    except Exception as error:  # (any error is the record)
        # The nearest Python or TensorFlow class (not a subclass of the kit's own).
        public = next(
            c
            for c in type(error).__mro__
            if c.__module__.split(".")[0] in ("builtins", "tensorflow")
        )
        # (Without what changes from run to run: folders, objects' addresses.)
        message = re.sub(r" at 0x[0-9a-f]+", "", re.sub(r"/\S+/", "<dir>/", str(error)))
        return [public.__name__, message[:300]]
    return None


def _spec_model_fn(est, build):
    """A model_fn whose spec `build(mode, loss, train_op, predictions)` makes."""

    def model_fn(features, labels, mode):
        x = tf.reshape(tf.cast(features["x"], tf.float32), [-1, 1])
        weight = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
        prediction = tf.matmul(x, weight)
        loss = None
        if labels is not None:
            loss = v1.losses.mean_squared_error(
                tf.reshape(tf.cast(labels, tf.float32), [-1, 1]), prediction
            )
        train_op = None
        if mode == est.ModeKeys.TRAIN:
            train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=v1.train.get_global_step()
            )
        return build(mode, loss, train_op, {"y": prediction})

    return model_fn


def misuse(est, workdir):
    """What 2.15 refused, and how: the exception's type and message."""
    ok = _spec_model_fn(
        est,
        lambda mode, loss, train_op, predictions: est.EstimatorSpec(
            mode, loss=loss, train_op=train_op, predictions=predictions
        ),
    )

    def estimator(name, model_fn=ok, **kwargs):
        return est.Estimator(model_fn, model_dir=os.path.join(workdir, name), **kwargs)

    trained = estimator("trained")
    trained.train(_batches, steps=2)

    def spec_of(build):
        return estimator(f"spec{len(cases)}", _spec_model_fn(est, build))

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X[:3]}).batch(3)

    cases = {}
    cases["steps_and_max_steps"] = _raised(lambda: trained.train(_batches, steps=1, max_steps=5))
    cases["zero_steps"] = _raised(lambda: trained.train(_batches, steps=0))
    cases["zero_eval_steps"] = _raised(lambda: trained.evaluate(_batches, steps=0))
    cases["dict_from_model_fn"] = _raised(
        lambda: estimator("dict", lambda features, labels, mode: {"y": features["x"]}).train(
            _batches, steps=1
        )
    )
    cases["no_train_op"] = _raised(
        lambda: spec_of(lambda mode, loss, train_op, p: est.EstimatorSpec(mode, loss=loss)).train(
            _batches, steps=1
        )
    )
    cases["metric_not_a_pair"] = _raised(
        lambda: spec_of(
            lambda mode, loss, train_op, p: est.EstimatorSpec(
                mode, loss=loss, train_op=train_op, eval_metric_ops={"m": loss}
            )
        ).train(_batches, steps=1)
    )
    cases["hook_not_a_hook"] = _raised(
        lambda: spec_of(
            lambda mode, loss, train_op, p: est.EstimatorSpec(
                mode, loss=loss, train_op=train_op, training_hooks=["not a hook"]
            )
        ).train(_batches, steps=1)
    )
    cases["export_output_not_one"] = _raised(
        lambda: spec_of(
            lambda mode, loss, train_op, p: est.EstimatorSpec(
                mode, loss=loss, train_op=train_op, predictions=p, export_outputs={"a": p["y"]}
            )
        ).train(_batches, steps=1)
    )
    cases["unexpected_model_fn_arg"] = _raised(
        lambda: estimator("arg", lambda features, labels, mode, extra: None)
    )
    cases["train_hooks_not_hooks"] = _raised(
        lambda: trained.train(_batches, steps=1, hooks=[lambda: None])
    )
    cases["listener_not_a_listener"] = _raised(
        lambda: trained.train(_batches, steps=1, saving_listeners=[lambda: None])
    )
    cases["train_spec_hook_not_a_hook"] = _raised(
        lambda: est.TrainSpec(_batches, hooks=[lambda: None])
    )
    cases["train_spec_listener_not_a_listener"] = _raised(
        lambda: est.TrainSpec(_batches, saving_listeners=[lambda: None])
    )
    cases["eval_spec_hook_not_a_hook"] = _raised(
        lambda: est.EvalSpec(_batches, hooks=[lambda: None])
    )
    cases["listeners_without_saver"] = _raised(
        lambda: estimator(
            "nosave",
            config=est.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None),
        ).train(_batches, steps=1, saving_listeners=[v1.train.CheckpointSaverListener()])
    )
    cases["export_untrained"] = _raised(
        lambda: estimator("untrained").export_saved_model(
            os.path.join(workdir, "export"),
            est.export.build_raw_serving_input_receiver_fn({"x": tf.constant(X[:1])}),
        )
    )
    cases["missing_variable_value"] = _raised(lambda: trained.get_variable_value("nope"))
    cases["unknown_predict_key"] = _raised(
        lambda: trained.predict(predict_input_fn, predict_keys=["z"])
    )
    untrained = [float(p["y"][0]) for p in estimator("fresh").predict(predict_input_fn)]
    return {"cases": cases, "untrained_predictions": untrained}


# ------------------------------------------------- Scaffold, saver, config
def scaffold_and_config(est, workdir):
    """Scaffold(init_fn, saver) with keep limits of its own, init_from_checkpoint in
    model_fn, RunConfig(session_config, save_checkpoints_steps), predict and evaluate
    of an older checkpoint, predict_keys and yield_single_examples=False."""
    first_dir = os.path.join(workdir, "first")
    first = est.Estimator(logistic_model_fn(est), model_dir=first_dir)
    first.train(_batches, steps=4)

    def model_fn(features, labels, mode, params):
        v1.train.init_from_checkpoint(first_dir, {"logistic/": "logistic/"})
        spec = logistic_model_fn(est)(features, labels, mode, params)

        def init_fn(scaffold, session):
            init_fn_calls.append(mode)

        scaffold = v1.train.Scaffold(
            init_fn=init_fn, saver=v1.train.Saver(max_to_keep=2, sharded=True)
        )
        return spec._replace(scaffold=scaffold)

    init_fn_calls = []
    model_dir = os.path.join(workdir, "second")
    config = est.RunConfig(
        save_checkpoints_steps=2,
        keep_checkpoint_max=10,
        session_config=v1.ConfigProto(
            inter_op_parallelism_threads=1,
            intra_op_parallelism_threads=1,
            allow_soft_placement=True,
        ),
    )
    second = est.Estimator(model_fn, model_dir=model_dir, config=config)
    second.train(_batches, steps=7)
    state = tf.train.get_checkpoint_state(model_dir)
    older = os.path.join(model_dir, "model.ckpt-6")

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X[:5]}).batch(2)

    batches = list(
        second.predict(
            predict_input_fn,
            predict_keys=["probability"],
            yield_single_examples=False,
            checkpoint_path=older,
        )
    )
    return {
        "checkpoints": [os.path.basename(p) for p in state.all_model_checkpoint_paths],
        "init_fn_calls": init_fn_calls,
        "older_eval": _floats(second.evaluate(_batches, steps=2, checkpoint_path=older)),
        "batches": [
            {k: np.asarray(v).round(5).tolist() for k, v in sorted(b.items())} for b in batches
        ],
        "started_from": round(float(first.get_variable_value("logistic/weight")[0, 0]), 5),
        "weight": round(float(second.get_variable_value("logistic/weight")[0, 0]), 5),
    }


# ------------------------------------------------------------ predictions
def prediction_edges(est, workdir):
    """Predictions as one tensor, a batch-less prediction, predictions of unequal
    batches, several export outputs without a default, a TensorServingInputReceiver."""
    cases = {}

    def fitted(name, build):
        model = est.Estimator(_spec_model_fn(est, build), model_dir=os.path.join(workdir, name))
        model.train(_batches, steps=1)
        return model

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X[:3]}).batch(3)

    def train_or(mode, loss, train_op, unused_predictions, **kwargs):
        if mode == est.ModeKeys.TRAIN:
            return est.EstimatorSpec(mode, loss=loss, train_op=train_op)
        return est.EstimatorSpec(mode, loss=loss, **kwargs)

    one = fitted(
        "one_tensor", lambda mode, loss, op, p: train_or(mode, loss, op, p, predictions=p["y"])
    )
    cases["one_tensor"] = [np.asarray(v).round(5).tolist() for v in one.predict(predict_input_fn)]
    scalar = fitted(
        "scalar",
        lambda mode, loss, op, p: train_or(
            mode, loss, op, p, predictions={"y": p["y"], "total": tf.reduce_sum(p["y"])}
        ),
    )
    cases["scalar_prediction"] = _raised(lambda: scalar.predict(predict_input_fn))
    cases["scalar_prediction_batches"] = [
        sorted(batch) for batch in scalar.predict(predict_input_fn, yield_single_examples=False)
    ]
    uneven = fitted(
        "uneven",
        lambda mode, loss, op, p: train_or(
            mode, loss, op, p, predictions={"y": p["y"], "two": tf.zeros([2, 1])}
        ),
    )
    cases["uneven_batches"] = _raised(lambda: uneven.predict(predict_input_fn))
    no_default = fitted(
        "no_default",
        lambda mode, loss, op, p: train_or(
            mode,
            loss,
            op,
            p,
            predictions=p,
            export_outputs={
                "a": est.export.PredictOutput(p),
                "b": est.export.RegressionOutput(tf.reshape(p["y"], [-1])),
            },
        ),
    )
    cases["no_default_predict"] = _raised(lambda: no_default.predict(predict_input_fn))

    def tensor_receiver():
        x = v1.placeholder(tf.float32, [None], name="x")
        return est.export.TensorServingInputReceiver({"x": x}, {"x": x})

    cases["no_default_export"] = _raised(
        lambda: no_default.export_saved_model(os.path.join(workdir, "export"), tensor_receiver)
    )
    return {"cases": cases}


PROGRAMS = {
    "hook_protocol": hook_protocol,
    "own_checkpoint_saver": own_checkpoint_saver,
    "model_dir_contents": model_dir_contents,
    "log_lines": log_lines,
    "export_all_modes": export_all_modes,
    "input_fn_shapes": input_fn_shapes,
    "warm_start_settings": warm_start_settings,
    "stock_hook_options": stock_hook_options,
    "misuse": misuse,
    "scaffold_and_config": scaffold_and_config,
    "prediction_edges": prediction_edges,
}
