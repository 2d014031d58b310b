"""Training under tf.distribute strategies, with real devices and processes on 127.0.0.1."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from components.trainer.launcher import free_ports
from pipeline.config import REPO_ROOT

pytestmark = pytest.mark.slow

_COMMON = textwrap.dedent("""
    import json, os, sys
    import numpy as np, tensorflow as tf, tf_keras
    from components import estimator

    # As under tf.estimator 2.15, a RunConfig given a strategy reads as one machine's
    # (is_chief everywhere): the chief is TF_CONFIG's, or the first worker without one.
    task = json.loads(os.environ.get("TF_CONFIG") or "{}").get("task", {})
    is_chief = task.get("type", "chief") == "chief" or (
        task.get("index") == 0 and "chief" not in json.loads(os.environ["TF_CONFIG"])["cluster"])

    x = np.random.default_rng(0).normal(size=(1024, 3)).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5], "float32") > 0).astype("int64")
    columns = [tf.feature_column.numeric_column("x", shape=(3,))]
    spec = tf.feature_column.make_parse_example_spec(columns)

    def input_fn(per_replica_batch):
        def fn(input_context=None):
            ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
            if input_context is not None and input_context.num_input_pipelines > 1:
                ds = ds.shard(input_context.num_input_pipelines,
                              input_context.input_pipeline_id)
            return ds.repeat().batch(per_replica_batch)
        return fn

    def eval_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(256)

    def classifier(model_dir, strategy, warm_start_from=None):
        return estimator.DNNClassifier(
            [8], columns, optimizer=lambda: tf_keras.optimizers.SGD(0.1),
            warm_start_from=warm_start_from,
            config=estimator.RunConfig(model_dir=model_dir, train_distribute=strategy,
                                       save_checkpoints_steps=20, tf_random_seed=1))

    def serve(export_dir):
        model = tf.saved_model.load(export_dir)
        examples = [tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))}))
            .SerializeToString() for row in x[:64]]
        scores = model.signatures["serving_default"](inputs=tf.constant(examples))["scores"]
        return float(tf.reduce_mean(tf.cast(tf.equal(tf.argmax(scores, 1), y[:64]), tf.float32)))
""")

_SINGLE_HOST = _COMMON + textwrap.dedent("""
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    root = sys.argv[1]
    init = classifier(root + "/init", None)
    init.train(input_fn(32), steps=1)
    results = {}
    strategies = {
        "one_device": (None, 32),
        "mirrored": (tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]), 16),
        "central_storage": (tf.distribute.experimental.CentralStorageStrategy(
            ["/cpu:0", "/cpu:1"]), 16),
    }
    for name, (strategy, batch) in strategies.items():
        model = classifier(root + "/" + name, strategy, warm_start_from=root + "/init")
        model.train(input_fn(batch), steps=60)
        metrics = model.evaluate(eval_fn)
        path = model.export_saved_model(root + "/" + name + "/export",
            estimator.export.build_parsing_serving_input_receiver_fn(spec)).decode()
        results[name] = {"loss": float(metrics["loss"]), "step": int(metrics["global_step"]),
                         "served_accuracy": serve(path)}
    print(json.dumps(results))
""")

_WORKER = _COMMON + textwrap.dedent("""
    import time
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    model_dir, max_steps, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

    class Pace(estimator.Hook):
        max_steps_per_call = 10

        def after_step(self, context, logs):
            time.sleep(pause)

    model = classifier(model_dir, strategy)
    model.train(input_fn(16), max_steps=max_steps, hooks=[Pace()])
    result = {"is_chief": is_chief,
              "step": int(model.get_variable_value("global_step"))
              if is_chief else None}
    if is_chief:
        path = model.export_saved_model(model_dir + "/export",
            estimator.export.build_parsing_serving_input_receiver_fn(spec)).decode()
        result["served_accuracy"] = serve(path)
    print(json.dumps(result))
""")


# A linear model over a hashed categorical column: its gradients are sparse
# (IndexedSlices), and each worker's batch touches different rows.
_SPARSE_WORKER = textwrap.dedent("""
    import json, os, sys
    import numpy as np, tensorflow as tf
    from components import estimator

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    words = np.array([f"w{i}".encode() for i in range(200)])
    rng = np.random.default_rng(0)
    x = rng.choice(words, size=2048)
    y = (np.char.count(x.astype(str), "1") > 0).astype("int64")
    column = tf.feature_column.categorical_column_with_hash_bucket("word", 1000)

    def input_fn(input_context=None):
        ds = tf.data.Dataset.from_tensor_slices(({"word": x[:, None]}, y))
        if input_context is not None:
            ds = ds.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        return ds.repeat().batch(32)

    model = estimator.LinearClassifier([column], optimizer="Ftrl", config=estimator.RunConfig(
        model_dir=sys.argv[1], train_distribute=strategy, tf_random_seed=1))
    model.train(input_fn, max_steps=400)
    result = {"is_chief": os.environ["TF_CONFIG"].endswith('"index": 0}}')}
    if result["is_chief"]:
        metrics = model.evaluate(lambda: tf.data.Dataset.from_tensor_slices(
            ({"word": x[:, None]}, y)).batch(256))
        result.update(step=int(metrics["global_step"]), accuracy=float(metrics["accuracy"]))
    print(json.dumps(result))
""")


# The TF distributed guide's script: every task runs train_and_evaluate with a
# MultiWorkerMirroredStrategy; as under tf.estimator 2.15, without an evaluator task none
# evaluates (each returns None), the chief saves in model_dir, the others in tmp_worker_<i>.
_TRAIN_AND_EVALUATE = _COMMON + textwrap.dedent("""
    # Adam at 0.05: at tf.estimator's default (Keras's 0.001) 60 steps barely train.
    model = estimator.DNNClassifier([8], columns, optimizer=lambda: tf_keras.optimizers.Adam(0.05),
                                    config=estimator.RunConfig(
        model_dir=sys.argv[1], train_distribute=tf.distribute.MultiWorkerMirroredStrategy(),
        save_checkpoints_steps=20, tf_random_seed=1))
    receiver = estimator.export.build_parsing_serving_input_receiver_fn(spec)
    returned = estimator.train_and_evaluate(
        model, estimator.TrainSpec(input_fn(16), max_steps=60),
        estimator.EvalSpec(eval_fn, steps=2, throttle_secs=0,
                           exporters=[estimator.LatestExporter("latest", receiver)]))
    result = {"is_chief": is_chief, "returned": returned}
    if is_chief:
        path = model.export_saved_model(sys.argv[1] + "/export", receiver).decode()
        result["served_accuracy"] = serve(path)
    print(json.dumps(result))
""")


_SERVER = textwrap.dedent("""
    import json, os
    from components.estimator import server
    server.run_server(json.loads(os.environ["TF_CONFIG"]))
""")

_PS_CHIEF = _COMMON + textwrap.dedent("""
    import time
    from components.trainer import strategy as strategy_lib
    choice = strategy_lib.choose_here("auto")
    assert choice.name == "parameter_server", choice
    model_dir, max_steps = sys.argv[1], int(sys.argv[2])

    class Slow(estimator.Hook):
        max_steps_per_call = 10

        def after_step(self, context, logs):
            time.sleep(0.05)

    model = classifier(model_dir, strategy_lib.build(choice))
    model.train(input_fn(16), max_steps=max_steps, hooks=[Slow()])
    path = model.export_saved_model(model_dir + "/export",
        estimator.export.build_parsing_serving_input_receiver_fn(spec)).decode()
    print(json.dumps({"step": int(model.get_variable_value("global_step")),
                      "served_accuracy": serve(path)}))
""")


# tf.estimator-style distributed code: every task runs train_and_evaluate with
# TF_CONFIG and no strategy.  As under tf.estimator 2.15, each returns None and no
# task of these evaluates (an evaluator task would); the chief exports after training.
_EVERY_TASK = _COMMON + textwrap.dedent("""
    model_dir = sys.argv[1]
    model = classifier(model_dir, None)
    receiver = estimator.export.build_parsing_serving_input_receiver_fn(spec)
    returned = estimator.train_and_evaluate(
        model, estimator.TrainSpec(input_fn(16), max_steps=120),
        estimator.EvalSpec(eval_fn, steps=None, throttle_secs=0,
                           exporters=[estimator.LatestExporter("latest", receiver)]))
    result = {"returned": returned, "step": int(model.get_variable_value("global_step"))}
    if model.config.is_chief:
        result["strategy"] = type(model._config.train_distribute).__name__
        result["served_accuracy"] = serve(
            model.export_saved_model(model_dir + "/export", receiver).decode())
    print(json.dumps(result))
""")


class _Cluster:
    """A chief (run by the test), workers and ps tasks as processes on 127.0.0.1."""

    def __init__(self, workers, ps):
        ports = iter(free_ports(1 + workers + ps))
        self.spec = {
            "chief": [f"127.0.0.1:{next(ports)}"],
            "worker": [f"127.0.0.1:{next(ports)}" for _ in range(workers)],
            "ps": [f"127.0.0.1:{next(ports)}" for _ in range(ps)],
        }
        self.servers = {}

    def tf_config(self, task_type, index=0):
        return json.dumps({"cluster": self.spec, "task": {"type": task_type, "index": index}})

    def __enter__(self):
        for task_type in ("worker", "ps"):
            for index in range(len(self.spec[task_type])):
                self.servers[(task_type, index)] = subprocess.Popen(
                    [sys.executable, "-c", _SERVER],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=_env(TF_CONFIG=self.tf_config(task_type, index)),
                )
        return self

    def __exit__(self, *exc):
        for process in self.servers.values():
            process.kill()
            process.wait(timeout=30)

    def run_chief(self, *args, timeout=300):
        return subprocess.Popen(
            [sys.executable, "-c", _PS_CHIEF, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(TF_CONFIG=self.tf_config("chief")),
        )


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    env.update(extra)
    return env


def test_mirrored_and_central_storage_match_one_device(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", _SINGLE_HOST, str(tmp_path)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    runs = json.loads(result.stdout.strip().splitlines()[-1])
    one = runs["one_device"]
    for name in ("mirrored", "central_storage"):
        # Two replicas of 16 see the same 32 examples a step as one device
        # does, so training follows the same path up to float rounding.
        assert runs[name]["step"] == one["step"] == 60
        assert runs[name]["loss"] == pytest.approx(one["loss"], rel=1e-3), runs
        assert runs[name]["served_accuracy"] == pytest.approx(one["served_accuracy"], abs=0.02)
    assert one["served_accuracy"] > 0.8


def _start_workers(model_dir, max_steps, pause):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    return [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, model_dir, str(max_steps), str(pause)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(
                TF_CONFIG=json.dumps(
                    {"cluster": cluster, "task": {"type": "worker", "index": index}}
                )
            ),
        )
        for index in range(2)
    ]


def _finish(workers, timeout=600):
    try:
        return [w.communicate(timeout=timeout) for w in workers]
    finally:
        for w in workers:
            w.kill()


@pytest.mark.parametrize(
    "layout",
    [("worker", "worker"), ("worker", "worker", "worker"), ("chief", "worker")],
    ids=["2-workers", "3-workers", "chief-and-worker"],
)
def test_train_and_evaluate_under_multi_worker_mirrored(tmp_path, layout):
    """The chief's evaluations and exports issue no collective its peers do not join."""
    ports = iter(free_ports(len(layout)))
    cluster = {}
    for task_type in layout:
        cluster.setdefault(task_type, []).append(f"127.0.0.1:{next(ports)}")
    tasks = [
        (task_type, index) for task_type in cluster for index in range(len(cluster[task_type]))
    ]
    model_dir = tmp_path / "model"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _TRAIN_AND_EVALUATE, str(model_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(
                TF_CONFIG=json.dumps(
                    {"cluster": cluster, "task": {"type": task_type, "index": index}}
                )
            ),
        )
        for task_type, index in tasks
    ]
    outputs = _finish(processes)
    for process, (_out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err[-3000:]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert [r["is_chief"] for r in results] == [True] + [False] * (len(layout) - 1)
    assert [r["returned"] for r in results] == [None] * len(layout)
    assert sorted(p.name for p in model_dir.glob("model.ckpt-*.index")) == [
        "model.ckpt-20.index",
        "model.ckpt-40.index",
        "model.ckpt-60.index",
    ]
    # (tasks[0] is the chief: TF_CONFIG's, or the first worker.)
    others = sorted(p.name for p in model_dir.glob("tmp_*"))
    assert others == sorted(f"tmp_{task_type}_{index}" for task_type, index in tasks[1:])
    assert not (model_dir / "eval").exists() and not (model_dir / "export" / "latest").exists()
    assert results[0]["served_accuracy"] > 0.8


def test_multi_worker_mirrored_sums_sparse_gradients_of_a_linear_model(tmp_path):
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _SPARSE_WORKER, str(tmp_path / "model")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(
                TF_CONFIG=json.dumps(
                    {"cluster": cluster, "task": {"type": "worker", "index": index}}
                )
            ),
        )
        for index in range(2)
    ]
    outputs = _finish(workers, timeout=300)
    for worker, (_out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err[-3000:]
    chief = json.loads(outputs[0][0].strip().splitlines()[-1])
    assert chief["is_chief"] and chief["step"] == 400
    assert chief["accuracy"] > 0.85  # a 60% majority class to beat


# MultiWorkerMirroredStrategy checks its peers every 30 s and gives up on one after
# three tries of at most 10 s each, then aborts its collectives: a survivor blocked in an
# all-reduce with a dead peer fails within 60 s; 30 s more for a loaded machine.  (Without
# the check it would wait in that all-reduce for good.)
_LOST_PEER_NOTICED_WITHIN_S = 90


def test_multi_worker_mirrored_fails_fast_on_a_lost_worker_and_resumes(tmp_path):
    model_dir = tmp_path / "model"
    workers = _start_workers(str(model_dir), 400, 0.2)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and not list(model_dir.glob("model.ckpt-20.index")):
            time.sleep(0.2)
        assert list(model_dir.glob("model.ckpt-20.index")), "training did not start"
        workers[1].send_signal(signal.SIGKILL)
        started = time.time()
        try:
            _, err = workers[0].communicate(timeout=_LOST_PEER_NOTICED_WITHIN_S)
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"the surviving worker still ran {_LOST_PEER_NOTICED_WITHIN_S} s "
                "after its peer was killed"
            )
        print(f"survivor failed {time.time() - started:.1f} s after the kill", file=sys.stderr)
    finally:
        for w in workers:
            w.kill()
    assert workers[0].returncode != 0
    assert "task:1" in err or "task 1" in err, err[-3000:]
    saved = max(int(p.name.split("-")[1].split(".")[0]) for p in model_dir.glob("*.index"))
    # Restarting the job resumes from the last checkpoint.
    restarted = _start_workers(str(model_dir), saved + 20, 0.0)
    outputs = _finish(restarted)
    for worker, (_out, err) in zip(restarted, outputs, strict=True):
        assert worker.returncode == 0, err[-3000:]
    assert json.loads(outputs[0][0].strip().splitlines()[-1])["step"] == saved + 20


def test_parameter_server_with_chief_two_workers_and_one_ps(tmp_path):
    with _Cluster(workers=2, ps=1) as cluster:
        chief = cluster.run_chief(str(tmp_path / "model"), "150")
        out, err = chief.communicate(timeout=300)
    assert chief.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert result["step"] == 150
    assert result["served_accuracy"] > 0.8


def test_tf_estimator_style_code_trains_on_a_parameter_server_cluster_unchanged(tmp_path):
    cluster = _Cluster(workers=2, ps=1)
    tasks = [
        subprocess.Popen(
            [sys.executable, "-c", _EVERY_TASK, str(tmp_path / "model")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(TF_CONFIG=cluster.tf_config(kind, index)),
        )
        for kind, index in [("ps", 0), ("worker", 0), ("worker", 1), ("chief", 0)]
    ]
    try:
        outputs = [task.communicate(timeout=300) for task in tasks[1:]]
        for task, (_out, err) in zip(tasks[1:], outputs, strict=True):
            assert task.returncode == 0, err[-3000:]
        # Workers serve the chief until its checkpoint reaches max_steps, then return
        # (where 2.15's workers stopped training); ps tasks serve until stopped.
        assert tasks[0].poll() is None
    finally:
        for task in tasks:
            task.kill()
            task.wait(timeout=30)
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert [r["returned"] for r in results] == [None] * 3
    assert all(r["step"] == 120 for r in results)
    chief = results[-1]
    assert chief["strategy"] == "ParameterServerStrategyV2"
    assert chief["served_accuracy"] > 0.8
    assert not (tmp_path / "model" / "eval").exists()


def test_parameter_server_carries_on_when_a_worker_is_killed(tmp_path):
    model_dir = tmp_path / "model"
    with _Cluster(workers=2, ps=1) as cluster:
        chief = cluster.run_chief(str(model_dir), "200")
        try:
            deadline = time.time() + 240
            while time.time() < deadline and not list(model_dir.glob("model.ckpt-20.index")):
                time.sleep(0.2)
            assert list(model_dir.glob("model.ckpt-20.index")), "training did not start"
            cluster.servers[("worker", 1)].send_signal(signal.SIGKILL)
            saved_at_kill = max(
                int(p.name.split("-")[1].split(".")[0])
                for p in model_dir.glob("model.ckpt-*.index")
            )
            training_when_killed = chief.poll() is None
            out, err = chief.communicate(timeout=300)
        finally:
            chief.kill()
    assert chief.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    # The worker died with at least half of the training still to run (the kill follows
    # the first checkpoint by a poll of 0.2 s); the coordinator rescheduled the lost
    # worker's steps on the survivor, which ran them all.
    assert training_when_killed and saved_at_kill <= 100, saved_at_kill
    assert result["step"] == 200
