"""TF1-style Estimator code runs unchanged: graph-mode model_fns, SessionRunHooks, Scaffolds.

The programs in `tests/tf1_programs.py` were run once under tf.estimator 2.15
(`tests/tf215/record_tf1_programs.py`, into `tests/data/tf215/tf1_programs.json`);
here they run on this kit and must give what 2.15 gave.
"""

import itertools
import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from components import estimator
from tests import tf1_programs

v1 = tf.compat.v1
RECORDED = os.path.join(os.path.dirname(__file__), "data", "tf215", "tf1_programs.json")


@pytest.fixture(scope="module")
def tf215():
    with open(RECORDED) as f:
        return json.load(f)["programs"]


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Every program, run once here: {name: result}."""
    workdir = tmp_path_factory.mktemp("tf1")
    return {
        name: program(estimator, str(workdir / name))
        for name, program in tf1_programs.PROGRAMS.items()
    }


def _stopped_within_a_step_of_its_threshold(result, threshold, steps_after):
    """The iris program's stopping hook, as TF1 runs it on either side: it reads the
    global step in the run whose train op moves it, and TF1 may read it before or after
    the increment (whichever op its executor runs first, so it varies with the machine's
    load), so it may see the threshold one step late."""
    stopped, seen = result["stopped_at"], result["hook_last_seen"]
    assert threshold <= stopped <= threshold + 1, result
    assert seen >= threshold and stopped - 1 <= seen <= stopped, result
    # TF1's protocol, in order; `end` reads the step where training stopped.
    assert result["hook_events"] == ["begin", "after_create_session:0", f"end:{stopped}"]
    assert result["eval"]["global_step"] == stopped + steps_after


def test_iris_with_tf1_layers_metrics_summaries_and_a_stopping_hook(ran, tf215):
    ours, theirs = ran["iris"], tf215["iris"]
    # The hook ran through TF1's whole protocol and stopped training at its threshold,
    # as 2.15's did; the second train() ran its 70 steps from there.
    for result in (ours, theirs):
        _stopped_within_a_step_of_its_threshold(result, threshold=30, steps_after=70)
    for key in ("eval_keys", "prediction_keys"):
        assert ours[key] == theirs[key], key
    assert ours["prediction_count"] == theirs["prediction_count"] == 120
    # Name-based checkpoints, under TF1's names.
    assert ours["variables"] == theirs["variables"]
    assert ours["summary_tags"] == theirs["summary_tags"] == ["accuracy", "loss"]
    # (Seeded initial values depend on op counts, which differ between TF releases.)
    assert ours["eval"]["accuracy"] > 0.8
    assert sum(ours["first_probabilities"]) == pytest.approx(1.0, abs=1e-5)


def test_get_variable_regression_matches_tf_estimator_to_the_digit(ran, tf215):
    ours, theirs = dict(ran["get_variable_regression"]), tf215["get_variable_regression"]
    ours.pop("export_dir")
    assert ours["global_step"] == 40  # the second train(max_steps=40) ran nothing
    assert (
        ours["variables"] == theirs["variables"] == ["global_step", "linear/bias", "linear/weight"]
    )
    for key in ("weight", "bias"):
        assert ours[key] == pytest.approx(theirs[key], rel=1e-5)
    assert ours["eval"] == pytest.approx(theirs["eval"], rel=1e-5)
    assert ours["predictions"] == pytest.approx(theirs["predictions"], rel=1e-5)


def test_batch_norm_update_ops_and_decayed_adam(ran, tf215):
    ours, theirs = ran["batch_norm"], tf215["batch_norm"]
    assert ours == theirs
    assert ours["moving_mean_moved"]
    assert "beta1_power" in ours["variables"]


def _assert_tf1_summary_steps(steps, every, last_step):
    """`steps` are what TF1's SummarySaverHook(save_steps=every) can write in a train()
    of `last_step` steps: the first step, then every `every` steps or one early, until
    `every` more would pass the last step."""
    assert steps[0] == 1, steps
    assert all(every - 1 <= b - a <= every for a, b in itertools.pairwise(steps)), steps
    assert steps[-1] <= last_step < steps[-1] + every, steps


def test_stock_tf1_hooks_in_train_evaluate_and_predict(ran, tf215):
    ours, theirs = dict(ran["stock_hooks"]), dict(tf215["stock_hooks"])
    # A user's CheckpointSaverHook saves instead of the Estimator's, every 5 steps.
    assert ours["checkpoints"] == theirs["checkpoints"]
    # The SummarySaverHook reads the global step in the run whose train op moves it and
    # predicts the next step from it, so its writes may come a step early, from run to
    # run, under either TF (2.15: 1, 4, 7, 10; seen here: 1, 5, 8, 11 and 1, 4, 7, 11;
    # its code allows 1, 5, 9 too).
    ours_steps, theirs_steps = ours.pop("summary_steps"), theirs.pop("summary_steps")
    for steps in (ours_steps, theirs_steps):
        _assert_tf1_summary_steps(steps, every=4, last_step=theirs["global_step"])
    assert ours["final_ops_values"] == pytest.approx(theirs.pop("final_ops_values"), rel=1e-5)
    assert ours["first_and_last_loss"] == pytest.approx(theirs.pop("first_and_last_loss"), rel=1e-5)
    ours.pop("final_ops_values")
    ours.pop("first_and_last_loss")
    assert ours == theirs


@pytest.mark.slow
def test_a_tf1_export_with_a_parsing_receiver_serves_in_a_fresh_process(ran):
    export_dir = ran["get_variable_regression"]["export_dir"]
    script = """
import sys
import tensorflow as tf
model = tf.saved_model.load(sys.argv[1])
examples = [
    tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[x]))})).SerializeToString()
    for x in (0.0, 1.0)
]
out = model.signatures["serving_default"](inputs=tf.constant(examples))
print(sorted(model.signatures), [round(float(v), 4) for v in out["outputs"][:, 0]])
"""
    result = subprocess.run(
        [sys.executable, "-c", script, export_dir], capture_output=True, text=True, check=True
    )
    weight = ran["get_variable_regression"]["weight"]
    bias = ran["get_variable_regression"]["bias"]
    assert result.stdout.split("\n")[-2] == (
        f"['predict', 'serving_default'] [{round(bias, 4)}, {round(weight + bias, 4)}]"
    )
    # TF Serving's Regress API needs the regress method name.
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    methods = {k: s.method_name for k, s in saved.meta_graphs[0].signature_def.items()}
    assert methods == {
        "serving_default": "tensorflow/serving/regress",
        "predict": "tensorflow/serving/predict",
    }


def _line_input_fn():
    x, y = tf1_programs._line_data()
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)


def _line_estimator(model_dir, **kwargs):
    return estimator.Estimator(
        tf1_programs.linear_model_fn(estimator), model_dir=model_dir, **kwargs
    )


def test_the_estimator_says_which_path_a_model_fn_takes(tmp_path, caplog):
    # (at DEBUG: tf.estimator 2.15 logged no such line at INFO)
    with caplog.at_level(logging.DEBUG, logger="components.estimator.estimator"):
        _line_estimator(str(tmp_path / "tf1")).train(_line_input_fn, steps=2)
    assert "tf.compat.v1.get_variable (or tf.compat.v1.layers)" in caplog.text
    assert "runs in a graph with a session" in caplog.text


def test_predictions_read_in_part_leave_eager_execution_on(tmp_path):
    # 2.15 held its finalized predict graph as the default graph across each yield, so
    # one `next(estimator.predict(...))` left graph mode on in that thread until the
    # generator was collected: every TensorFlow call after it failed.
    model = _line_estimator(str(tmp_path))
    model.train(_line_input_fn, steps=2)
    predictions = model.predict(lambda: _line_input_fn().take(3))
    first = next(predictions)
    assert tf.executing_eagerly()
    assert float(tf.constant(2.0) * 2) == 4.0
    rest = list(predictions)
    assert len(rest) == 3 * 16 - 1
    assert sorted(first) == sorted(rest[0])


def test_this_kits_hooks_run_in_a_graph_mode_train(tmp_path):
    class Recorder(estimator.Hook):
        def begin(self):
            self.logs = []

        def after_step(self, context, logs):
            self.logs.append((context.global_step, logs["global_step"], logs["loss"]))
            if logs["global_step"] >= 5:
                context.request_stop()

    recorder = Recorder()
    model = _line_estimator(str(tmp_path))
    model.train(_line_input_fn, steps=50, hooks=[recorder, estimator.StopAtStepHook(num_steps=40)])
    assert [step for _, step, _ in recorder.logs] == [1, 2, 3, 4, 5]
    assert all(np.isfinite(loss) for _, _, loss in recorder.logs)
    assert model.get_variable_value("global_step") == 5


def test_hooks_whose_fetches_and_feeds_change_between_steps_get_each_steps_values(tmp_path):
    # The graph path reuses one compiled fetch per structure of fetches: a hook
    # fetching by tensor name on some steps, and feeding on one, must see every
    # step's own values and its feed must count.
    def model_fn(features, labels, mode):
        weight = v1.get_variable("w", [], initializer=v1.zeros_initializer())
        scale = v1.placeholder_with_default(1.0, [], name="scale")
        loss = tf.reduce_mean(features["x"]) * 0.0 + weight
        step = v1.train.get_global_step()
        train_op = tf.group(v1.assign_add(weight, scale), v1.assign_add(step, 1))
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    class Changing(v1.train.SessionRunHook):
        def begin(self):
            self.seen = []

        def before_run(self, run_context):
            call = len(self.seen) + 1
            scale = tf.compat.v1.get_default_graph().get_tensor_by_name("scale:0")
            if call == 3:
                return v1.train.SessionRunArgs([scale], feed_dict={scale: 10.0})
            if call % 2:
                return v1.train.SessionRunArgs({"scale": "scale:0"})
            return v1.train.SessionRunArgs([scale])

        def after_run(self, run_context, run_values):
            results = run_values.results
            if isinstance(results, dict):
                self.seen.append(("by name", float(results["scale"])))
            else:
                self.seen.append(("listed", float(results[0])))

    hook = Changing()
    model = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    model.train(_line_input_fn, steps=6, hooks=[hook])
    assert hook.seen == [
        ("by name", 1.0),
        ("listed", 1.0),
        ("listed", 10.0),
        ("listed", 1.0),
        ("by name", 1.0),
        ("listed", 1.0),
    ]
    assert model.get_variable_value("w") == 15.0


def test_an_input_fn_returning_an_iterators_next_element_feeds_a_new_batch_each_step(tmp_path):
    # TFX <= 1.15's taxi module returned make_one_shot_iterator(dataset).get_next(); run
    # eagerly that is one batch forever. Sorted and unshuffled, the first batches hold
    # only label 0: trained on them alone, the model could not tell the classes apart.
    x = np.linspace(0, 1, 400, dtype=np.float32).reshape(-1, 1)
    y = (x[:, 0] > 0.5).astype(np.int64)

    def input_fn(repeat):
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        dataset = (dataset.repeat() if repeat else dataset).batch(20)
        return v1.data.make_one_shot_iterator(dataset).get_next()

    model = estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x")], model_dir=str(tmp_path)
    )
    model.train(lambda: input_fn(True), steps=200)
    metrics = model.evaluate(lambda: input_fn(False))
    assert metrics["auc"] > 0.95
    assert metrics["global_step"] == 200


def test_an_iterators_next_element_feeds_a_user_model_fn_with_no_tf1_markers(tmp_path):
    # (Its first build decides the path: the input's iterator takes the graph's, as the
    # probe of a kit model_fn's input_fn does; eagerly, predict would repeat one batch.)
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices({"x": [[1.0], [2.0], [3.0]]}).batch(2)
        return v1.data.make_one_shot_iterator(dataset).get_next()

    def model_fn(features, labels, mode):
        return estimator.EstimatorSpec(mode, predictions={"x": features["x"]})

    model = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    predictions = itertools.islice(model.predict(input_fn), 5)
    assert [float(p["x"][0]) for p in predictions] == [1.0, 2.0, 3.0]


def test_a_diverging_tf1_model_fn_fails_with_nan_loss(tmp_path):
    def model_fn(features, labels, mode):
        weight = v1.get_variable("w", [1], initializer=v1.ones_initializer())
        loss = tf.reduce_mean(tf.math.log(features["x"] * weight - 10.0))  # log of < 0
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=v1.train.get_global_step()
        )
        return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    model = estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(estimator.NanLossDuringTrainingError):
        model.train(_line_input_fn, steps=3)


def test_a_scaffold_init_fn_and_warm_start_from_a_tf1_model_dir(tmp_path):
    first = _line_estimator(str(tmp_path / "first"))
    first.train(_line_input_fn, steps=10)

    def init_fn(scaffold, session):
        with v1.variable_scope("linear", reuse=True):
            v1.get_variable("bias").load([5.0], session)

    def model_fn(features, labels, mode):
        spec = tf1_programs.linear_model_fn(estimator)(features, labels, mode, {})
        return spec._replace(scaffold=estimator.Scaffold(init_fn=init_fn))

    scaffolded = estimator.Estimator(model_fn, model_dir=str(tmp_path / "scaffolded"))
    scaffolded.train(_line_input_fn, steps=1)
    # One step of gradient descent from the init_fn's bias, not from zero.
    assert scaffolded.get_variable_value("linear/bias")[0] > 4.0

    warm = _line_estimator(
        str(tmp_path / "warm"),
        warm_start_from=estimator.WarmStartSettings(str(tmp_path / "first"), "linear/weight"),
    )
    warm.train(_line_input_fn, steps=1)
    before = first.get_variable_value("linear/weight")[0, 0]
    after = warm.get_variable_value("linear/weight")[0, 0]
    assert abs(after - before) < 0.2 and abs(before) > 0.5
    assert warm.get_variable_value("linear/bias")[0] == pytest.approx(0.0, abs=0.3)


def test_train_and_evaluate_with_a_tf1_model_fn_exports_each_evaluation(tmp_path):
    model = _line_estimator(str(tmp_path), config=estimator.RunConfig(save_checkpoints_steps=10))
    exporter = estimator.LatestExporter(
        "latest",
        estimator.export.build_parsing_serving_input_receiver_fn(
            {"x": tf.io.FixedLenFeature([1], tf.float32)}
        ),
    )
    metrics, exports = estimator.train_and_evaluate(
        model,
        estimator.TrainSpec(_line_input_fn, max_steps=30),
        estimator.EvalSpec(_line_input_fn, steps=2, exporters=[exporter], throttle_secs=0),
    )
    assert metrics["global_step"] == 30
    assert set(metrics) == {"rmse", "mae", "loss", "global_step"}
    assert len(exports) == 1
    assert len(os.listdir(tmp_path / "export" / "latest")) == 3  # at steps 10, 20 and 30
    eval_events = tf.io.gfile.glob(str(tmp_path / "eval" / "events.out.tfevents.*"))
    assert eval_events


def test_a_tf1_model_fn_under_a_strategy_of_two_replicas_is_refused_naming_why(tmp_path):
    """(One replica trains, as in 2.15: tests/test_resnet_r1_sample.py.)"""
    with tf.Graph().as_default():  # (made in a graph, nothing checks that CPU:1 exists)
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    model = _line_estimator(str(tmp_path), config=estimator.RunConfig(train_distribute=strategy))
    with pytest.raises(
        ValueError,
        match=r"uses tf.compat.v1.get_variable .*only with one replica.*train_distribute",
    ):
        model.train(_line_input_fn, steps=1)


# Every task runs the same program with its TF_CONFIG, as tf.estimator-era jobs did.
_TASK = """
import json, sys
import tensorflow as tf
from components import estimator
from tests import tf1_programs

class Steps(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        self.runs = 0
    def after_run(self, run_context, run_values):
        self.runs += 1

x, y = tf1_programs._line_data()
def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)

model = estimator.Estimator(
    tf1_programs.linear_model_fn(estimator), model_dir=sys.argv[1],
    config=estimator.RunConfig(save_checkpoints_steps=50))
steps = Steps()
returned = estimator.train_and_evaluate(
    model, estimator.TrainSpec(input_fn, max_steps=int(sys.argv[2]), hooks=[steps]),
    estimator.EvalSpec(input_fn, steps=2, throttle_secs=0))
print(json.dumps({"runs": steps.runs, "returned": returned,
                  "global_step": int(model.get_variable_value("global_step")),
                  "variables": sorted(n for n, _ in tf.train.list_variables(sys.argv[1]))}))
"""


@pytest.mark.slow
def test_a_tf1_model_fn_trains_on_a_ps_cluster_as_under_tf_estimator(tmp_path):
    """Between-graph replication: variables on the ps task, the chief and a worker
    both stepping them; the chief saves."""
    from components.trainer.launcher import free_ports
    from pipeline.config import REPO_ROOT

    chief_port, worker_port, ps_port = free_ports(3)
    cluster = {
        "chief": [f"127.0.0.1:{chief_port}"],
        "worker": [f"127.0.0.1:{worker_port}"],
        "ps": [f"127.0.0.1:{ps_port}"],
    }

    def start(task_type):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": task_type, "index": 0}})
        return subprocess.Popen(
            [sys.executable, "-c", _TASK, str(tmp_path / "model"), "300"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(
                os.environ, PYTHONPATH=str(REPO_ROOT), TF_CONFIG=tf_config, TF_CPP_MIN_LOG_LEVEL="2"
            ),
        )

    tasks = {kind: start(kind) for kind in ("ps", "worker", "chief")}
    try:
        results = {}
        for kind in ("chief", "worker"):
            out, err = tasks[kind].communicate(timeout=400)
            assert tasks[kind].returncode == 0, f"{kind}: {err[-3000:]}"
            results[kind] = json.loads(out.strip().splitlines()[-1])
        assert tasks["ps"].poll() is None  # ps tasks serve until the job is stopped
    finally:
        for task in tasks.values():
            task.kill()
            task.wait(timeout=30)
    # Asynchronous steps: both tasks may take one at the last step, as under tf.estimator.
    assert 300 <= results["chief"]["global_step"] <= 302
    # As under 2.15, no task evaluates without an evaluator task, and each returns None.
    assert results["chief"]["returned"] is None and results["worker"]["returned"] is None
    assert not (tmp_path / "model" / "eval").exists()
    # Both stepped the shared variables: neither ran all 300 steps.
    assert results["chief"]["runs"] > 0 and results["worker"]["runs"] > 0
    assert results["chief"]["runs"] + results["worker"]["runs"] >= 300
    assert "linear/weight" in results["chief"]["variables"]


def test_a_canned_estimator_given_a_tf1_hook_runs_that_call_in_a_graph(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.rand(64).astype(np.float32)
    features = {"a": x, "c": (x * 3).astype(np.int64)}

    def input_fn(labels):
        return lambda: tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(16)

    good = input_fn((x > 0.5).astype(np.int64))
    classifier = estimator.DNNLinearCombinedClassifier(
        linear_feature_columns=[tf.feature_column.categorical_column_with_identity("c", 3)],
        dnn_feature_columns=[tf.feature_column.numeric_column("a")],
        dnn_hidden_units=[4],
        model_dir=str(tmp_path),
    )
    classifier.train(good, steps=10)  # the TF2 path
    names = sorted(classifier.get_variable_names())

    class GlobalSteps(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            self.seen = []

        def before_run(self, run_context):
            return tf.compat.v1.train.SessionRunArgs(tf.compat.v1.train.get_global_step())

        def after_run(self, run_context, run_values):
            self.seen.append(int(run_values.results))

    steps = GlobalSteps()
    classifier.train(good, steps=10, hooks=[steps])  # a graph, from the same checkpoint
    assert len(steps.seen) == 10 and steps.seen[0] >= 10
    # One set of names on both paths: the DNN's optimizer counts in global_step on both,
    # as in 2.15's checkpoints (the linear one's Ftrl keeps its own counter, as there).
    assert sorted(classifier.get_variable_names()) == names
    assert "training/Ftrl/iter" in names and "training/Adagrad/iter" not in names
    assert classifier.evaluate(good, steps=2)["global_step"] == 20  # the TF2 path again
    # The head's label checks run in the graph too.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be <= n_classes - 1"):
        classifier.train(input_fn(np.full(64, 5, np.int64)), steps=1, hooks=[GlobalSteps()])


def test_a_serving_module_of_a_tf1_model_fn_is_refused_pointing_to_export(tmp_path):
    model = _line_estimator(str(tmp_path))
    model.train(_line_input_fn, steps=1)
    receiver = estimator.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([1], tf.float32)}
    )
    with pytest.raises(ValueError, match="export it with export_saved_model"):
        model.build_serving_module(receiver)


class _CountingRuns(v1.train.SessionRunHook):
    """Counts the training session's runs (each runs the train op once)."""

    def begin(self):
        self.runs = 0

    def after_run(self, run_context, run_values):
        self.runs += 1


def _sync_replicas_model_fn(features, labels, mode):
    """tensorflow/models' `--sync_replicas` idiom on one machine: the optimizer wrapped in
    a SyncReplicasOptimizer of one replica, its hook among the training hooks. Its chief
    queue runner applies each step's gradients and steps the global step, on a thread."""
    predictions = v1.layers.dense(features["x"], 1, kernel_initializer=v1.zeros_initializer())
    loss = v1.losses.mean_squared_error(labels, predictions)
    optimizer = v1.train.SyncReplicasOptimizer(
        v1.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1, total_num_replicas=1
    )
    train_op = optimizer.minimize(loss, global_step=v1.train.get_or_create_global_step())
    return estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, training_hooks=[optimizer.make_session_run_hook(True)]
    )


# Its chief queue runner's thread fails as the session closes under it, as under 2.15.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_sync_replicas_optimizer_steps_the_global_step_once_a_step(tmp_path, monkeypatch):
    """As under 2.15, the global step is the steps the queue runner applied: at most one a
    train op run (it read 0, 1, 1, 2, ... 9 over 11 runs and ended at 10 there). The kit
    stepped it again in the train op (it ended at 11 after 6 runs, checkpoints and
    summaries on the wrong steps). The end of train() waits for the runner's thread, which
    waits for gradients that never come: 120 s, as under 2.15; 1 s here."""
    from components.estimator import graph_mode

    monkeypatch.setattr(graph_mode, "STOP_GRACE_PERIOD_SECS", 1)
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(16, 2)

    def input_fn():
        data = ({"x": x}, x.sum(axis=1, keepdims=True))
        return tf.data.Dataset.from_tensor_slices(data).batch(4).repeat()

    counting = _CountingRuns()
    model = estimator.Estimator(_sync_replicas_model_fn, model_dir=str(tmp_path))
    model.train(input_fn, max_steps=10, hooks=[counting])
    final = int(tf.train.load_variable(model.latest_checkpoint(), "global_step"))
    assert 10 <= final <= counting.runs <= 12
