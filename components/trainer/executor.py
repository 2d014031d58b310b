"""Trainer executor: input pipelines, train, evaluate, export."""

import hashlib
import inspect
import itertools
import json
import logging
import math
import os
import random
import tempfile

import numpy as np
import tensorflow as tf
import tensorflow_transform as tft
from tfx.dsl.components.base import base_executor
from tfx.types import artifact_utils
from tfx.utils import path_utils

from components import estimator, user_code
from components.estimator import server
from components.estimator.estimator import task_config
from components.exporter.serving import export_combined_model, export_serving_model
from components.trainer import candidates as candidates_lib
from components.trainer import cluster as cluster_lib
from components.trainer import ensemble, launcher, stopping
from components.trainer import length as length_lib
from components.trainer import strategy as strategy_lib

log = logging.getLogger(__name__)


# estimator_fn "auto": the canned wide and deep model built from the transform output.
AUTO_ESTIMATOR_FN = "components.auto.model.build_estimator"


def build_estimator(reference, run_config, hparams, warm_start_from, offered):
    """The Estimator `reference` (a user_code reference, or "auto") builds.

    Called as `fn(run_config, hparams, warm_start_from, **kwargs)`, where kwargs are those of
    `offered` (tft_output, transformed_label_key, task, train_rows, label_moments,
    label_range) that the function declares, so a model can read the transform output's
    columns and vocabularies without the Trainer knowing which, size itself to the rows it
    trains on and scale itself to a regression label's (mean, std) and (min, max)."""
    if reference == user_code.AUTO:
        if not offered.get("task"):
            raise ValueError('Trainer: estimator_fn "auto" needs the task.')
        reference = AUTO_ESTIMATOR_FN
    try:
        build = user_code.load(reference, "estimator_fn")
    except ValueError as e:
        raise ValueError(f"Trainer: cannot load {e}") from e
    parameters = inspect.signature(build).parameters
    if "label_key" in parameters:
        raise ValueError(
            f"Trainer: {reference} declares label_key; the transformed label is offered as "
            "transformed_label_key (the raw column is raw_label_key): rename the keyword."
        )
    takes_any = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    kwargs = {k: v for k, v in offered.items() if takes_any or k in parameters}
    return build(run_config, hparams, warm_start_from, **kwargs)


WHOLE_SPLIT = 1 << 62  # a batch size no split reaches
# A split of at most this many bytes on disk (gzipped), read epoch after epoch, is kept in
# memory as records after its first pass: on the 2,000-column table's 52 MB train split, a
# round's input (95 batches of 64) went from 0.9 s to 0.27 s, inflating and hashing it
# again each epoch. The 10M-row taxi split (310 MB) is read from disk each epoch.
MEMORY_SPLIT_BYTES = 64 << 20


def make_input_fn(
    file_pattern,
    feature_spec,
    transformed_label_key,
    batch_size,
    repeat,
    seed,
    part=None,
    cache=False,
):
    """Gzipped TFRecords of transformed tf.Examples to (features, label) batches.

    Under a strategy `batch_size` is per replica, as with tf.estimator; None: every batch
    is the whole split (boosted trees' `train_in_memory`). `part`: "fit" or
    "validation" reads only that part of the records (`in_validation_part`), ("fit", k) or
    ("validation", k) that of fold k; None all.
    `cache`: the parsed batches are kept in memory after the first read (a small split
    read again and again: the held-out part validated on every round). A shuffled split of
    at most `MEMORY_SPLIT_BYTES` keeps its records in memory (before the shuffle: the same
    batches in the same order).

    A dataset built outside a strategy that reads the same batches on every pass (the
    whole split in each, or no repeat) is built once and returned again on later calls:
    each round of training and validation calls input_fn, and building it again cost a
    trace of the parse (a third of a second on a wide table) and, for a cached split, a
    new read of all of it. A shuffled one is built on every call, so that each round reads
    the records in the order its seed gives, as tf.estimator's rounds did."""
    files = tf.io.gfile.glob(file_pattern)
    if not files:
        raise ValueError(f"Trainer: no examples match {file_pattern!r}.")
    if transformed_label_key not in feature_spec:
        raise ValueError(
            f"Trainer: label {transformed_label_key!r} is not a transformed feature: "
            f"{sorted(feature_spec)}."
        )

    in_memory = sum(tf.io.gfile.stat(path).length for path in files) <= MEMORY_SPLIT_BYTES

    def parse(records):
        # One map for parsing and the label split: each map is a pipeline stage to run.
        features = tf.io.parse_example(records, feature_spec)
        return features, features.pop(transformed_label_key)

    built = []  # the dataset, when it can be read again (docstring)

    def input_fn(input_context=None):
        reusable = input_context is None and tf.executing_eagerly()
        reusable = reusable and (batch_size is None or not repeat)
        if reusable and built:
            return built[0]
        dataset = dataset_for(input_context)
        if reusable:
            built.append(dataset)
        return dataset

    def dataset_for(input_context):
        dataset = _records(files, input_context, part)
        if batch_size is None:  # the whole split, parsed once, in every batch
            dataset = dataset.batch(WHOLE_SPLIT).map(parse).cache()
            return dataset.repeat() if repeat else dataset
        if repeat:
            if in_memory:
                dataset = dataset.cache()
            dataset = dataset.shuffle(10_000, seed=seed).repeat()
        dataset = dataset.batch(batch_size).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        if cache:
            dataset = dataset.cache()
        return dataset.prefetch(tf.data.AUTOTUNE)

    input_fn.returns_dataset = True  # the estimator need not trace it to find out
    return input_fn


def _records(files, input_context, part):
    """The serialized records of `files` this input pipeline reads: of `part` ("fit",
    "validation"; None: all), and its share when `input_context` has several pipelines."""
    shards = input_context.num_input_pipelines if input_context is not None else 1
    dataset = tf.data.Dataset.from_tensor_slices(sorted(files))
    # One input pipeline per worker, each with its own share: of the
    # files when there are enough of them, else of the records.
    if 1 < shards <= len(files):
        dataset = dataset.shard(shards, input_context.input_pipeline_id)
    dataset = tf.data.TFRecordDataset(dataset, compression_type="GZIP")
    if shards > len(files):
        dataset = dataset.shard(shards, input_context.input_pipeline_id)
    if part is not None:
        name, fold = part if isinstance(part, tuple) else (part, None)
        keep = name == "validation"
        dataset = dataset.filter(lambda record: in_validation_part(record, fold) == keep)
    return dataset


def in_validation_part(records, fold=None):
    """Whether each serialized record is in the part of the train split held out for
    validation (one in `VALIDATION_EVERY`, by a hash of its bytes: the same part
    whatever the sharding, and on every run, as the Transform writes the same bytes for
    the same rows; equal rows in the same part); with `fold` k, in cross-validation's
    fold k (the hash buckets equal to k modulo `length_lib.FOLDS`)."""
    bucket = tf.strings.to_hash_bucket_fast(records, length_lib.VALIDATION_EVERY)
    if fold is None:
        return tf.equal(bucket, 0)
    return tf.equal(bucket % length_lib.FOLDS, fold)


def held_out_copy(train_pattern, records, folder, fold=None):
    """The first `records` records (None: all) of the train split's validation part (of
    fold `fold`), in one gzipped TFRecord file written to `folder` (its path): every
    validation of every candidate reads these few instead of decompressing and hashing the
    whole split again."""
    files = sorted(tf.io.gfile.glob(train_pattern))
    part = tf.data.TFRecordDataset(files, compression_type="GZIP").filter(
        lambda record: in_validation_part(record, fold)
    )
    if records is not None:
        part = part.take(records)
    name = "validation.gz" if fold is None else f"validation-{fold}.gz"
    path = os.path.join(folder, name)
    with tf.io.TFRecordWriter(path, options="GZIP") as writer:
        for batch in part.batch(1024):
            for record in batch.numpy():
                writer.write(record)
    return path


RUN_RECORD = "trainer_run.json"


def train_statistics(input_dict):
    """The train split's statistics, from the statistics input; None without it."""
    from components.statistics_gen.layout import read_artifact_statistics

    if not input_dict.get("statistics"):
        return None
    return read_artifact_statistics(input_dict["statistics"][0])["train"]


def _label_number_stats(train, raw_label_key):
    """The `num_stats` of a numeric raw label in the `train_statistics`; None without
    statistics or for a label that is not a number."""
    for feature in train.features if train is not None else ():
        name = ".".join(feature.path.step) or feature.name
        if name == raw_label_key and feature.WhichOneof("stats") == "num_stats":
            return feature.num_stats
    return None


def label_moments(train, raw_label_key):
    """(mean, std) of a numeric raw label in the `train_statistics` (a regression label is
    standardized by them, components/auto/model.py); None without statistics or for a
    label that is not a number."""
    stats = _label_number_stats(train, raw_label_key)
    return None if stats is None else (stats.mean, stats.std_dev)


def label_range(train, raw_label_key):
    """(min, max) of a numeric raw label in the `train_statistics`: the range a chosen
    regressor's served predictions are bounded to (components/trainer/candidates.py);
    None as for `label_moments`."""
    stats = _label_number_stats(train, raw_label_key)
    return None if stats is None else (stats.min, stats.max)


def _write_run_record(model_run, strategy_choice, metrics, model_choice):
    chosen = model_choice.members[0]
    record = {
        "strategy": strategy_choice.name,
        "strategy_reason": strategy_choice.reason,
        "eval_metrics": {k: float(v) for k, v in metrics.items()},
        "training_length": chosen.length.describe(),
        "stop_reason": chosen.outcome.reason,
        "model": model_choice.record.get("served", chosen.name),
        "model_choice": model_choice.record,
        "feature_importances": _tree_importances(model_choice.members),
    }
    with tf.io.gfile.GFile(os.path.join(model_run.uri, RUN_RECORD), "w") as f:
        json.dump(record, f, indent=2, sort_keys=True)


def _tree_importances(members):
    """The gain per feature of the first served model that is boosted trees (the report's
    chart), or None: other models have no importances of their own."""
    for member in members:
        if hasattr(member.estimator, "experimental_feature_importances"):
            importances = member.estimator.experimental_feature_importances()
            return {name: float(gain) for name, gain in importances.items()}
    return None


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
    for key in ("strategy", "strategy_reason", "training_length", "stop_reason", "model"):
        model_run.set_string_custom_property(key, record[key])
    model_run.set_string_custom_property("model_choice", json.dumps(record["model_choice"]))
    if record.get("feature_importances"):
        model_run.set_string_custom_property(
            "feature_importances", json.dumps(record["feature_importances"])
        )
    for key in ("auc", "accuracy", "loss"):
        if key in record["eval_metrics"]:
            model_run.set_float_custom_property(f"eval_{key}", record["eval_metrics"][key])


def _models_to_fit(exec_properties, names, hparams, offered, category_sums=None):
    """[ModelToFit]: the auto candidates `names` (the `candidates` parameter) that fit the
    label (`auto_model.fits_the_label`, given the offered `label_range`), or, with
    none, the one model estimator_fn builds; `category_sums()` gives the candidates that
    order their category ids by label (`auto_model.orders_categories`) their sums, read
    once."""
    if names:
        from components.auto import model as auto_model

        task = offered.get("task")
        names = _fitting_candidates(names, task, offered.get("label_range"))
        sums = {}
        if category_sums is not None and any(
            auto_model.orders_categories(name, task) for name in names
        ):
            sums = {"category_sums": category_sums()}
        return [
            candidates_lib.ModelToFit(
                name,
                lambda run_config, warm, name=name: auto_model.build_candidate(
                    name,
                    run_config,
                    hparams,
                    warm,
                    **offered,
                    **(sums if auto_model.orders_categories(name, task) else {}),
                ),
            )
            for name in names
        ]
    reference = exec_properties["estimator_fn"]
    return [
        candidates_lib.ModelToFit(
            hparams.get("canned") or ("auto" if reference == user_code.AUTO else reference),
            lambda run_config, warm: build_estimator(reference, run_config, hparams, warm, offered),
        )
    ]


def _fitting_candidates(names, task, label_range):
    """`names` less the candidates that cannot fit this label (logged); ValueError when
    none is left."""
    from components.auto import model as auto_model

    fitting = [name for name in names if auto_model.fits_the_label(name, task, label_range)]
    for name in names:
        if name not in fitting:
            log.info(
                "Trainer: candidate %s left out: it fits a regression label whose train "
                "values are all above 0 (task %s, train label range %s).",
                name,
                task,
                label_range,
            )
    if not fitting:
        raise ValueError(
            f"Trainer: none of the candidates {', '.join(names)} fits this label (task "
            f"{task}, train label range {label_range}): name another candidate."
        )
    return fitting


def _in_a_cluster(tf_config):
    return sum(len(tasks) for tasks in (tf_config or {}).get("cluster", {}).values()) > 1


def _warm_start_from(input_dict, exec_properties):
    """The latest blessed model to start from, when warm_start asks for it and there is one."""
    base_models = input_dict.get("base_model") or []
    if not (int(exec_properties["warm_start"]) and base_models):
        return None
    log.info("Warm-starting from %s", base_models[0].uri)
    return estimator.WarmStartSettings(path_utils.serving_model_path(base_models[0].uri))


class _Training:
    """What every model fitted in this process shares: the transform output, the train
    split and its held-out part, the strategy, the seed and the settings; `fit` trains one
    model on them (`candidates_lib.fit_and_choose` calls it for each)."""

    def __init__(self, input_dict, exec_properties, choice, strategy, tf_config):
        self.exec_properties = exec_properties
        self.choice, self.strategy = choice, strategy
        self.in_a_cluster = _in_a_cluster(tf_config)
        self.seed = int(exec_properties["random_seed"])
        self.tft_output = tft.TFTransformOutput(
            artifact_utils.get_single_uri(input_dict["transform_graph"])
        )
        self.feature_spec = self.tft_output.transformed_feature_spec()
        self.examples = input_dict["examples"]
        self.train_pattern = self.split_pattern("train")
        self.eval_batch = int(exec_properties["eval_batch_size"])
        self.warm_start_from = _warm_start_from(input_dict, exec_properties)
        self.hparams = json.loads(exec_properties["hparams"] or "{}")
        self.steps = exec_properties.get("train_steps")
        self.epochs = exec_properties.get("train_epochs")
        self.candidates = json.loads(exec_properties.get("candidates") or "[]")
        # A part of the train split is held out to stop on, or to choose between candidates.
        stops_early = length_lib.stops_early(self.steps, self.epochs, self.in_a_cluster)
        self.holds_out = stops_early or len(self.candidates) > 1
        train = train_statistics(input_dict)  # (read once: its rows and the label's moments)
        self.rows = int(train.num_examples) if train is not None else None
        self.label_moments = label_moments(train, exec_properties.get("raw_label_key"))
        self.label_range = label_range(train, exec_properties.get("raw_label_key"))
        self.fit_rows = length_lib.fit_rows(self.rows, self.holds_out)
        below = exec_properties.get("cross_validation_below_rows")
        self.folds = length_lib.folds(
            self.rows,
            len(self.candidates),
            self.steps,
            self.epochs,
            self.in_a_cluster,
            length_lib.CROSS_VALIDATION_BELOW_ROWS if below is None else int(below),
        )
        # {fold (None: the one held-out part): (input_fn, steps)}, set by `hold_out`
        self.validation = {}
        self.classifier = exec_properties.get("task") in ("binary", "multiclass")

    def offered(self):
        """The keywords a build_estimator may declare (`build_estimator`)."""
        return {
            "tft_output": self.tft_output,
            "transformed_label_key": self.exec_properties["transformed_label_key"],
            "task": self.exec_properties.get("task"),
            "train_rows": self.fit_rows,
            "label_moments": self.label_moments,
            "label_range": self.label_range,
        }

    def category_sums(self):
        """{category feature: (label sum per id, rows per id)} of the rows a model fits
        before it is chosen: the fit part beside a held-out one, else the whole split (under
        cross-validation the folds' models read the order of all their rows: they restart
        from one traced model)."""
        from components.auto import model as auto_model
        from components.auto import ordered_categories

        _, deep = auto_model.feature_columns(
            self.tft_output, self.exec_properties["transformed_label_key"]
        )
        keys = ordered_categories.identity_keys(deep)
        if not keys:
            return None
        part = "fit" if self.holds_out and not self.folds else None
        batches = self.input_fn(self.train_pattern, self.eval_batch, False, part)()
        # a binary label's positive class: the head's class id 1 (None: int64 ids 0/1)
        classes = self.classifier and auto_model.label_classes(self.tft_output)
        return ordered_categories.label_sums(
            ((features, labels) for features, labels in batches.as_numpy_iterator()),
            keys,
            classes[1] if classes else None,
        )

    def split_pattern(self, split):
        return os.path.join(artifact_utils.get_split_uri(self.examples, split), "*.gz")

    def input_fn(self, pattern, batch_size, repeat, part, cache=False):
        return make_input_fn(
            pattern,
            self.feature_spec,
            self.exec_properties["transformed_label_key"],
            batch_size,
            repeat,
            self.seed,
            part,
            cache,
        )

    def hold_out(self, scratch):
        """Sets `validation` to the held-out part's input, when there is one: read from the
        train split across a cluster, else from a copy written to `scratch` (read whole, kept
        in memory)."""
        if not self.holds_out:
            return
        for fold in range(self.folds):  # small: every row of each fold
            copy = held_out_copy(self.train_pattern, None, scratch, fold)
            self.validation[fold] = (self.input_fn(copy, self.eval_batch, False, None, True), None)
        if self.folds:
            return
        batches = math.ceil(length_lib.validation_rows(self.rows) / self.eval_batch)
        if self.in_a_cluster:
            input_fn = self.input_fn(self.train_pattern, self.eval_batch, False, "validation")
            self.validation[None] = (input_fn, batches)
        else:
            copy = held_out_copy(self.train_pattern, batches * self.eval_batch, scratch)
            self.validation[None] = (
                self.input_fn(copy, self.eval_batch, False, None, True),
                None,
            )

    def labels(self, fold=None):
        """The held-out part's labels (of `fold`), in the order `predict` reads them: class
        indices in the label vocabulary's order, or numbers."""
        input_fn, steps = self.validation[fold]
        dataset = input_fn()
        if steps is not None:
            dataset = dataset.take(steps)
        labels = np.concatenate([np.reshape(label.numpy(), -1) for _, label in dataset])
        if not self.classifier:
            return labels.astype(np.float64)
        from components.auto.model import label_classes

        classes = label_classes(self.tft_output)
        if classes is None:  # int64 class ids
            return labels.astype(np.int64)
        index = {c: i for i, c in enumerate(classes)}
        return np.array([index[v.decode() if isinstance(v, bytes) else v] for v in labels])

    def predict(self, model, checkpoint, fold=None):
        """`model`'s predictions at `checkpoint` on the held-out part (of `fold`): class
        probabilities, or predicted numbers."""
        input_fn, steps = self.validation[fold]
        key = "probabilities" if self.classifier else "predictions"
        batches = model.predict(
            input_fn, predict_keys=[key], checkpoint_path=checkpoint, yield_single_examples=False
        )
        out = [batch[key] for batch in itertools.islice(batches, steps)]
        out = np.concatenate(out).astype(np.float64)
        return out if self.classifier else out.reshape(-1)

    def fit(self, model, model_dir, fold=None, steps=None, restart=None, keep_initial=None):
        """(Estimator, TrainingLength, Outcome, strategy name) of `model` trained in
        `model_dir`: stopped early on the held-out part (of cross-validation's `fold`), or,
        given `steps` (the folds' best step), on the whole split for as many epochs.
        `restart`: (Estimator, initial checkpoint) of an earlier fit of the same model (an
        earlier fold's), fitted afresh without tracing again (`Estimator.restart`) unless it
        trains under a strategy; `keep_initial`: a folder for this fit's step-0 checkpoint."""
        rows = self.fit_rows
        if fold is not None:
            rows = length_lib.fold_fit_rows(self.rows)
        elif steps is not None:
            rows = self.rows
        # Built once to see how it wants its input (cheap: no variables yet), then again
        # with the RunConfig that follows from it.
        feeding = candidates_lib.feeding(
            model.build(estimator.RunConfig(model_dir=model_dir), None),
            rows,
            int(self.exec_properties["train_batch_size"]),
        )
        # Boosted trees grow on one device (the default one: a GPU where there is one);
        # in a cluster they get the strategy, which their estimator refuses, naming it.
        one_device = feeding.one_device and not self.in_a_cluster
        model_strategy = None if one_device else self.strategy
        replicas = model_strategy.num_replicas_in_sync if model_strategy is not None else 1
        if steps is not None:  # as many epochs on all the rows as the folds' best step
            if feeding.batch_size is not None:
                steps = math.ceil(steps * rows / length_lib.fold_fit_rows(self.rows))
            length = length_lib.TrainingLength(steps)
        else:
            length = length_lib.plan(
                self.steps,
                self.epochs,
                rows,
                (feeding.batch_size or rows) * replicas,
                in_a_cluster=self.in_a_cluster,
                model_steps=feeding.steps,
                round_steps=feeding.round_steps,
            )
        every = int(self.exec_properties["save_checkpoints_steps"])
        run_config = estimator.RunConfig(
            model_dir=model_dir,
            tf_random_seed=self.seed,
            save_checkpoints_steps=length.round_steps() if length.early_stopping else every,
            train_distribute=model_strategy,
        )
        if restart is not None and model_strategy is None:
            model_estimator, initial = restart
            model_estimator.restart(run_config, initial)
        else:
            model_estimator = model.build(run_config, self.warm_start_from)
        log.info("Trainer: %s, %s", model.name, length.describe())
        part = "fit" if self.holds_out and steps is None else None
        if fold is not None:
            part = ("fit", fold)
        train_input = self.input_fn(self.train_pattern, feeding.batch_size, True, part)
        validation = self.validation.get(fold, (None, None)) if steps is None else (None, None)
        patience = stopping.PATIENCE
        if fold is not None and feeding.fold_patience is not None:
            patience = feeding.fold_patience
        outcome = stopping.train(
            model_estimator, train_input, length, *validation, keep_initial, patience
        )
        strategy_name = self.choice.name if model_strategy is not None else "default"
        return model_estimator, length, outcome, strategy_name


def _evaluate_and_export(training, model_choice, output_dict):
    """The chief's part after training: the chosen model's eval metrics (an ensemble's
    heaviest member's), its serving export and the run record."""
    chosen = model_choice.members[0]
    metrics = chosen.estimator.evaluate(
        training.input_fn(training.split_pattern("eval"), training.eval_batch, False, None),
        steps=int(training.exec_properties["eval_steps"]),
        checkpoint_path=chosen.outcome.checkpoint,
    )
    log.info("Trainer eval metrics: %s", metrics)
    export_dir = path_utils.serving_model_dir(artifact_utils.get_single_uri(output_dict["model"]))
    raw_label_key = training.exec_properties["raw_label_key"]
    if model_choice.combined:
        export_combined_model(
            [(m.estimator, m.outcome.checkpoint) for m in model_choice.members],
            [model_choice.weights[m.name] for m in model_choice.members],
            model_choice.temperature,
            ensemble.CLIP,
            training.tft_output,
            raw_label_key,
            export_dir,
            bounds=model_choice.bounds,
        )
    else:
        export_serving_model(
            chosen.estimator,
            training.tft_output,
            raw_label_key,
            export_dir,
            checkpoint_path=chosen.outcome.checkpoint,
        )
    model_run = artifact_utils.get_single_instance(output_dict["model_run"])
    _write_run_record(model_run, training.choice, metrics, model_choice)
    _adopt_run_record(model_run)


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
    training = _Training(input_dict, exec_properties, choice, strategy, tf_config)
    tf.random.set_seed(training.seed)
    # Keras layers' default initializers in a model module draw their seeds from Python's
    # `random`, as under tf.estimator (whose `tf_random_seed` seeds graphs only): seeded
    # here, so that the Trainer's runs repeat.
    random.seed(training.seed)
    models = _models_to_fit(
        exec_properties,
        training.candidates,
        training.hparams,
        training.offered(),
        training.category_sums,
    )
    model_run = artifact_utils.get_single_instance(output_dict["model_run"])
    with tempfile.TemporaryDirectory(prefix="trainer-validation-") as scratch:
        training.hold_out(scratch)
        chosen = candidates_lib.fit_and_choose(
            models,
            model_run.uri,
            training,
            training.folds,
            label_range=None if training.classifier else training.label_range,
        )
    if not task_config(chosen.members[0].estimator).is_chief:
        return False  # evaluation and export are the chief's
    _evaluate_and_export(training, chosen, output_dict)
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
