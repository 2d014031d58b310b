"""Shared fixtures: a small slice of the taxi data and one local pipeline run."""

import collections
import os
import random
import shutil
import socket
import sys

import pytest

from pipeline.config import DEFAULT_BEAM_ARGS, REPO_ROOT
from pipeline.definition import build_config

# The families' shared comparisons: a failed one shows its diff, not only its message.
pytest.register_assert_rewrite("tests.tf215_recordings")

# The files that take longest, longest first (measured: docs/testing.md, run 28; the last
# three from run 47's --durations). Two workers each take one file at a time in collection
# order (`--dist loadfile`, its reordering turned off in `pytest_configure`), so the long
# files start first and the short ones fill in at the end: alphabetical order left
# test_vertex_local_run and test_zero_code for last, one worker idle meanwhile.
LONGEST_FIRST = (
    "test_canned_vs_tf215.py",
    "test_pipeline_e2e.py",
    "test_canned_defaults_vs_tf215.py",
    "test_estimator.py",
    "test_gcp_labs.py",
    "test_distribute.py",
    "test_strategy.py",
    "test_ops.py",
    "test_feature_columns_vs_tf215.py",
    "test_canned_v1_vs_tf215.py",
    "test_public_samples.py",
    "test_boosted_trees.py",
    "test_text_sequence_samples.py",
    "test_experimental_estimators.py",
    "test_vertex_local_run.py",
    "test_migrate_guides.py",
    "test_zero_code.py",
    "test_tfx115_pipeline.py",
    "test_tfx115_vertex.py",
    "test_kill.py",
)


def pytest_configure(config):
    """Keeps the files in collection order under `--dist loadfile`: pytest-xdist (3.8)
    otherwise hands them out by their number of tests, most first (its
    `--loadscope-reorder`, on by default, overridden here), which put the files of one or
    two long tests (test_vertex_local_run, test_kill, the tfx115 ones) last, and a worker
    holding two of them while the other had nothing left to run."""
    if hasattr(config.option, "loadscopereorder"):  # xdist is loaded
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items):
    """Runs LONGEST_FIRST's files first, in its order, then the other files with a slow
    test, in collection order, then the rest, most tests first (there a file's time grows
    with its tests: a family's programs), so the short files fill in at the end."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    tests = collections.Counter(item.path for item in items)

    def order(item):
        if item.path.name in rank:
            return rank[item.path.name], 0
        if item.path in slow:
            return len(rank), 0
        return len(rank) + 1, -tests[item.path]

    items.sort(key=order)


TAXI_CSV = REPO_ROOT / "data" / "taxi" / "data.csv"
TAXI_DEFINITION = str(REPO_ROOT / "definitions" / "taxi.toml")


@pytest.fixture(scope="session", autouse=True)
def session_temp_dir(tmp_path_factory):
    """The system temp folder of this session (each xdist worker's): one folder, removed
    when the session ends (or, if it is killed, by the next session or pipeline run), and
    inherited by subprocesses through TMPDIR. What a test leaves there without meaning to
    (Beam's job servers and caches, a library's own scratch) then goes with the session
    instead of filling the machine's temp folder."""
    from pipeline.runner import run_temp_dir

    tmp_path_factory.getbasetemp()  # pytest's own folders stay where pytest keeps them
    with run_temp_dir() as folder:
        yield folder


@pytest.fixture(scope="module", autouse=True)
def python_random_seeded():
    """Seeds Python's and numpy's global generators at each test module's start. Layers'
    default initializers in a model_fn draw from Python's `random` here as under 2.15
    (each run of an unseeded program started from other weights there too), so a family
    comparing such programs' values with 2.15's loosely would pass or fail by the draw:
    seeded, a module's runs draw the same weights every time. A program's
    `tf.keras.utils.set_random_seed` earlier in the worker leaves tf_keras drawing those
    seeds from a generator of its own, not `random`: that is put back to none, and so is
    TensorFlow's global seed a program's `tf.random.set_seed` left behind."""
    import numpy as np

    random.seed(0)
    np.random.seed(0)
    keras_backend = sys.modules.get("tf_keras.src.backend")
    if keras_backend is not None:
        keras_backend._SEED_GENERATOR.generator = None
    tf = sys.modules.get("tensorflow")
    if tf is not None and tf.executing_eagerly():
        tf.random.set_seed(None)


@pytest.fixture(autouse=True)
def eager_execution_left_on():
    """Fails the test that leaves graph mode on in its worker (a graph made default and
    never left), by name: every test after it in that worker would fail with 'Graph is
    finalized' or build into a stranger's graph."""
    yield
    tf = sys.modules.get("tensorflow")
    if tf is not None and not tf.executing_eagerly():
        pytest.fail("this test left graph mode on: a tf.Graph is still the default graph")


def taxi_config(**overrides):
    """The taxi example's `PipelineConfig` (definitions/taxi.toml) with `overrides`."""
    return build_config(TAXI_DEFINITION, overrides=overrides)


@pytest.fixture(scope="session")
def small_taxi_csv(tmp_path_factory):
    """The header plus the first 1,500 rows of the taxi sample."""
    path = tmp_path_factory.mktemp("data") / "taxi_small.csv"
    with open(TAXI_CSV) as source, open(path, "w") as target:
        for i, line in enumerate(source):
            if i > 1500:
                break
            target.write(line)
    return path


def small_pipeline_config(output_dir, data_path, **overrides):
    settings = {
        "output_dir": str(output_dir),
        "data_path": str(data_path),
        "train_steps": 300,
        "eval_steps": 10,
        "save_checkpoints_steps": 100,
    }
    settings.update(overrides)
    return taxi_config(**settings)


@pytest.fixture(scope="session")
def pipeline_run(tmp_path_factory, small_taxi_csv):
    """(config, summary) of one full local run on the small slice."""
    from pipeline.runner import run_locally

    config = small_pipeline_config(tmp_path_factory.mktemp("run"), small_taxi_csv)
    summary = run_locally(config)
    return config, summary


def copy_of_run(config, output_dir, **overrides):
    """A config for `output_dir` holding copies of `config`'s ML Metadata store and serving folder.

    A run of it starts where `config`'s last run ended (the same cached executions, the same
    latest blessed model) and leaves `config`'s store and folders as they were: new artifacts
    go under `output_dir`, and the cached ones it reuses are only read.  Their folders are not
    copied, as the store names them by absolute path.
    """
    data_path = overrides.pop("data_path", config.data_path)
    copy = small_pipeline_config(output_dir, data_path, **overrides)
    os.makedirs(os.path.dirname(copy.resolved_metadata_path))
    shutil.copy2(config.resolved_metadata_path, copy.resolved_metadata_path)
    if os.path.isdir(config.resolved_serving_model_dir):
        shutil.copytree(config.resolved_serving_model_dir, copy.resolved_serving_model_dir)
    return copy


@pytest.fixture
def copy_tree(tmp_path):
    def copy(source):
        target = tmp_path / "copy"
        shutil.copytree(source, target)
        return target

    return copy


def schema_artifact(folder, text):
    """A Schema artifact at `folder` holding the text proto `text`, as SchemaImporter writes it."""
    from tfx.types import standard_artifacts

    schema = standard_artifacts.Schema()
    schema.uri = str(folder)
    os.makedirs(schema.uri)
    with open(os.path.join(schema.uri, "schema.pbtxt"), "w") as f:
        f.write(text)
    return schema


def run_statistics_gen(folder, examples, schema=None):
    """The ExampleStatistics artifact StatisticsGen's executor writes under `folder`."""
    import apache_beam as beam
    from tfx.dsl.components.base import base_beam_executor
    from tfx.types import standard_artifacts

    from components.statistics_gen.executor import Executor

    statistics = standard_artifacts.ExampleStatistics()
    statistics.uri = str(folder / "statistics")
    Executor(
        # make_beam_pipeline_fn, not beam_pipeline_args: with the latter TFX stages a copy
        # of itself in the system temp folder and leaves it there.
        base_beam_executor.BaseBeamExecutor.Context(
            make_beam_pipeline_fn=lambda: beam.Pipeline(argv=list(DEFAULT_BEAM_ARGS)),
            tmp_dir=str(folder / "tmp"),
            unique_id="x",
        )
    ).Do(
        {"examples": [examples], "schema": [schema] if schema else []},
        {"statistics": [statistics]},
        {},
    )
    return statistics


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to resolve a name or open a connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network call: {args}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
