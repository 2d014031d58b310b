"""Estimator programs run as a cluster through `TF_CONFIG`, as TFJobs and Vertex
CustomJobs run them: kubeflow/examples' mnist `train_and_evaluate`, cloudml-samples'
census trainer with a chief, a worker, a ps and an evaluator, the distributed guide's
`MultiWorkerMirroredStrategy` Estimator, and what `RunConfig` reads from `TF_CONFIG`.

Recorded under tf.estimator 2.15 by `tests/tf215/record_family.py cluster_sample_programs`; run by
`tests/test_cluster_samples.py` here.  A cluster program starts each task as a process
(`python -m tests.cluster_sample_programs TASK_PROGRAM FOLDER`, its own `TF_CONFIG`) on
127.0.0.1, waits for the tasks that finish (a ps task serves until it is stopped, as on
a TFJob: it is stopped once the others are done) and returns what a user sees: each
task's exit and RunConfig, the files in model_dir, the evaluator's evaluations.  Async
training is not deterministic: counts and names are compared, not values.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

RECORDED = os.path.join(os.path.dirname(__file__), "data", "tf215", "cluster_samples.json")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_STEPS = 30
# A cluster that has not ended by then fails the program, with the tasks' logs.
CLUSTER_TIMEOUT_SECS = float(os.environ.get("CLUSTER_SAMPLES_TIMEOUT", "420"))

# RunConfig's fields that come from TF_CONFIG or depend on it.
RUN_CONFIG_FIELDS = (
    "task_type",
    "task_id",
    "is_chief",
    "num_worker_replicas",
    "num_ps_replicas",
    "master",
    "evaluation_master",
    "global_id_in_cluster",
    "service",
    "save_summary_steps",
    "save_checkpoints_steps",
    "save_checkpoints_secs",
    "log_step_count_steps",
)


def import_estimator():
    """tf, with tf.estimator: 2.15's own, or the kit's here."""
    import tensorflow as tf

    if not tf.__version__.startswith("2.15"):
        sys.path.insert(0, ROOT)
        import components.estimator.install  # noqa: F401
    return tf


def run_config_fields(config):
    """What a user reads off a RunConfig in a cluster."""
    fields = {name: getattr(config, name) for name in RUN_CONFIG_FIELDS}
    fields["cluster_spec"] = config.cluster_spec.as_dict()
    session = config.session_config
    fields["session_config"] = None if session is None else _session_fields(session)
    return fields


def _session_fields(session):
    return {
        "allow_soft_placement": session.allow_soft_placement,
        "device_filters": list(session.device_filters),
        "meta_optimizer_iterations": session.graph_options.rewrite_options.meta_optimizer_iterations,
    }


def error_of(call):
    """`call()`'s error as a user reads it: its type and first line."""
    try:
        call()
    except Exception as e:  # (any error is what is recorded)
        return {"error": type(e).__name__, "message": str(e).splitlines()[0] if str(e) else ""}
    return None


# ------------------------------------------------------------------ the models
def _features_and_labels(tf, batch_size):
    xs = [[float(i % 7) / 7.0, float(i % 5) / 5.0] for i in range(64)]
    labels = [[int(x[0] + x[1] > 0.9)] for x in xs]
    dataset = tf.data.Dataset.from_tensor_slices(({"x": xs}, labels))
    return dataset.repeat().batch(batch_size)


def _serving_receiver(tf):
    def receiver():
        raw = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": raw}, {"x": raw})

    return receiver


def census_estimator(tf, model_dir):
    """cloudml-samples' census trainer, small: a canned wide-and-deep classifier."""
    column = tf.feature_column.numeric_column("x", shape=[2])
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=10)
    return tf.estimator.DNNLinearCombinedClassifier(
        config=config,
        linear_feature_columns=[column],
        dnn_feature_columns=[column],
        dnn_hidden_units=[4],
    )


def mnist_model_fn(features, labels, mode):
    """kubeflow/examples' mnist model_fn, small: TF1 variables and optimizer."""
    import tensorflow as tf

    v1 = tf.compat.v1
    weights = v1.get_variable("weights", [2, 2], initializer=v1.zeros_initializer())
    logits = tf.matmul(features["x"], weights)
    classes = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        outputs = {"classes": tf.estimator.export.PredictOutput({"classes": classes})}
        return tf.estimator.EstimatorSpec(mode, predictions=classes, export_outputs=outputs)
    loss = v1.losses.sparse_softmax_cross_entropy(labels=labels[:, 0], logits=logits)
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    metrics = {"accuracy": v1.metrics.accuracy(labels[:, 0], classes)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def mnist_estimator(tf, model_dir):
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=10)
    return tf.estimator.Estimator(mnist_model_fn, config=config)


def guide_estimator(tf, model_dir):
    """The distributed guide's Estimator: a canned classifier under MultiWorkerMirrored."""
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    config = tf.estimator.RunConfig(
        model_dir=model_dir, save_checkpoints_steps=10, train_distribute=strategy
    )
    column = tf.feature_column.numeric_column("x", shape=[2])
    return tf.estimator.LinearClassifier([column], config=config)


def v1_ps_estimator(tf, model_dir):
    """The TF 1.x distributed guide's `RunConfig(train_distribute=ParameterServerStrategy())`
    (TF2's compat.v1 name for it) with a canned classifier."""
    strategy = tf.compat.v1.distribute.experimental.ParameterServerStrategy()
    config = tf.estimator.RunConfig(
        model_dir=model_dir, save_checkpoints_steps=10, train_distribute=strategy
    )
    column = tf.feature_column.numeric_column("x", shape=[2])
    return tf.estimator.LinearClassifier([column], config=config)


ESTIMATORS = {
    "census": census_estimator,
    "mnist": mnist_estimator,
    "guide": guide_estimator,
    "v1_ps": v1_ps_estimator,
}


# ------------------------------------------------------------- one task's run
def evaluations_seen(tf, inner, seen):
    """An exporter that records each evaluation the task runs (its step, metric keys and
    finality) in `seen`, then lets `inner` export."""

    class EvaluationsSeen(tf.estimator.Exporter):
        name = inner.name

        def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
            is_final = is_the_final_export
            seen.append(
                {
                    "global_step": int(eval_result["global_step"]),
                    "keys": sorted(eval_result),
                    "final": bool(is_final),
                }
            )
            return inner.export(estimator, export_path, checkpoint_path, eval_result, is_final)

    return EvaluationsSeen()


def run_task(kind, folder):
    """This process's task of cluster program `kind`: train_and_evaluate as the sample
    does; writes what it saw to FOLDER/<task>.json."""
    tf = import_estimator()
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    name = f"{task['type']}-{task['index']}"
    model_dir = os.path.join(folder, "model")
    estimator = ESTIMATORS[kind](tf, model_dir)
    seen = []
    exporter = evaluations_seen(
        tf, tf.estimator.FinalExporter("final", _serving_receiver(tf)), seen
    )
    train_spec = tf.estimator.TrainSpec(lambda: _features_and_labels(tf, 8), max_steps=MAX_STEPS)
    eval_spec = tf.estimator.EvalSpec(
        lambda: _features_and_labels(tf, 8),
        steps=4,
        exporters=[exporter],
        start_delay_secs=0,
        throttle_secs=1,
    )
    report = {"config": run_config_fields(estimator.config)}
    with open(os.path.join(folder, f"{name}.start.json"), "w") as f:
        json.dump(report, f)
    result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    report["returned"] = _returned(result)
    report["evaluations"] = seen
    with open(os.path.join(folder, f"{name}.json"), "w") as f:
        json.dump(report, f)


def _returned(result):
    if result is None:
        return None
    metrics, exports = result
    return [None if metrics is None else sorted(metrics), None if exports is None else len(exports)]


# --------------------------------------------------------------- the driver
def make_cluster(shape):
    """{job: [addresses]} for `shape` ({job: count}) on free local ports."""
    sys.path.insert(0, ROOT)
    from components.trainer.launcher import free_ports

    ports = iter(free_ports(sum(shape.values())))
    return {job: [f"127.0.0.1:{next(ports)}" for _ in range(n)] for job, n in shape.items()}


def start_task(args, folder, name, tf_config, module="tests.cluster_sample_programs"):
    """`python -m MODULE ARGS` with `tf_config`, logging to FOLDER/NAME.log."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CONFIG=json.dumps(tf_config))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    with open(os.path.join(folder, f"{name}.log"), "w") as log:
        return subprocess.Popen(
            [sys.executable, "-m", module, *args],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def launch(kind, folder, cluster, tasks):
    """Starts each (type, index) of `tasks` as a process with its TF_CONFIG."""
    return {
        (task_type, index): start_task(
            [kind, folder],
            folder,
            f"{task_type}-{index}",
            {"cluster": cluster, "task": {"type": task_type, "index": index}},
        )
        for task_type, index in tasks
    }


def wait_for(processes, folder):
    """Each task's exit status once every task but the ps tasks ended (ps tasks are then
    stopped, as a TFJob stops them: 'stopped'); a cluster past the timeout is stopped
    and reported with every task's log."""
    deadline = time.monotonic() + CLUSTER_TIMEOUT_SECS
    finite = [key for key in processes if key[0] != "ps"]
    while any(processes[key].poll() is None for key in finite):
        if time.monotonic() > deadline:
            stop_all(processes)
            raise TimeoutError(
                f"cluster did not end in {CLUSTER_TIMEOUT_SECS} s:\n" + task_logs(folder)
            )
        time.sleep(0.5)
    exits = {}
    for (task_type, index), process in processes.items():
        code = process.poll()
        exits[f"{task_type}-{index}"] = "stopped" if code is None else code
    stop_all(processes)
    return exits


def stop_all(processes):
    for process in processes.values():
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def task_logs(folder):
    logs = sorted(name for name in os.listdir(folder) if name.endswith(".log"))
    return "\n".join(f"--- {name}\n{_tail(os.path.join(folder, name))}" for name in logs)


def _tail(path, lines=40):
    with open(path, errors="replace") as f:
        return "".join(f.readlines()[-lines:])


def last_error(folder, task):
    """A failed task's error line (`SomeError: message`) from its log."""
    with open(os.path.join(folder, f"{task}.log"), errors="replace") as f:
        errors = [line.strip() for line in f if re.match(r"^\w+(\.\w+)*(Error|Exception): ", line)]
    return errors[-1] if errors else None


def listing(model_dir):
    """model_dir's files, numbers and timestamps replaced by N, each name once."""
    names = set()
    for folder, _, files in os.walk(model_dir):
        for name in files:
            path = os.path.relpath(os.path.join(folder, name), model_dir)
            path = re.sub(r"events\.out\.tfevents\.[^/]*", "events.out.tfevents", path)
            names.add(re.sub(r"\d+", "N", path))
    return sorted(names)


def checkpoint_step(model_dir):
    with open(os.path.join(model_dir, "checkpoint")) as f:
        first = f.readline()
    return int(re.search(r"-(\d+)\"", first).group(1))


def run_cluster(kind, shape, folder):
    """Runs cluster program `kind` on a cluster of `shape` plus, if asked, an evaluator
    (`shape["evaluator"]`, outside the cluster spec as TF_CONFIG has it)."""
    cluster = make_cluster({job: n for job, n in shape.items() if job != "evaluator"})
    tasks = [(job, i) for job, n in shape.items() for i in range(n)]
    started = launch(kind, folder, cluster, tasks)
    result = summarize(folder, wait_for(started, folder))
    # Ports differ from run to run: each address is named by its task.
    text = json.dumps(result)
    for job, addresses in cluster.items():
        for index, address in enumerate(addresses):
            text = text.replace(address, f"{job}-{index}:port")
    return json.loads(text)


def summarize(folder, exits):
    model_dir = os.path.join(folder, "model")
    tasks = {}
    for task, code in exits.items():
        seen = {
            "exit": code,
            "error": last_error(folder, task) if code not in (0, "stopped") else None,
        }
        path = os.path.join(folder, f"{task}.json")
        if not os.path.exists(path):
            path = os.path.join(folder, f"{task}.start.json")
        if os.path.exists(path):
            with open(path) as f:
                seen.update(json.load(f))
        tasks[task] = seen
    step = (
        checkpoint_step(model_dir)
        if os.path.exists(os.path.join(model_dir, "checkpoint"))
        else None
    )
    for seen in tasks.values():
        evaluations = seen.pop("evaluations", None)
        if evaluations:
            # How many evaluations ran depends on timing; the last is of the final checkpoint.
            last = evaluations[-1]
            seen["last_evaluation"] = dict(last, global_step=last["global_step"] == step)
            steps = [evaluation["global_step"] for evaluation in evaluations]
            seen["evaluated_steps_rise"] = steps == sorted(set(steps))
    return {
        "exact": {
            "tasks": tasks,
            "model_dir": listing(model_dir),
            "final_step_reached": None if step is None else step >= MAX_STEPS,
        },
        "close": {},
    }


def cluster_program(kind, shape):
    def program(tf, folder):
        return run_cluster(kind, shape, folder)

    program.__name__ = f"{kind}_cluster"
    return program


# ------------------------------------------------- TF_CONFIG read by RunConfig
_ADDRESSES = {
    "chief": ["host0:2222"],
    "worker": ["host1:2222", "host2:2222"],
    "ps": ["host3:2222"],
}
_WITH_EVALUATOR = dict(_ADDRESSES, evaluator=["host4:2222"])
_LEGACY = {"master": ["host0:2222"], "worker": ["host1:2222"], "ps": ["host3:2222"]}


def _task(task_type, index=0):
    return {"type": task_type, "index": index}


# {name: (TF_CONFIG, whether RunConfig gets a train_distribute)}
TF_CONFIGS = {
    "none": ({}, False),
    "chief": ({"cluster": _ADDRESSES, "task": _task("chief")}, False),
    "worker_1": ({"cluster": _ADDRESSES, "task": _task("worker", 1)}, False),
    "ps": ({"cluster": _ADDRESSES, "task": _task("ps")}, False),
    "evaluator": ({"cluster": _ADDRESSES, "task": _task("evaluator")}, False),
    "evaluator_1": ({"cluster": _ADDRESSES, "task": _task("evaluator", 1)}, False),
    "evaluator_in_cluster": ({"cluster": _WITH_EVALUATOR, "task": _task("evaluator")}, False),
    "chief_beside_evaluator": ({"cluster": _WITH_EVALUATOR, "task": _task("chief")}, False),
    "only_chief": ({"cluster": {"chief": ["host0:2222"]}, "task": _task("chief")}, False),
    "service": ({"cluster": _ADDRESSES, "task": _task("chief"), "service": {"a": 1}}, False),
    "session_master": (
        {"cluster": _ADDRESSES, "task": _task("worker"), "session_master": "grpc://x:1"},
        False,
    ),
    "master": ({"cluster": _LEGACY, "task": _task("master")}, False),
    "master_worker": ({"cluster": _LEGACY, "task": _task("worker")}, False),
    "workers_only": ({"cluster": {"worker": _ADDRESSES["worker"]}, "task": _task("worker")}, False),
    "workers_only_distributed": (
        {"cluster": {"worker": _ADDRESSES["worker"]}, "task": _task("worker", 1)},
        True,
    ),
    "chief_distributed": ({"cluster": _ADDRESSES, "task": _task("worker", 1)}, True),
    "two_chiefs": (
        {"cluster": dict(_ADDRESSES, chief=["a:1", "b:1"]), "task": _task("chief")},
        False,
    ),
    "unknown_task_type": ({"cluster": _ADDRESSES, "task": _task("trainer")}, False),
    "task_index_out_of_range": ({"cluster": _ADDRESSES, "task": _task("worker", 2)}, False),
    "negative_task_index": ({"cluster": _ADDRESSES, "task": _task("worker", -1)}, False),
    "no_task": ({"cluster": _ADDRESSES}, False),
    "no_task_index": ({"cluster": _ADDRESSES, "task": {"type": "worker"}}, False),
    "no_cluster_ps": ({"task": _task("ps")}, False),
    "no_cluster_worker_1": ({"task": _task("worker", 1)}, False),
    "service_not_a_dict": ({"cluster": _ADDRESSES, "task": _task("chief"), "service": "x"}, False),
}

# TF_CONFIGs train_and_evaluate refuses before training: {name: TF_CONFIG}.
REFUSED_BY_TRAIN_AND_EVALUATE = {
    "second_evaluator": {"cluster": _ADDRESSES, "task": _task("evaluator", 1)},
    "task_type_of_its_own": {
        "cluster": dict(_ADDRESSES, trainer=["host5:2222"]),
        "task": _task("trainer"),
    },
}


def run_config_probes(tf, folder):
    """RunConfig's fields (or its error) under each of TF_CONFIGS, and train_and_evaluate's
    refusals (TF_CONFIG set in this process meanwhile)."""
    tf = import_estimator()
    before = os.environ.get("TF_CONFIG")
    try:
        configs = {}
        for name, (tf_config, distributed) in TF_CONFIGS.items():
            os.environ["TF_CONFIG"] = json.dumps(tf_config)
            configs[name] = _run_config_or_error(tf, distributed)
        refusals = {}
        for name, tf_config in REFUSED_BY_TRAIN_AND_EVALUATE.items():
            os.environ["TF_CONFIG"] = json.dumps(tf_config)
            refusals[name] = _train_and_evaluate_error(tf, os.path.join(folder, name))
    finally:
        os.environ.pop("TF_CONFIG")
        if before is not None:
            os.environ["TF_CONFIG"] = before
    return {"exact": {"run_configs": configs, "train_and_evaluate": refusals}, "close": {}}


def _run_config_or_error(tf, distributed):
    fields = {}

    def read():
        strategy = tf.distribute.MirroredStrategy() if distributed else None
        fields.update(run_config_fields(tf.estimator.RunConfig(train_distribute=strategy)))

    return error_of(read) or fields


def _train_and_evaluate_error(tf, model_dir):
    estimator = mnist_estimator(tf, model_dir)
    train_spec = tf.estimator.TrainSpec(lambda: _features_and_labels(tf, 8), max_steps=1)
    eval_spec = tf.estimator.EvalSpec(lambda: _features_and_labels(tf, 8), steps=1)
    return error_of(lambda: tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec))


PROGRAMS = {
    "run_config_per_tf_config": run_config_probes,
    # kubeflow/examples mnist: a TF1 model_fn on a chief, a worker and a ps.
    "mnist_ps_cluster": cluster_program("mnist", {"chief": 1, "worker": 1, "ps": 1}),
    # cloudml-samples census run distributed: chief, worker, ps and an evaluator.
    "census_ps_cluster_with_evaluator": cluster_program(
        "census", {"chief": 1, "worker": 1, "ps": 1, "evaluator": 1}
    ),
    # The distributed guide: MultiWorkerMirroredStrategy over two workers, no chief.
    "guide_multi_worker_mirrored": cluster_program("guide", {"worker": 2}),
    # ... over a chief and a worker, with an evaluator task.
    "guide_multi_worker_mirrored_with_evaluator": cluster_program(
        "guide", {"chief": 1, "worker": 1, "evaluator": 1}
    ),
    # Cloud ML Engine's legacy layout: a master (which trains and evaluates), a worker, a ps.
    "mnist_master_cluster": cluster_program("mnist", {"master": 1, "worker": 1, "ps": 1}),
    # The TF 1.x guide's ParameterServerStrategy given to RunConfig, on a ps cluster.
    "v1_parameter_server_strategy": cluster_program("v1_ps", {"chief": 1, "worker": 1, "ps": 1}),
}


if __name__ == "__main__":
    run_task(*sys.argv[1:3])
