"""Early stopping as public samples and tutorials use it, on tiny deterministic data.

- the tf.estimator docs' example: a `DNNClassifier` with `stop_if_no_decrease_hook(...,
  run_every_secs=None, run_every_steps=...)` in `train_and_evaluate` (a model that has
  converged: learning rate 0, so every evaluation's loss is the same);
- a custom `model_fn` (TF1 variables and optimizer, zero-initialized, so its losses are
  exact) stopped by `stop_if_lower_hook` and, with `min_steps`, by `stop_if_higher_hook`;
- `estimator.train(input_fn, hooks=[hook])` after separate `evaluate()` calls wrote the
  eval events (a regressor, then `stop_if_no_decrease_hook` with and without `min_steps`
  at its default `run_every_secs=60`, and `stop_if_no_increase_hook` on a named
  evaluation's `eval_dir`);
- `make_early_stopping_hook` with a predicate of the user's reading the eval events as
  tf.estimator's `read_eval_metrics` did.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns what its user sees: `exact` (the step training stopped at, the global step of the
last checkpoint, the steps evaluated, the checkpoint's variables with their dtypes and
shapes, the early-stopping log lines) and `close` (the losses evaluated).
The custom model_fn's hooks ask at every step: 2.15 read the global step in the run
whose train op moved it, before or after the increment as TF1's executor ordered the two
(its logged step is one either side), and asked at steps further apart from one run to
the next; asked every step, it stops at the run whose checkpoint's evaluation decides.
`tests/test_early_stopping_samples.py` compares them with 2.15's recording
(`tests/tf215/record_family.py early_stopping_programs`, into
`tests/data/tf215/early_stopping.json`).
"""

import collections
import glob
import json
import os
import re
import sys

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines

RECORDED = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "data", "tf215", "early_stopping.json"
)
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
STOP_VARIABLE = "signal_early_stopping/STOP"
_FLOAT = re.compile(r"-?\d+\.\d+(e[-+]?\d+)?")


# ------------------------------------------------------------------ what a user sees
def checkpoint_variables(estimator):
    """{name: [dtype, shape]} of the latest checkpoint, and the stop variable's value."""
    names = estimator.get_variable_names()
    variables = {}
    for name in names:
        value = np.asarray(estimator.get_variable_value(name))
        variables[name] = [value.dtype.name, list(value.shape)]
    stop = bool(estimator.get_variable_value(STOP_VARIABLE)) if STOP_VARIABLE in names else None
    return variables, stop


def checkpoint_step(estimator):
    """The global step in the name of the latest checkpoint."""
    return int(estimator.latest_checkpoint().rsplit("-", 1)[1])


def read_eval_metrics(tf, eval_dir):
    """{step: {tag: value}} of the eval events (simple values), as users copied it from
    tf.estimator's early_stopping module."""
    metrics = collections.defaultdict(dict)
    for path in glob.glob(os.path.join(eval_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    metrics[event.step][value.tag] = value.simple_value
    return collections.OrderedDict(sorted(metrics.items()))


def stopping_lines(lines):
    """The early-stopping lines of the log, their decimals replaced by F (steps kept)."""
    kept = []
    for line in lines:  # (2.15's lines reach both loggers listened to: each once)
        line = _FLOAT.sub("F", line)
        if "early stopping" in line.lower() and (not kept or kept[-1] != line):
            kept.append(line)
    return kept


def seen(tf, estimator, lines, eval_dir=None):
    """What a user looks at after training: the step, the checkpoint, the evaluations."""
    evaluations = read_eval_metrics(tf, eval_dir or estimator.eval_dir())
    variables, stop = checkpoint_variables(estimator)
    exact = {
        "global_step": int(estimator.get_variable_value("global_step")),
        "checkpoint_step": checkpoint_step(estimator),
        "evaluated_steps": list(evaluations),
        "variables": variables,
        "stop_value": stop,
        "lines": stopping_lines(lines),
    }
    close = {"eval_losses": [metrics["loss"] for metrics in evaluations.values()]}
    return exact, close


# ------------------------------------------------------------------ the data
def points(n, offset=0.0):
    """x in [0, 1) and y = 2x + 1 (+ offset), as float32 columns."""
    x = (np.arange(n, dtype=np.float32) / n).reshape(-1, 1)
    return x, 2.0 * x + 1.0 + np.float32(offset)


def numeric_input_fn(tf, x, y, batch_size=8, epochs=None, key="x"):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({key: x}, y))
        return dataset.batch(batch_size).repeat(epochs)

    return input_fn


def classes(n):
    """Two features and a class that their sum decides."""
    x = np.stack([np.arange(n) % 7 / 7.0, np.arange(n) % 5 / 5.0], axis=1).astype(np.float32)
    return x, (x.sum(axis=1, keepdims=True) > 0.9).astype(np.int64)


# ------------------------------------------------------------------ the programs
@program
def docs_dnn_classifier_no_decrease(tf, workdir):
    """The docs' example: a DNNClassifier, stop_if_no_decrease_hook on 'loss' every 5
    steps, in train_and_evaluate with a checkpoint (and evaluation) every 5 steps."""
    x, y = classes(32)
    config = tf.estimator.RunConfig(
        model_dir=os.path.join(workdir, "dnn"), save_checkpoints_steps=5, tf_random_seed=7
    )
    feature_columns = [tf.feature_column.numeric_column("x", shape=[2])]
    estimator = tf.estimator.DNNClassifier(
        hidden_units=[4],
        feature_columns=feature_columns,
        optimizer=tf.keras.optimizers.legacy.SGD(learning_rate=0.0),
        config=config,
    )
    hook = tf.estimator.experimental.stop_if_no_decrease_hook(
        estimator,
        "loss",
        max_steps_without_decrease=10,
        run_every_secs=None,
        run_every_steps=5,
    )
    train_spec = tf.estimator.TrainSpec(numeric_input_fn(tf, x, y), max_steps=100, hooks=[hook])
    eval_spec = tf.estimator.EvalSpec(
        numeric_input_fn(tf, x, y, epochs=1), steps=None, throttle_secs=0
    )
    with _info_lines() as lines:
        metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    exact, _ = seen(tf, estimator, lines)  # (its losses hang on its initial weights)
    exact["returned_step"] = int(metrics["global_step"])
    return {"exact": exact, "close": {}}


def linear_model_fn(features, labels, mode, params):
    """y = w x + b with TF1 variables (zeros) and plain gradient descent."""
    import tensorflow as tf

    v1 = tf.compat.v1
    w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
    b = v1.get_variable("b", [1], initializer=v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = v1.losses.mean_squared_error(labels, predictions)
    optimizer = v1.train.GradientDescentOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=v1.train.get_global_step())
    metrics = {"mae": v1.metrics.mean_absolute_error(labels, predictions)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def _custom_estimator(tf, model_dir, every=4):
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=every)
    return tf.estimator.Estimator(
        model_fn=linear_model_fn, config=config, params={"learning_rate": 0.1}
    )


def _train_and_evaluate(tf, estimator, hook, max_steps=60):
    x, y = points(16)
    train_spec = tf.estimator.TrainSpec(
        numeric_input_fn(tf, x, y), max_steps=max_steps, hooks=[hook]
    )
    eval_spec = tf.estimator.EvalSpec(numeric_input_fn(tf, x, y, epochs=1), throttle_secs=0)
    with _info_lines() as lines:
        tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    return seen(tf, estimator, lines)


@program
def custom_model_fn_stop_if_lower(tf, workdir):
    """A custom model_fn's regression, stopped once an evaluation's loss is below 0.5
    (checked every step; a checkpoint and an evaluation every 4)."""
    estimator = _custom_estimator(tf, os.path.join(workdir, "model"))
    hook = tf.estimator.experimental.stop_if_lower_hook(
        estimator, "loss", 0.5, run_every_secs=None, run_every_steps=1
    )
    exact, close = _train_and_evaluate(tf, estimator, hook)
    return {"exact": exact, "close": close}


@program
def custom_model_fn_stop_if_higher_min_steps(tf, workdir):
    """stop_if_higher_hook on the mean absolute error, true from the first evaluation,
    with min_steps=10: only evaluations from step 10 count."""
    estimator = _custom_estimator(tf, os.path.join(workdir, "model"))
    hook = tf.estimator.experimental.stop_if_higher_hook(
        estimator, "mae", 0.0, min_steps=10, run_every_secs=None, run_every_steps=1
    )
    exact, close = _train_and_evaluate(tf, estimator, hook)
    return {"exact": exact, "close": close}


@program
def custom_predicate_reads_eval_metrics(tf, workdir):
    """make_early_stopping_hook with the user's predicate over the eval events: stop
    once three evaluations were written."""
    estimator = _custom_estimator(tf, os.path.join(workdir, "model"), every=3)
    asked = []

    def should_stop_fn():
        evaluations = read_eval_metrics(tf, estimator.eval_dir())
        asked.append(len(evaluations))
        return len(evaluations) >= 3

    hook = tf.estimator.experimental.make_early_stopping_hook(
        estimator, should_stop_fn, run_every_secs=None, run_every_steps=1
    )
    exact, close = _train_and_evaluate(tf, estimator, hook)
    exact["evaluations_asked_about"] = sorted(set(asked))
    return {"exact": exact, "close": close}


def _error(call):
    """[type, first line] of what `call()` raises, or None."""
    try:
        call()
    except Exception as error:  # (the error is what the user sees)
        return [type(error).__name__, str(error).splitlines()[0]]
    return None


def _never(tf, estimator):
    """A hook of the user's that never stops (so every checkpoint has its variable)."""
    return tf.estimator.experimental.make_early_stopping_hook(
        estimator, lambda: False, run_every_secs=None, run_every_steps=100
    )


def _evaluated_regressor(tf, model_dir, hook=True):
    """A LinearRegressor trained 10 steps at a time (with a hook that never stops),
    evaluated after each part: on the training data at step 10, on data 3 higher at steps
    20 and 30 (their losses fall)."""
    x, y = points(16)
    column = tf.feature_column.numeric_column("x")
    estimator = tf.estimator.LinearRegressor(
        [column],
        model_dir=model_dir,
        optimizer=lambda: tf.keras.optimizers.legacy.SGD(learning_rate=0.05),
    )
    train_input_fn = numeric_input_fn(tf, x, y)
    hooks = [_never(tf, estimator)] if hook else []
    estimator.train(train_input_fn, steps=10, hooks=hooks)
    estimator.evaluate(numeric_input_fn(tf, x, y, epochs=1))
    for _ in range(2):
        estimator.train(train_input_fn, steps=10, hooks=hooks)
        estimator.evaluate(numeric_input_fn(tf, *points(16, offset=3.0), epochs=1))
    return estimator, train_input_fn


@program
def train_after_evaluations_no_decrease(tf, workdir):
    """stop_if_no_decrease_hook at its defaults (run_every_secs=60) in a train() call
    after evaluate() calls wrote eval events: first with min_steps=20 (the step-10
    evaluation's lower loss then does not count), then without."""
    estimator, train_input_fn = _evaluated_regressor(tf, os.path.join(workdir, "model"))
    results = {}
    for name, min_steps in (("min_steps_20", 20), ("min_steps_0", 0)):
        hook = tf.estimator.experimental.stop_if_no_decrease_hook(
            estimator, "loss", max_steps_without_decrease=10, min_steps=min_steps
        )
        with _info_lines() as lines:
            estimator.train(train_input_fn, steps=5, hooks=[hook])
        results[name] = seen(tf, estimator, lines)
    exact = {name: part for name, (part, _) in results.items()}
    close = {"eval_losses": results["min_steps_0"][1]["eval_losses"]}
    return {"exact": exact, "close": close}


@program
def hook_added_to_a_trained_model(tf, workdir):
    """The same, the earlier train() calls without a hook: their checkpoint lacks the
    stop variable, which 2.15 then failed to restore."""
    estimator, train_input_fn = _evaluated_regressor(tf, os.path.join(workdir, "m"), False)
    hook = tf.estimator.experimental.stop_if_no_decrease_hook(
        estimator, "loss", max_steps_without_decrease=10
    )
    error = _error(lambda: estimator.train(train_input_fn, steps=5, hooks=[hook]))
    variables, stop = checkpoint_variables(estimator)
    step = checkpoint_step(estimator)
    return {"exact": {"error": error, "variables": variables, "stop": stop, "step": step}}


@program
def train_after_named_evaluation_no_increase(tf, workdir):
    """stop_if_no_increase_hook on a named evaluation's eval_dir ('validation'): its
    loss does not rise (it falls), so training stops at the first check."""
    x, y = points(16)
    column = tf.feature_column.numeric_column("x")
    estimator = tf.estimator.LinearRegressor([column], model_dir=os.path.join(workdir, "m"))
    train_input_fn = numeric_input_fn(tf, x, y)
    for steps in (3, 3):
        estimator.train(train_input_fn, steps=steps, hooks=[_never(tf, estimator)])
        estimator.evaluate(numeric_input_fn(tf, x, y, epochs=1), name="validation")
    eval_dir = estimator.eval_dir("validation")
    hook = tf.estimator.experimental.stop_if_no_increase_hook(
        estimator,
        "loss",
        max_steps_without_increase=3,
        eval_dir=eval_dir,
        run_every_secs=None,
        run_every_steps=1,
    )
    with _info_lines() as lines:
        estimator.train(train_input_fn, max_steps=50, hooks=[hook])
    exact, close = seen(tf, estimator, lines, eval_dir)
    return {"exact": exact, "close": close}


# ------------------------------------------------------------------ a cluster
CLUSTER_MAX_STEPS = 100_000  # (far: a worker that missed the chief's stop trains on)
# The chief's hook says stop at its n-th question: after the 12th step (mnist), or after
# the 10th, whose checkpoint was saved first (census: the kit's workers, which wait for
# the signal in a checkpoint, then find it there too).
CHIEF_QUESTIONS = {"mnist": 12, "census": 10}


def cluster_task(kind, folder):
    """This process's task (TF_CONFIG) of a cluster program: `kind`'s Estimator of
    tests/cluster_sample_programs.py (kubeflow's mnist model_fn, cloudml-samples' census
    classifier) in train_and_evaluate with make_early_stopping_hook, whose predicate says
    stop at its CHIEF_QUESTIONS[kind]-th question; writes what it saw to FOLDER/<task>.json."""
    from tests import cluster_sample_programs as cluster

    tf = cluster.import_estimator()
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    estimator = cluster.ESTIMATORS[kind](tf, os.path.join(folder, "model"))
    asked = []

    def should_stop_fn():
        asked.append(1)
        return len(asked) >= CHIEF_QUESTIONS[kind]

    hook = tf.estimator.experimental.make_early_stopping_hook(
        estimator, should_stop_fn, run_every_secs=None, run_every_steps=1
    )
    train_spec = tf.estimator.TrainSpec(
        lambda: cluster._features_and_labels(tf, 8), max_steps=CLUSTER_MAX_STEPS, hooks=[hook]
    )
    eval_spec = tf.estimator.EvalSpec(lambda: cluster._features_and_labels(tf, 8), steps=1)
    with _info_lines() as lines:
        returned = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    seen = {
        "returned": returned,
        "questions": len(asked),
        "lines": [re.sub(r"\d+", "N", line) for line in stopping_lines(lines)],
    }
    with open(os.path.join(folder, f"{task['type']}-{task['index']}.json"), "w") as f:
        json.dump(seen, f)


def ps_cluster(kind, workdir):
    """A chief, a worker and a ps on 127.0.0.1 (TF_CONFIG), each a process running
    `cluster_task(kind)`: the chief's hook decides, and the worker stops too."""
    from tests import cluster_sample_programs as cluster

    tf = cluster.import_estimator()
    addresses = cluster.make_cluster({"chief": 1, "worker": 1, "ps": 1})
    processes = {
        (job, 0): cluster.start_task(
            [kind, workdir],
            workdir,
            f"{job}-0",
            {"cluster": addresses, "task": {"type": job, "index": 0}},
            module="tests.early_stopping_programs",
        )
        for job in addresses
    }
    exits = cluster.wait_for(processes, workdir)
    tasks = {}
    for name, code in sorted(exits.items()):
        path = os.path.join(workdir, f"{name}.json")
        failed = code not in (0, "stopped")
        tasks[name] = {"exit": code, "error": cluster.last_error(workdir, name) if failed else None}
        if os.path.exists(path):
            with open(path) as f:
                tasks[name].update(json.load(f))
    chief = tasks.get("chief-0", {})
    chief["questions"] = chief.get("questions") == CHIEF_QUESTIONS[kind]
    reader = tf.train.load_checkpoint(os.path.join(workdir, "model"))
    dtypes = reader.get_variable_to_dtype_map()
    step = int(reader.get_tensor("global_step"))
    return {
        "exact": {
            "tasks": tasks,
            "variables": {name: dtypes[name].name for name in sorted(dtypes)},
            "stopped_early": step < CLUSTER_MAX_STEPS,
        }
    }


@program
def ps_cluster_stops_every_worker(tf, workdir):
    """mnist's TF1 model_fn: the worker reads the chief's signal on the ps."""
    return ps_cluster("mnist", workdir)


@program
def ps_cluster_canned_stops_every_worker(tf, workdir):
    """census's canned classifier: the worker stops on the chief's signal too."""
    return ps_cluster("census", workdir)


if __name__ == "__main__":
    cluster_task(*sys.argv[1:3])
