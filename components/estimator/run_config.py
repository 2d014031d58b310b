"""`RunConfig`: where and how often an Estimator saves, logs and distributes."""

import contextlib
import copy
import inspect
import json
import logging
import os

import tensorflow as tf

from components.estimator import server
from components.estimator.ignored import warn_once

log = logging.getLogger(__name__)

_DEFAULT_SAVE_CHECKPOINTS_SECS = 600
_V1ParameterServerStrategy = tf.compat.v1.distribute.experimental.ParameterServerStrategy

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
_REPLACING = []  # (non-empty while `replace` makes its new config: 2.15 copied one)

# {setting: (whether a value other than None is valid, what 2.15's ValueError said)},
# checked in this order on a RunConfig made or replaced.
_VALID = {
    "save_summary_steps": (lambda v: v >= 0, "save_summary_steps should be >= 0"),
    "save_checkpoints_steps": (lambda v: v >= 0, "save_checkpoints_steps should be >= 0"),
    "save_checkpoints_secs": (lambda v: v >= 0, "save_checkpoints_secs should be >= 0"),
    "session_config": (
        lambda v: isinstance(v, tf.compat.v1.ConfigProto),
        "session_config must be instance of ConfigProto",
    ),
    "keep_checkpoint_max": (lambda v: v >= 0, "keep_checkpoint_max should be >= 0"),
    "keep_checkpoint_every_n_hours": (
        lambda v: v > 0,
        "keep_checkpoint_every_n_hours should be > 0",
    ),
    "log_step_count_steps": (lambda v: v > 0, "log_step_count_steps should be > 0"),
    "tf_random_seed": (lambda v: isinstance(v, int), "tf_random_seed must be integer."),
    "experimental_max_worker_delay_secs": (
        lambda v: isinstance(v, int),
        "experimental_max_worker_delay_secs must be an integer if set.",
    ),
    "session_creation_timeout_secs": (
        lambda v: v > 0,
        "session_creation_timeout_secs should be > 0",
    ),
    "device_fn": (
        lambda v: callable(v) and list(inspect.signature(v).parameters) == ["op"],
        'device_fn must be callable with exactly one argument "op".',
    ),
    "protocol": (lambda v: v in ("grpc", "grpc+verbs"), "protocol should be grpc or grpc+verbs"),
}


def _check_settings(settings):
    """2.15's ValueErrors for settings out of range: its line first, the value on the next."""
    for name, (valid, message) in _VALID.items():
        value = settings[name]
        if value is not None and not valid(value):
            raise ValueError(f"{message}\nRunConfig: {name} was {value!r}.")


def _tf_config_of_a_new_config():
    """TF_CONFIG as 2.15's RunConfig read it when made: set but empty is no JSON (its
    JSONDecodeError), where its training loop, and a replaced config, took it as unset."""
    if _REPLACING:
        return server.tf_config_from_env()
    return json.loads(os.environ.get("TF_CONFIG", "{}"))


def _model_dir(given, tf_config):
    """The model_dir given, or TF_CONFIG's `model_dir` (as cloud trainers set it); both
    must agree, neither may be empty: 2.15's rules and errors."""
    if given == "":
        raise ValueError("model_dir should be non-empty.")
    from_tf_config = tf_config.get("model_dir")
    if from_tf_config == "":
        raise ValueError("model_dir in TF_CONFIG should be non-empty.")
    if from_tf_config and given and os.fspath(given) != from_tf_config:
        raise ValueError(
            "`model_dir` provided in RunConfig construct, if set, must have the same value "
            f"as the model_dir in TF_CONFIG. model_dir: {os.fspath(given)}\n"
            f'TF_CONFIG["model_dir"]: {from_tf_config}.\n'
        )
    if from_tf_config and not given:
        log.info("Using model_dir in TF_CONFIG: %s", from_tf_config)
    return os.fspath(given) if given else from_tf_config


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


class TaskType:
    """The task types of a TF_CONFIG cluster, as 2.15's `run_config.TaskType` named them
    (code comparing `config.task_type` imports them from there)."""

    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


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
                "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set."
            )
        model_dir = _model_dir(model_dir, _tf_config_of_a_new_config())
        if experimental_distribute is not None:
            # tf.estimator's DistributeConfig: each strategy given there or here, not both.
            train_distribute = _distribute_from(
                experimental_distribute, "train_distribute", train_distribute
            )
            eval_distribute = _distribute_from(
                experimental_distribute, "eval_distribute", eval_distribute
            )
            if getattr(experimental_distribute, "remote_cluster", None):
                warn_once(
                    "experimental_distribute.remote_cluster",
                    "RunConfig: experimental_distribute.remote_cluster is ignored: the "
                    "cluster comes from TF_CONFIG.",
                )
        settings = dict(locals())
        _check_settings(settings)
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
        self._model_dir = model_dir
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = train_distribute
        self._eval_distribute = eval_distribute
        self.experimental_distribute = experimental_distribute
        self._device_fn = device_fn
        self._protocol = protocol
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._checkpoint_save_graph_def = checkpoint_save_graph_def
        self._read_tf_config()
        self._note_strategies(experimental_distribute)

    def _note_strategies(self, experimental_distribute):
        """2.15's lines (and its `_distribute_coordinator_mode`, which `Using config: ...`
        shows) when a RunConfig was made (not replaced) with a strategy that is no
        TPUStrategy."""
        given = [s for s in (self.train_distribute, self.eval_distribute) if s is not None]
        tpu_only = all(type(s).__name__.startswith("TPUStrategy") for s in given)
        if _REPLACING or (tpu_only and not experimental_distribute):
            return
        log.info("Initializing RunConfig with distribution strategies.")
        if self._worker_fields is not None:
            self._distribute_coordinator_mode = "independent_worker"
            log.info(
                "RunConfig initialized for Distribute Coordinator with INDEPENDENT_WORKER mode"
            )
        else:
            self._distribute_coordinator_mode = None
            log.info("Not using Distribute Coordinator.")

    def __setattr__(self, name, value):
        # 2.15's fields were read-only properties (`config.save_summary_steps = 7` raises
        # AttributeError, Python's own), so a subclass could override one with a property
        # of its own (`is_chief`, `model_dir`) and RunConfig's __init__ still ran: the
        # value is kept in the instance, and the subclass's property is read. 2.15 kept
        # each in `_<field>`, which programs set to get round the property (and the
        # kit's own code sets so).
        field = _field_behind(type(self), name)
        if field is not None:
            self.__dict__[field] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        """`config._<field>`, 2.15's attribute behind a field, which programs read."""
        field = _field_behind(type(self), name)
        if field is not None and field in self.__dict__:
            return self.__dict__[field]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _read_tf_config(self):
        """The cluster fields from TF_CONFIG, as tf.estimator 2.15 set them.  Given a
        strategy, a cluster is the strategy's (2.15's distribute coordinator): the fields
        stay those of one machine and the task's own role is kept for the Estimator."""
        tf_config = server.tf_config_from_env()
        if tf_config and not _REPLACING:  # (2.15's line, for a RunConfig made)
            log.info("TF_CONFIG environment variable: %s", tf_config)
        service = tf_config.get("service")
        if service is not None and not isinstance(service, dict):
            raise TypeError(
                f'If "service" is set in TF_CONFIG, it must be a dict. Given {type(service)}'
            )
        cluster = tf_config.get("cluster") or {}
        spec = tf.train.ClusterSpec(cluster)
        coordinated = (
            self.train_distribute is not None and bool(spec.jobs) and "master" not in spec.jobs
        )
        fields = cluster_fields({} if coordinated else tf_config)
        self._worker_fields = cluster_fields(tf_config, coordinated=True) if coordinated else None
        fields.setdefault("cluster_spec", spec)
        fields["service"] = service
        for name, value in fields.items():
            setattr(self, f"_{name}", value)
        self._default_session_config = (
            self.session_config is None and bool(self.cluster_spec) and not coordinated
        )
        if self._default_session_config:
            self._session_config = _cluster_session_config(self.task_type, self.task_id)

    def _as_worker(self):
        """This config with the task's role in its strategy's cluster (2.15 gave the
        Estimator's copy these fields when its distribute coordinator ran the task)."""
        v1_parameter_server = isinstance(self.train_distribute, _V1ParameterServerStrategy)
        if self._worker_fields is None and not v1_parameter_server:
            return self
        worker = copy.copy(self)
        for name, value in (self._worker_fields or {}).items():
            setattr(worker, f"_{name}", value)
        worker._worker_fields = None
        if v1_parameter_server:
            # 2.15 trained under it in graphs, between graphs on a cluster (variables on
            # the ps tasks): as the kit trains given no strategy (TF2 runs it in no
            # eager code).
            worker._train_distribute = None
        return worker

    def replace(self, **kwargs):
        """A copy with some fields changed, as tf.estimator's `RunConfig.replace`."""
        # (The values kept, as 2.15's copy kept its own: not what a subclass's property
        # makes of them, which the copy's property makes again.)
        fields = {name: self.__dict__[name] for name in _SETTINGS}
        if self._default_session_config:
            fields["session_config"] = None  # (made again for the cluster)
        unknown = [name for name in kwargs if name not in fields]
        if unknown:  # (2.15's words, for the first)
            raise ValueError(
                f"Replacing {unknown[0]} is not supported. Allowed properties are "
                f"{list(_SETTINGS)}."
            )
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs:
            fields["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs:
            fields["save_checkpoints_steps"] = None
        fields.update(kwargs)
        # As tf.estimator's: a DistributeConfig is kept, not applied again (its
        # strategies are already the fields').
        distribute = fields.pop("experimental_distribute")
        # (As 2.15's: TF_CONFIG's model_dir binds a RunConfig made, not a replaced one.)
        model_dir = fields.pop("model_dir")
        if model_dir == "":
            raise ValueError("model_dir should be non-empty")
        with replacing():
            config = RunConfig(model_dir=self.model_dir, **fields)
        config._model_dir = os.fspath(model_dir) if model_dir else None
        config.experimental_distribute = distribute
        if type(self) is RunConfig:
            return kept_attributes(config, self)
        # 2.15's replace copied the config: a subclass's copy keeps its class (and its
        # overriding properties) and its own attributes, with the fields replaced.
        copied = copy.copy(self)
        copied.__dict__.update(vars(config))
        return copied


# 2.15's fields as the class holds them: read-only properties, so a subclass's property
# can build on `super().model_dir` and code can read `RunConfig.is_chief.fget(config)`.
# The values stay in the instance (`__setattr__` above keeps them there, set as
# `_<field>`; a subclass's own such fields are its `_OWN_FIELDS`).
_CLASS_PROPERTIES = (
    "checkpoint_save_graph_def",
    "cluster_spec",
    "device_fn",
    "eval_distribute",
    "evaluation_master",
    "experimental_max_worker_delay_secs",
    "global_id_in_cluster",
    "is_chief",
    "keep_checkpoint_every_n_hours",
    "keep_checkpoint_max",
    "log_step_count_steps",
    "master",
    "model_dir",
    "num_ps_replicas",
    "num_worker_replicas",
    "protocol",
    "save_checkpoints_secs",
    "save_checkpoints_steps",
    "save_summary_steps",
    "service",
    "session_config",
    "session_creation_timeout_secs",
    "task_id",
    "task_type",
    "tf_random_seed",
    "train_distribute",
)


def _field_behind(cls, name):
    """The field of `cls` whose value 2.15 kept as `name` (`_model_dir`), else None."""
    fields = (*_CLASS_PROPERTIES, *getattr(cls, "_OWN_FIELDS", ()))
    if name.startswith("_") and name[1:] in fields:
        return name[1:]
    return None


def field_property(name):
    """A read-only property giving the instance's own value of `name`."""

    def read(self):
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            ) from None

    return property(read, doc=f"The config's `{name}`.")


for _name in _CLASS_PROPERTIES:
    setattr(RunConfig, _name, field_property(_name))
    getattr(RunConfig, _name).__set_name__(RunConfig, _name)  # (its name in errors)


@contextlib.contextmanager
def replacing():
    """RunConfigs made in here are `replace`'s copies (the base's, tpu.RunConfig's):
    2.15 copied the config, and logged nothing for them."""
    _REPLACING.append(True)
    try:
        yield
    finally:
        _REPLACING.pop()


def kept_attributes(replaced, original):
    """`replaced` (`original.replace(...)`'s new config) with the attributes a program
    set on `original` that it lacks: 2.15's replace made a copy, so they stayed (as
    tensor2tensor's `config.data_parallelism`, which its model_fn reads)."""
    for name, value in vars(original).items():
        replaced.__dict__.setdefault(name, value)
    return replaced


def handed_out(config):
    """A deep copy of `config`, as tf.estimator 2.15 handed one out on each read
    (`Estimator.config`, and the `config` model_fn and input_fn get): what a program
    changes on it changes nothing else. Its strategies are shared, not copied (the
    Estimator runs under them)."""
    strategies = (config.train_distribute, config.eval_distribute)
    return copy.deepcopy(config, {id(s): s for s in strategies if s is not None})


def saves_checkpoints(config):
    """Whether `config` has a checkpoint saver: neither interval set
    (`save_checkpoints_steps=None, save_checkpoints_secs=None`) means none in 2.15, so no
    checkpoint, no `graph.pbtxt`, and saving listeners refused."""
    return bool(config.save_checkpoints_steps or config.save_checkpoints_secs)


def _distribute_from(experimental_distribute, name, given):
    """The strategy `name` of a DistributeConfig, or `given`; both is an error, as in
    tf.estimator 2.15 (its message's missing space kept)."""
    strategy = getattr(experimental_distribute, name, None)
    if not strategy:
        return given
    if given:
        raise ValueError(f"Either `{name}` or`experimental_distribute.{name}` can be set.")
    return strategy


def with_default_session_config(config):
    """`config`, given 2.15's Estimator's session_config if it has none (soft placement,
    graph rewrites run once); `replace` drops it again."""
    if config.session_config is not None:
        return config
    config = copy.copy(config)
    config._session_config = _default_session_config()
    config._default_session_config = True
    return config


def _default_session_config():
    from tensorflow.core.protobuf import rewriter_config_pb2

    rewrite = rewriter_config_pb2.RewriterConfig(
        meta_optimizer_iterations=rewriter_config_pb2.RewriterConfig.ONE
    )
    return tf.compat.v1.ConfigProto(
        allow_soft_placement=True, graph_options=tf.compat.v1.GraphOptions(rewrite_options=rewrite)
    )


def cluster_fields(tf_config, coordinated=False):
    """RunConfig's cluster fields for `tf_config` ({} reads as one machine); errors for a
    TF_CONFIG tf.estimator 2.15 refused, in its words.  `coordinated`: a strategy's
    cluster, where the first worker is the chief if no task is."""
    spec = tf.train.ClusterSpec(tf_config.get("cluster") or {})
    task = tf_config.get("task") or {}
    if not spec.jobs:
        task_type, task_id = task.get("type", "worker"), int(task.get("index", 0))
        if task_type != "worker":
            raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER.')
        if task_id != 0:
            raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0.')
        return {
            "task_type": task_type,
            "task_id": task_id,
            "global_id_in_cluster": 0,
            "master": tf_config.get("session_master", ""),
            "evaluation_master": tf_config.get("eval_session_master", ""),
            "is_chief": True,
            "num_ps_replicas": 0,
            "num_worker_replicas": 1,
        }
    chief_job = "master" if "master" in spec.jobs else "chief"
    if chief_job == "master" and "chief" in spec.jobs:
        raise ValueError("If `master` node exists in `cluster`, job `chief` is not supported.")
    if coordinated and "chief" not in spec.jobs:
        chief_job = "worker"  # (its first task)
    task_type, task_id = _validated_task(spec, task, chief_job)
    if task_type == "evaluator":
        if chief_job == "master":
            raise ValueError(
                "If `master` node exists in `cluster`, task_type `evaluator` is not supported."
            )
        # Not part of the training cluster.
        return {
            "task_type": task_type,
            "task_id": task_id,
            "global_id_in_cluster": None,
            "master": "",
            "evaluation_master": tf_config.get("eval_session_master", ""),
            "is_chief": False,
            "num_ps_replicas": 0,
            "num_worker_replicas": 0,
            "cluster_spec": tf.train.ClusterSpec({}),
        }
    return {
        "task_type": task_type,
        "task_id": task_id,
        "global_id_in_cluster": _global_id(spec, task_type, task_id, chief_job),
        "master": _session_master(spec, task_type, task_id, tf_config),
        "evaluation_master": "",
        "is_chief": task_type == chief_job and task_id == 0,
        "num_ps_replicas": len(spec.job_tasks("ps")) if "ps" in spec.jobs else 0,
        "num_worker_replicas": sum(
            len(spec.job_tasks(job)) for job in {"worker", chief_job} if job in spec.jobs
        ),
    }


def _validated_task(spec, task, chief_job):
    """TF_CONFIG's task type and index, checked against its cluster."""
    if chief_job not in spec.jobs:
        raise ValueError(f'If "cluster" is set in TF_CONFIG, it must have one "{chief_job}" node.')
    if chief_job != "worker" and len(spec.job_tasks(chief_job)) > 1:
        raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief_job}" node.')
    task_type, task_id = task.get("type"), task.get("index")
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError("Task index must be non-negative number.")
    if task_type == "evaluator":
        return task_type, task_id
    note = "Note that these values may be coming from the TF_CONFIG environment variable."
    if task_type not in spec.jobs:
        raise ValueError(
            f"{task_type} is not a valid task_type in the cluster_spec:\n{spec}\n\n{note}"
        )
    if task_id >= len(spec.job_tasks(task_type)):
        raise ValueError(
            f"{task_id} is not a valid task_id for task_type {task_type} in the "
            f"cluster_spec:\n{spec}\n\n{note}"
        )
    return task_type, task_id


def _global_id(spec, task_type, task_id, chief_job):
    """2.15's order: the chief 0, then the other jobs but ps by name, then ps."""
    jobs = [chief_job] + [j for j in sorted(spec.jobs) if j not in (chief_job, "ps")]
    jobs += ["ps"] if "ps" in spec.jobs else []
    first = 0
    for job in jobs:
        if job == task_type:
            return first + task_id
        first += len(spec.job_tasks(job))
    raise ValueError(f"TF_CONFIG: task type {task_type!r} is not in the cluster {spec}.")


def _session_master(spec, task_type, task_id, tf_config):
    """TF_CONFIG's session_master; '' for a cluster of one task; else this task's server."""
    if "session_master" in tf_config:
        return tf_config["session_master"]
    if len(spec.jobs) == 1 and len(spec.job_tasks(spec.jobs[0])) == 1:
        return ""
    return "grpc://" + spec.job_tasks(task_type)[task_id]


def device_filters(task_type, task_id):
    """The devices a cluster task's session talks to, as 2.15's: the ps tasks and itself
    (a ps task: every job), never the other workers; None for an evaluator and other tasks."""
    return {
        "master": ["/job:ps", "/job:master"],
        "chief": ["/job:ps", "/job:chief"],
        "worker": ["/job:ps", f"/job:worker/task:{task_id}"],
        "ps": ["/job:ps", "/job:worker", "/job:chief", "/job:master"],
    }.get(task_type)


def _cluster_session_config(task_type, task_id):
    """2.15's session_config for a task of a cluster: its `device_filters`, graph rewrites
    run once; None for an evaluator and other tasks."""
    filters = device_filters(task_type, task_id)
    if filters is None:
        return None
    session_config = _default_session_config()
    session_config.device_filters[:] = filters
    return session_config


def as_logged(config):
    """What 2.15's Estimator logged as `Using config: ...`: its RunConfig's fields (their
    private names, its order), `config`'s values.  (Not a method: RunConfig's public
    attributes are 2.15's; a subclass's own fields follow, as `tpu.RunConfig`'s did.)"""
    names = _SETTINGS + _FROM_TF_CONFIG
    logged = {f"_{name}": getattr(config, name) for name in names}
    if "_distribute_coordinator_mode" in vars(config):  # (made with a strategy)
        logged["_distribute_coordinator_mode"] = config._distribute_coordinator_mode
    for name in getattr(config, "_LOGGED_FIELDS", ()):
        logged[f"_{name}"] = getattr(config, name)
    return str(logged)
