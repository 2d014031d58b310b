"""`TF_CONFIG`, and the worker and ps tasks of parameter-server training.

Under `tf.distribute` parameter-server training the chief alone runs the
training program (a `ClusterCoordinator`); workers and ps tasks only run a
server until the job is stopped.
"""

import json
import logging
import os

log = logging.getLogger(__name__)


def tf_config_from_env():
    return json.loads(os.environ.get("TF_CONFIG") or "{}")


def start_server(tf_config):
    """Starts this task's server of the cluster (in process); returns it."""
    import tensorflow as tf

    cluster = tf_config["cluster"]
    task = tf_config["task"]
    workers = len(cluster.get("worker", []))
    # Fewer inter-op threads than workers + 1 makes a ps task hang silently.
    config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=max(workers + 2, 4))
    return tf.distribute.Server(
        tf.train.ClusterSpec(cluster),
        job_name=task["type"],
        task_index=int(task.get("index", 0)),
        protocol="grpc",
        config=config,
        start=True,
    )


def serve_until(tf_config, done, poll_secs=1.0):
    """Serves this task of the cluster until `done()` (polled) is true."""
    import time

    task = tf_config["task"]
    log.info("Serving as %s %s of the parameter-server cluster", task["type"], task.get("index", 0))
    server = start_server(tf_config)
    while not done():
        time.sleep(poll_secs)
    return server


def run_server(tf_config):
    """Serves this task of the cluster until the process is stopped."""
    task = tf_config["task"]
    log.info("Serving as %s %s of the parameter-server cluster", task["type"], task.get("index", 0))
    start_server(tf_config).join()
