"""Trainer executor: input pipelines, train, evaluate, export."""

import dataclasses
import hashlib
import inspect
import json
import logging
import math
import os

import tensorflow as tf
import tensorflow_transform as tft
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import path_utils

from components import user_code
from components.exporter.serving import export_serving_model
from components.trainer import cluster as cluster_lib
from components.trainer import estimator, launcher
from components.trainer import strategy as strategy_lib
from components.trainer.estimator import server

log = logging.getLogger(__name__)


# estimator_fn "auto": the canned wide and deep model built from the transform output.
AUTO_ESTIMATOR_FN = "components.auto.model.build_estimator"


def build_estimator(reference, run_config, hparams, warm_start_from, offered):
    """The Estimator `reference` (a user_code reference, or "auto") builds.

    Called as `fn(run_config, hparams, warm_start_from, **kwargs)`, where kwargs are those of
    `offered` (tft_output, label_key, task) that the function declares, so a model can read
    the transform output's columns and vocabularies without the Trainer knowing which."""
    if reference == user_code.AUTO:
        if not offered.get("task"):
            raise ValueError('Trainer: estimator_fn "auto" needs the task.')
        reference = AUTO_ESTIMATOR_FN
    try:
        build = user_code.load(reference, "estimator_fn")
    except ValueError as e:
        raise ValueError(f"Trainer: cannot load {e}") from e
    parameters = inspect.signature(build).parameters
    takes_any = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    kwargs = {k: v for k, v in offered.items() if takes_any or k in parameters}
    return build(run_config, hparams, warm_start_from, **kwargs)


def make_input_fn(file_pattern, feature_spec, label_key, batch_size, repeat, seed):
    """Gzipped TFRecords of transformed tf.Examples to (features, label) batches.

    Under a strategy `batch_size` is per replica, as with tf.estimator.
    """
    files = tf.io.gfile.glob(file_pattern)
    if not files:
        raise ValueError(f"Trainer: no examples match {file_pattern!r}.")
    if label_key not in feature_spec:
        raise ValueError(
            f"Trainer: label {label_key!r} is not a transformed feature: {sorted(feature_spec)}."
        )

    def parse(records):
        # One map for parsing and the label split: each map is a pipeline stage to run.
        features = tf.io.parse_example(records, feature_spec)
        return features, features.pop(label_key)

    def input_fn(input_context=None):
        shards = input_context.num_input_pipelines if input_context is not None else 1
        dataset = tf.data.Dataset.from_tensor_slices(sorted(files))
        # One input pipeline per worker, each with its own share: of the
        # files when there are enough of them, else of the records.
        if 1 < shards <= len(files):
            dataset = dataset.shard(shards, input_context.input_pipeline_id)
        dataset = tf.data.TFRecordDataset(dataset, compression_type="GZIP")
        if shards > len(files):
            dataset = dataset.shard(shards, input_context.input_pipeline_id)
        if repeat:
            dataset = dataset.shuffle(10_000, seed=seed).repeat()
        dataset = dataset.batch(batch_size).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.prefetch(tf.data.AUTOTUNE)

    return input_fn


RUN_RECORD = "trainer_run.json"


@dataclasses.dataclass(frozen=True)
class TrainingLength:
    """How long the Trainer trains: `steps`, and the epochs they came from, if any."""

    steps: int
    epochs: float | None = None
    train_rows: int | None = None
    global_batch_size: int | None = None

    def describe(self):
        if self.epochs is None:
            return f"{self.steps:,} steps"
        return (
            f"{self.steps:,} steps ({self.epochs:g} epochs of {self.train_rows:,} train rows "
            f"at a global batch of {self.global_batch_size:,})"
        )


def training_length(input_dict, exec_properties, strategy):
    """`train_steps`, or with `train_epochs` the steps that pass over the train split that
    many times: its row count (from the statistics input) over the global batch (the batch
    size per replica times the replicas)."""
    epochs = exec_properties.get("train_epochs")
    if not epochs:
        return TrainingLength(int(exec_properties["train_steps"]))
    from components.statistics_gen.layout import read_artifact_statistics

    if not input_dict.get("statistics"):
        raise ValueError("Trainer: train_epochs needs the statistics input (the train row count).")
    rows = int(read_artifact_statistics(input_dict["statistics"][0])["train"].num_examples)
    replicas = strategy.num_replicas_in_sync if strategy is not None else 1
    batch = int(exec_properties["train_batch_size"]) * replicas
    steps = max(1, math.ceil(float(epochs) * rows / batch))
    return TrainingLength(steps, float(epochs), rows, batch)


def _write_run_record(model_run, choice, metrics, length):
    record = {
        "strategy": choice.name,
        "strategy_reason": choice.reason,
        "eval_metrics": {k: float(v) for k, v in metrics.items()},
        "training_length": length.describe(),
    }
    with tf.io.gfile.GFile(os.path.join(model_run.uri, RUN_RECORD), "w") as f:
        json.dump(record, f, indent=2, sort_keys=True)


def _adopt_run_record(model_run):
    """Copies the chief's record onto the `ModelRun` artifact; raises if there is none."""
    path = os.path.join(model_run.uri, RUN_RECORD)
    if not tf.io.gfile.exists(path):
        raise RuntimeError(
            f"Trainer: training ended without the chief's record {path}: "
            "the chief did not finish training, evaluation and export."
        )
    with tf.io.gfile.GFile(path) as f:
        record = json.load(f)
    model_run.set_string_custom_property("strategy", record["strategy"])
    model_run.set_string_custom_property("strategy_reason", record["strategy_reason"])
    model_run.set_string_custom_property("training_length", record["training_length"])
    for key in ("auc", "accuracy", "loss"):
        if key in record["eval_metrics"]:
            model_run.set_float_custom_property(f"eval_{key}", record["eval_metrics"][key])


def train_in_process(input_dict, output_dict, exec_properties):
    """Trains in this process, in the role TF_CONFIG gives it; the chief evaluates,
    exports the serving model and writes the run record. True in the chief."""
    choice = strategy_lib.choose_here(exec_properties["strategy"])
    log.info("Trainer strategy: %s (%s)", choice.name, choice.reason)
    tf_config = server.tf_config_from_env()
    if strategy_lib.serves_only(choice, tf_config):
        server.run_server(tf_config)
        return False
    # First, before any other TensorFlow call: multi-worker mirrored must
    # configure collective ops before the eager context starts.
    strategy = strategy_lib.build(choice)
    examples = input_dict["examples"]
    tft_output = tft.TFTransformOutput(artifact_utils.get_single_uri(input_dict["transform_graph"]))
    model_uri = artifact_utils.get_single_uri(output_dict["model"])
    model_run = artifact_utils.get_single_instance(output_dict["model_run"])
    label_key = exec_properties["label_key"]
    seed = int(exec_properties["random_seed"])
    tf.random.set_seed(seed)

    warm_start_from = None
    base_models = input_dict.get("base_model") or []
    if int(exec_properties["warm_start"]) and base_models:
        warm_start_from = estimator.WarmStartSettings(
            path_utils.serving_model_path(base_models[0].uri)
        )
        log.info("Warm-starting from %s", base_models[0].uri)

    run_config = estimator.RunConfig(
        model_dir=model_run.uri,
        tf_random_seed=seed,
        save_checkpoints_steps=int(exec_properties["save_checkpoints_steps"]),
        train_distribute=strategy,
    )
    hparams = json.loads(exec_properties["hparams"] or "{}")
    model = build_estimator(
        exec_properties["estimator_fn"],
        run_config,
        hparams,
        warm_start_from,
        {"tft_output": tft_output, "label_key": label_key, "task": exec_properties.get("task")},
    )

    feature_spec = tft_output.transformed_feature_spec()

    def split_pattern(split):
        return os.path.join(artifact_utils.get_split_uri(examples, split), "*.gz")

    train_input = make_input_fn(
        split_pattern("train"),
        feature_spec,
        label_key,
        int(exec_properties["train_batch_size"]),
        True,
        seed,
    )
    eval_input = make_input_fn(
        split_pattern("eval"),
        feature_spec,
        label_key,
        int(exec_properties["eval_batch_size"]),
        False,
        seed,
    )
    length = training_length(input_dict, exec_properties, strategy)
    log.info("Trainer: %s", length.describe())
    model.train(train_input, max_steps=length.steps)
    if not run_config.is_chief:
        return False  # evaluation and export are the chief's
    metrics = model.evaluate(eval_input, steps=int(exec_properties["eval_steps"]))
    log.info("Trainer eval metrics: %s", metrics)
    export_serving_model(
        model, tft_output, exec_properties["raw_label_key"], path_utils.serving_model_dir(model_uri)
    )
    _write_run_record(model_run, choice, metrics, length)
    _adopt_run_record(model_run)
    return True


def _job_name(model_run):
    """A name for the cluster job, unique per Trainer run, valid for Vertex and Kubernetes."""
    return "trainer-" + hashlib.sha256(model_run.uri.encode()).hexdigest()[:12]


def train_on_cluster(cluster, input_dict, output_dict, exec_properties):
    """Runs the training job on `cluster.backend`, every task a replica of this Trainer."""
    model_run = artifact_utils.get_single_instance(output_dict["model_run"])
    strategy = exec_properties["strategy"]
    args = launcher.replica_args(input_dict, output_dict, exec_properties)
    command = launcher.REPLICA_COMMAND
    log.info(
        "Trainer: %s training job %s, strategy %s", cluster.backend, _job_name(model_run), strategy
    )
    if cluster.backend == "local":
        pools = cluster_lib.vertex_worker_pool_specs(strategy, cluster, "local", command, args)
        # Under parameter server only the chief trains; workers and ps serve it.
        serving = ("worker", "ps") if strategy == "parameter_server" else ()
        launcher.run_local_pools(pools, os.path.join(model_run.uri, "cluster_logs"), serving)
    elif cluster.backend == "vertex":
        pools = cluster_lib.vertex_worker_pool_specs(
            strategy, cluster, cluster.image, command, args
        )
        job = launcher.vertex_custom_job(_job_name(model_run), pools, cluster, model_run.uri)
        launcher.run_vertex_job(
            job,
            restart_all_on_failure=strategy == "multi_worker_mirrored",
            service_account=cluster.service_account,
        )
    else:
        specs = cluster_lib.tfjob_replica_specs(strategy, cluster, cluster.image, command, args)
        launcher.run_tfjob(
            launcher.tfjob_manifest(_job_name(model_run), launcher.pod_namespace(), specs)
        )
    model_dir = path_utils.serving_model_dir(artifact_utils.get_single_uri(output_dict["model"]))
    if not tf.io.gfile.exists(os.path.join(model_dir, "saved_model.pb")):
        raise RuntimeError(
            f"Trainer: the {cluster.backend} training job ended without a "
            f"serving model in {model_dir}."
        )
    _adopt_run_record(model_run)


def copy_training_statistics(input_dict, output_dict):
    """The train split's statistics into `<model>/DataStatistics/`, when given: the baseline
    a later run's ExampleValidator measures drift against once this model is blessed."""
    from components.statistics_gen.layout import model_statistics_uri, split_statistics_path

    if not input_dict.get("statistics"):
        return
    source = split_statistics_path(artifact_utils.get_single_uri(input_dict["statistics"]), "train")
    target = split_statistics_path(
        model_statistics_uri(artifact_utils.get_single_uri(output_dict["model"])), "train"
    )
    tf.io.gfile.makedirs(os.path.dirname(target))
    tf.io.gfile.copy(source, target, overwrite=True)


class Executor(base_executor.BaseExecutor):
    def Do(self, input_dict, output_dict, exec_properties):
        cluster = cluster_lib.TrainingCluster.from_json(exec_properties.get("training_cluster"))
        if cluster.backend == "in_process":
            if not train_in_process(input_dict, output_dict, exec_properties):
                return  # a replica that only serves or trains: the chief writes the model
        else:
            train_on_cluster(cluster, input_dict, output_dict, exec_properties)
        copy_training_statistics(input_dict, output_dict)
