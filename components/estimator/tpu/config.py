"""`TPUConfig`, `InputPipelineConfig` and the TPU `RunConfig` of tf.estimator 2.15.

They hold what TPUEstimator programs pass (`iterations_per_loop`, `num_shards`,
...).  On CPUs and GPUs, where this kit runs TPUEstimator (`use_tpu=False`), 2.15
used none of it but `iterations_per_loop`, which set how often the examples/sec
line is logged; the rest is kept for the program to read back.
"""

import collections
import functools
import inspect
import re

import numpy as np

from components.estimator import run_config as run_config_lib


class InputPipelineConfig:
    """How a TPU job fed its input (values as 2.15's); not used on CPUs and GPUs."""

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_TPU_CONFIG_DEFAULTS = {
    "iterations_per_loop": 2,
    "num_shards": None,
    "num_cores_per_replica": None,
    "per_host_input_for_training": True,
    "tpu_job_name": None,
    "initial_infeed_sleep_secs": None,
    "input_partition_dims": None,
    "eval_training_input_configuration": InputPipelineConfig.PER_HOST_V1,
    "experimental_host_call_every_n_steps": 1,
    "experimental_allow_per_host_v2_parallel_get_next": False,
    "experimental_feed_hook": None,
}

IterationsPerLoop = collections.namedtuple("IterationsPerLoop", ["value", "unit"])
_ITERATIONS = re.compile(r"^(?P<value>[1-9]\d*)(?P<suffix>[smh]?)$")
_SECONDS_PER = {"s": 1, "m": 60, "h": 3600}


def parse_iterations_per_loop(value):
    """`iterations_per_loop` as a count of steps or (`<N>s`, `<N>m`, `<N>h`) seconds."""
    match = _ITERATIONS.match(str(value))
    if match is None or isinstance(value, bool):
        raise ValueError(  # (2.15's words first)
            "Invalid TPUConfig `iterations_per_loop` value. Value must be positive integer "
            "value or time-based value `<N><s|m|h>` (e.g. `3600s`, `60m`, `1h`): "
            f"TPUConfig(iterations_per_loop={value!r})."
        )
    suffix = match.group("suffix")
    if not suffix:
        return IterationsPerLoop(int(match.group("value")), "count")
    return IterationsPerLoop(int(match.group("value")) * _SECONDS_PER[suffix], "seconds")


_TPUConfigFields = collections.namedtuple(
    "TPUConfig", list(_TPU_CONFIG_DEFAULTS), defaults=list(_TPU_CONFIG_DEFAULTS.values())
)


class TPUConfig(_TPUConfigFields):
    """tf.estimator 2.15's TPU settings, with its defaults.

    Checked as 2.15 checked them, and `per_host_input_for_training=True` / `False` read
    back as 2.15's `PER_HOST_V1` / `PER_SHARD_V1`; on CPUs and GPUs 2.15 still ran one
    step per session call (every hook saw every step), as this kit does.
    """

    @functools.wraps(_TPUConfigFields.__new__)  # 2.15's signature, for callers and inspect
    def __new__(cls, *args, **kwargs):
        config = super().__new__(cls, *args, **kwargs)
        parse_iterations_per_loop(config.iterations_per_loop)
        if config.num_shards is not None:
            _check_positive_int("num_shards", config.num_shards)
        _check_partitioning(config)
        if config.initial_infeed_sleep_secs:
            _check_positive_int("initial_infeed_sleep_secs", config.initial_infeed_sleep_secs)
        per_host = config.per_host_input_for_training
        if per_host is True or per_host is False:
            per_host = (
                InputPipelineConfig.PER_HOST_V1 if per_host else InputPipelineConfig.PER_SHARD_V1
            )
            config = config._replace(per_host_input_for_training=per_host)
        return config


def _check_positive_int(name, number):
    """2.15's check, in its words (`TPUConfig num_shards must be int, got <class ...>`)."""
    if not isinstance(number, (int, np.integer)):
        raise TypeError(f"TPUConfig {name} must be int, got {type(number)}")
    if number <= 0:
        raise ValueError(f"TPUConfig {name} must be positive, got {number}")


def _check_partitioning(config):
    """2.15's checks of how a model and its input were split over TPU cores."""
    cores = config.num_cores_per_replica
    dims = config.input_partition_dims
    if dims is not None:  # (2.15's words first, in its order)
        if len(dims) not in (1, 2):
            raise ValueError(
                f"input_partition_dims must be a list/tuple with one or two elements. Got {dims!r}."
            )
        if config.per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
            raise ValueError(
                "input_partition_dims is only supported in PER_HOST_V2 mode. Set "
                "per_host_input_for_training=InputPipelineConfig.PER_HOST_V2."
            )
        if cores is None:
            raise ValueError("input_partition_dims requires setting num_cores_per_replica.")
    if cores is not None and cores not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise ValueError(
            f"num_cores_per_replica must be 1, 2, 4, 8, 16, 32, 64, 128; got {cores!r}"
        )
    evaluation = config.eval_training_input_configuration
    if evaluation not in (InputPipelineConfig.PER_HOST_V1, InputPipelineConfig.SLICED):
        raise ValueError(
            f"eval_training_input_configuration must be PER_HOST_V1 or SLICED; got {evaluation}"
        )


# The base RunConfig's arguments, carried over by `RunConfig.replace`.
_BASE_ARGUMENTS = [
    name
    for name in inspect.signature(run_config_lib.RunConfig.__init__).parameters
    if name != "self"
]


class RunConfig(run_config_lib.RunConfig):
    """2.15's `tf.compat.v1.estimator.tpu.RunConfig`: a RunConfig with a `TPUConfig`.

    `master` and `evaluation_master` are kept as given (`evaluation_master` defaulting to
    `master`, as in 2.15): a TPUEstimator made only to export never opens a session, so
    they do not matter there; training, evaluating or predicting on one that is not ''
    fails as in 2.15 (see `TPUEstimator`).  `cluster` (a TPUClusterResolver) names a TPU
    to connect to; this kit trains on CPUs and GPUs only, so it is refused rather than
    silently run locally.
    """

    _LOGGED_FIELDS = ("tpu_config", "cluster")  # (after the base's in `Using config: ...`)

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None, **kw):
        if tpu_config is not None and not isinstance(tpu_config, TPUConfig):
            raise TypeError(
                f"RunConfig(tpu_config=...) must be a TPUConfig, got {type(tpu_config).__name__}."
            )
        if cluster:
            raise ValueError(
                f"tpu.RunConfig(cluster={cluster!r}): this names a TPU to run on, and this kit "
                "runs TPUEstimator on CPUs and GPUs only (use_tpu=False). Leave it out "
                "(None), or train on TPUs with tf.distribute.TPUStrategy and Keras."
            )
        super().__init__(**kw)
        self._tpu_config = tpu_config or TPUConfig()
        # As 2.15's: TF_CONFIG's service may name the TPU workers' job.
        job_name = (self.service or {}).get("tpu_worker_job_name")
        if job_name and self.tpu_config.tpu_job_name is None:
            self._tpu_config = self.tpu_config._replace(tpu_job_name=job_name)
        if master is not None:
            self._master = master
        if evaluation_master is not None:
            self._evaluation_master = evaluation_master
        elif not self.evaluation_master and self.task_type != "evaluator":
            self._evaluation_master = self.master  # (2.15: unless TF_CONFIG set it)
        self._cluster = None

    # (2.15's read-only properties, as the base's fields.)
    _OWN_FIELDS = ("tpu_config", "cluster")
    tpu_config = run_config_lib.field_property("tpu_config")
    cluster = run_config_lib.field_property("cluster")

    def replace(self, **kwargs):
        """A copy with some fields changed, keeping `tpu_config` and the masters."""
        tpu_config = kwargs.pop("tpu_config", self.tpu_config)
        base = super().replace(**kwargs)
        with run_config_lib.replacing():
            replaced = RunConfig(
                tpu_config=tpu_config,
                evaluation_master=self.evaluation_master,
                master=self.master,
                **{name: getattr(base, name) for name in _BASE_ARGUMENTS},
            )
        return run_config_lib.kept_attributes(replaced, self)
