"""`RunConfig`: where and how often an Estimator saves, logs and distributes."""

import os

import tensorflow as tf

from components.trainer import server

_DEFAULT_SAVE_CHECKPOINTS_SECS = 600


class RunConfig:
    """Run settings with tf.estimator 2.15's defaults.

    Neither `save_checkpoints_steps` nor `save_checkpoints_secs` given means
    every 600 seconds; giving both is an error.  The cluster, task type and
    index come from the `TF_CONFIG` environment variable when it is set.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=None, save_checkpoints_secs=None,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None,
                 eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None, session_creation_timeout_secs=7200,
                 checkpoint_save_graph_def=True):
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(
                "RunConfig: set at most one of save_checkpoints_steps and save_checkpoints_secs.")
        if save_checkpoints_steps is None and save_checkpoints_secs is None:
            save_checkpoints_secs = _DEFAULT_SAVE_CHECKPOINTS_SECS
        if keep_checkpoint_max is not None and keep_checkpoint_max < 0:
            raise ValueError("RunConfig: keep_checkpoint_max must be >= 0.")
        self.model_dir = os.fspath(model_dir) if model_dir else None
        self.tf_random_seed = tf_random_seed
        self.save_summary_steps = save_summary_steps
        self.save_checkpoints_steps = save_checkpoints_steps
        self.save_checkpoints_secs = save_checkpoints_secs
        self.session_config = session_config
        self.keep_checkpoint_max = keep_checkpoint_max
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.log_step_count_steps = log_step_count_steps
        self.train_distribute = train_distribute
        self.eval_distribute = eval_distribute
        self.device_fn = device_fn
        self.protocol = protocol
        self.experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self.session_creation_timeout_secs = session_creation_timeout_secs
        self.checkpoint_save_graph_def = checkpoint_save_graph_def
        self._read_tf_config()

    def _read_tf_config(self):
        tf_config = server.tf_config_from_env()
        cluster = dict(tf_config.get("cluster") or {})
        # tf.estimator's RunConfig.cluster_spec is a tf.train.ClusterSpec.
        self.cluster_spec = tf.train.ClusterSpec(cluster)
        task = tf_config.get("task") or {}
        self.task_type = task.get("type", "worker")
        self.task_id = int(task.get("index", 0))
        workers = cluster.get("worker", [])
        chiefs = cluster.get("chief", [])
        self.num_ps_replicas = len(cluster.get("ps", []))
        self.num_worker_replicas = max(1, len(workers) + len(chiefs))
        if chiefs:
            self.is_chief = self.task_type == "chief"
        else:
            self.is_chief = self.task_type == "worker" and self.task_id == 0
        self.master = ""
        self.evaluation_master = ""
        self.global_id_in_cluster = self.task_id

    def replace(self, **kwargs):
        """A copy with some fields changed, as tf.estimator's `RunConfig.replace`."""
        fields = {
            name: getattr(self, name)
            for name in ("model_dir", "tf_random_seed", "save_summary_steps",
                         "save_checkpoints_steps", "save_checkpoints_secs", "session_config",
                         "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
                         "log_step_count_steps", "train_distribute", "device_fn", "protocol",
                         "eval_distribute", "experimental_max_worker_delay_secs",
                         "session_creation_timeout_secs", "checkpoint_save_graph_def")
        }
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
            fields["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs:
            fields["save_checkpoints_steps"] = None
        fields.update(kwargs)
        return RunConfig(**fields)
