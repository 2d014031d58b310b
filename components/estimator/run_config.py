"""`RunConfig`: where and how often an Estimator saves, logs and distributes."""

import os

import tensorflow as tf

from components.estimator import server
from components.estimator.ignored import warn_once

_DEFAULT_SAVE_CHECKPOINTS_SECS = 600

# RunConfig arguments with no TF2 meaning: {name: (values that need no warning, what
# happens instead)}.
_IGNORED_ARGUMENTS = {
    "device_fn": ((None,), "variables and ops are placed by TensorFlow and train_distribute"),
    "protocol": ((None, "grpc"), "cluster servers always use gRPC"),
    "eval_distribute": (
        (None,),
        "the TF2 path evaluates without a strategy (a TF1 graph model_fn's evaluation runs "
        "under it when it has one replica, as under tf.estimator)",
    ),
    "experimental_max_worker_delay_secs": ((None,), "workers start training as soon as they can"),
    "session_creation_timeout_secs": ((7200,), "there is no TF1 session to wait for"),
}

# session_config fields carried over to tf.config: {field: (getter, setter)}.
_SESSION_SETTINGS = {
    "intra_op_parallelism_threads": (
        tf.config.threading.get_intra_op_parallelism_threads,
        tf.config.threading.set_intra_op_parallelism_threads,
    ),
    "inter_op_parallelism_threads": (
        tf.config.threading.get_inter_op_parallelism_threads,
        tf.config.threading.set_inter_op_parallelism_threads,
    ),
    "allow_soft_placement": (
        tf.config.get_soft_device_placement,
        tf.config.set_soft_device_placement,
    ),
}


def _apply_session_config(session_config):
    """Applies a TF1 `ConfigProto`'s thread and placement settings process-wide, as TF2 has
    no sessions; warns about each other field set, and about a setting that TensorFlow no
    longer accepts because its runtime has started."""
    for field, value in session_config.ListFields():
        name = f"session_config.{field.name}"
        if field.name not in _SESSION_SETTINGS:
            warn_once(
                name,
                f"RunConfig: {name} is a TF1 session setting: a TF1 graph model_fn's "
                "session gets it; the TF2 path, which has no session, ignores it.",
            )
            continue
        get, set_ = _SESSION_SETTINGS[field.name]
        if get() == value:
            continue
        try:
            set_(value)
        except RuntimeError:
            warn_once(
                name,
                f"RunConfig: {name}={value} is ignored: TensorFlow's runtime had "
                "already started; create the RunConfig before running any op, or "
                "call tf.config.threading first.",
            )


# A default told apart from an explicit None (tf.estimator's: both None saves nothing).
_USE_DEFAULT = object()


# The settings a RunConfig is made of (and `replace` changes), in tf.estimator's order.
_SETTINGS = (
    "model_dir",
    "tf_random_seed",
    "save_summary_steps",
    "save_checkpoints_steps",
    "save_checkpoints_secs",
    "session_config",
    "keep_checkpoint_max",
    "keep_checkpoint_every_n_hours",
    "log_step_count_steps",
    "train_distribute",
    "device_fn",
    "protocol",
    "eval_distribute",
    "experimental_distribute",
    "experimental_max_worker_delay_secs",
    "session_creation_timeout_secs",
    "checkpoint_save_graph_def",
)
# What TF_CONFIG sets, in tf.estimator's order.
_FROM_TF_CONFIG = (
    "service",
    "cluster_spec",
    "task_type",
    "task_id",
    "global_id_in_cluster",
    "master",
    "evaluation_master",
    "is_chief",
    "num_ps_replicas",
    "num_worker_replicas",
)


class RunConfig:
    """Run settings with tf.estimator 2.15's defaults.

    Neither `save_checkpoints_steps` nor `save_checkpoints_secs` given means
    every 600 seconds; both given as None, no checkpoints while training; giving
    both is an error.  The cluster, task type and
    index come from the `TF_CONFIG` environment variable when it is set.
    """

    def __init__(
        self,
        model_dir=None,
        tf_random_seed=None,
        save_summary_steps=100,
        save_checkpoints_steps=_USE_DEFAULT,
        save_checkpoints_secs=_USE_DEFAULT,
        session_config=None,
        keep_checkpoint_max=5,
        keep_checkpoint_every_n_hours=10000,
        log_step_count_steps=100,
        train_distribute=None,
        device_fn=None,
        protocol=None,
        eval_distribute=None,
        experimental_distribute=None,
        experimental_max_worker_delay_secs=None,
        session_creation_timeout_secs=7200,
        checkpoint_save_graph_def=True,
    ):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = _DEFAULT_SAVE_CHECKPOINTS_SECS
        # (Both None given: as under tf.estimator, train() saves no checkpoints on the
        # graph-mode path; the TF2 path still saves at the end of each call.)
        if save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        if save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError(
                "RunConfig: set at most one of save_checkpoints_steps and save_checkpoints_secs."
            )
        if keep_checkpoint_max is not None and keep_checkpoint_max < 0:
            raise ValueError("RunConfig: keep_checkpoint_max must be >= 0.")
        if experimental_distribute is not None:
            # tf.estimator's DistributeConfig: strategies given directly take precedence.
            if train_distribute is None:
                train_distribute = getattr(experimental_distribute, "train_distribute", None)
            if eval_distribute is None:
                eval_distribute = getattr(experimental_distribute, "eval_distribute", None)
            if getattr(experimental_distribute, "remote_cluster", None):
                warn_once(
                    "experimental_distribute.remote_cluster",
                    "RunConfig: experimental_distribute.remote_cluster is ignored: the "
                    "cluster comes from TF_CONFIG.",
                )
        if session_config is not None:
            _apply_session_config(session_config)
        for name, value in (
            ("device_fn", device_fn),
            ("protocol", protocol),
            ("eval_distribute", eval_distribute),
            ("experimental_max_worker_delay_secs", experimental_max_worker_delay_secs),
            ("session_creation_timeout_secs", session_creation_timeout_secs),
        ):
            harmless, instead = _IGNORED_ARGUMENTS[name]
            if not any(value is h or value == h for h in harmless):
                warn_once(name, f"RunConfig: {name} is ignored: {instead}.")
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
        self.experimental_distribute = experimental_distribute
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
        self.service = tf_config.get("service")
        if self.service is not None and not isinstance(self.service, dict):
            raise TypeError(
                f"TF_CONFIG's 'service' must be a dict (a platform's service settings), "
                f"got {type(self.service).__name__}: {self.service!r}."
            )

    def replace(self, **kwargs):
        """A copy with some fields changed, as tf.estimator's `RunConfig.replace`."""
        fields = {name: getattr(self, name) for name in _SETTINGS}
        unknown = sorted(set(kwargs) - set(fields))
        if unknown:
            raise ValueError(
                f"RunConfig.replace: {unknown} cannot be replaced; the settings that can: "
                f"{sorted(fields)}."
            )
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
            fields["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs:
            fields["save_checkpoints_steps"] = None
        fields.update(kwargs)
        return RunConfig(**fields)


def as_logged(config):
    """What 2.15's Estimator logged as `Using config: ...`: its RunConfig's fields (their
    private names, its order), `config`'s values.  (Not a method: RunConfig's public
    attributes are 2.15's.)"""
    return str({f"_{name}": getattr(config, name) for name in _SETTINGS + _FROM_TF_CONFIG})
