"""Which `tf.distribute` strategy the Trainer uses, and why.

`choose` is a pure function of the requested name, `TF_CONFIG` and the
devices seen, so the rules are testable without devices; `build` turns the
choice into a strategy object.  `default` means no strategy object at all,
as a tf.estimator `RunConfig` without `train_distribute`.
"""

import dataclasses

NAMES = (
    "auto",
    "default",
    "one_device",
    "mirrored",
    "multi_worker_mirrored",
    "parameter_server",
    "central_storage",
    "tpu",
)


@dataclasses.dataclass(frozen=True)
class StrategyChoice:
    name: str
    reason: str


def choose(requested, tf_config, num_gpus, num_tpus=0):
    """The strategy to use; raises ValueError for a name that cannot work here."""
    if requested not in NAMES:
        raise ValueError(f"Unknown strategy {requested!r}; choose one of {', '.join(NAMES)}.")
    cluster = (tf_config or {}).get("cluster") or {}
    num_ps = len(cluster.get("ps", []))
    num_workers = len(cluster.get("worker", [])) + len(cluster.get("chief", []))
    if requested == "auto":
        if num_ps:
            return StrategyChoice("parameter_server", f"TF_CONFIG lists {num_ps} ps task(s)")
        if num_workers > 1:
            return StrategyChoice(
                "multi_worker_mirrored", f"TF_CONFIG lists {num_workers} workers and no ps"
            )
        if num_gpus > 1:
            return StrategyChoice("mirrored", f"{num_gpus} GPUs visible")
        if num_gpus == 1:
            return StrategyChoice("one_device", "one GPU visible")
        return StrategyChoice("default", "no cluster in TF_CONFIG and no GPU visible")
    if requested == "tpu" and not num_tpus:
        raise ValueError("Strategy 'tpu' needs a TPU, and none is visible.")
    if requested == "parameter_server" and not num_ps:
        raise ValueError(
            "Strategy 'parameter_server' needs a cluster with ps tasks in TF_CONFIG; "
            f"TF_CONFIG has {sorted(cluster) or 'no cluster'}."
        )
    if requested == "multi_worker_mirrored" and num_ps:
        raise ValueError("Strategy 'multi_worker_mirrored' cannot use the ps tasks in TF_CONFIG.")
    return StrategyChoice(requested, "requested")


def choose_here(requested):
    """`choose` with this process's TF_CONFIG and visible devices.

    Leaves the eager context unstarted (unless asked for a TPU), so that a
    multi-worker mirrored strategy can still be built afterwards.
    """
    import tensorflow as tf

    from components.estimator.server import tf_config_from_env

    num_tpus = len(tf.config.list_logical_devices("TPU")) if requested == "tpu" else 0
    return choose(
        requested, tf_config_from_env(), len(tf.config.list_physical_devices("GPU")), num_tpus
    )


def build(choice):
    """The strategy object for `choice` (None for `default`)."""
    import tensorflow as tf

    name = choice.name
    if name == "default":
        return None
    if name == "one_device":
        gpus = tf.config.list_logical_devices("GPU")
        return tf.distribute.OneDeviceStrategy(gpus[0].name if gpus else "/cpu:0")
    if name == "mirrored":
        return tf.distribute.MirroredStrategy()
    if name == "central_storage":
        return tf.distribute.experimental.CentralStorageStrategy()
    if name == "multi_worker_mirrored":
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    if name == "parameter_server":
        return tf.distribute.experimental.ParameterServerStrategy(
            tf.distribute.cluster_resolver.TFConfigClusterResolver()
        )
    raise ValueError(f"Unknown strategy {name!r}.")


def serves_only(choice, tf_config):
    """True for a worker or ps task of a parameter-server cluster: such a task
    runs a server for the coordinator (the chief) and trains nothing itself."""
    task_type = ((tf_config or {}).get("task") or {}).get("type")
    return choice.name == "parameter_server" and task_type in ("worker", "ps")
