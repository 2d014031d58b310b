"""TPUEstimator programs run with `use_tpu=False` as under tf.estimator 2.15.

The program in `tests/tpu_programs.py` (BERT's shape: `params["batch_size"]`,
`scaffold_fn` initialising from a checkpoint, `eval_metrics`, a `host_call`) was run
once under tf.estimator 2.15 (`tests/tf215/record_tpu_estimator.py`, into
`tests/data/tf215/tpu_estimator.json`); here it runs on this kit and must give what
2.15 gave.  Every variable starts from that checkpoint and the input is fixed, so
2.15 is deterministic: losses, metrics and predictions are compared to 1e-4.
"""

import importlib
import itertools
import json
import os
import types

import numpy as np
import pytest
import tensorflow as tf

from components import estimator
from components.estimator import ignored, tpu
from components.estimator.tpu import embedding
from tests import tpu_programs

v1 = tf.compat.v1
RECORDED = os.path.join(os.path.dirname(__file__), "data", "tf215", "tpu_estimator.json")
# The estimator module as the program sees it: `est.tpu`, `est.ModeKeys`, `est.export`.
KIT = types.SimpleNamespace(tpu=tpu, ModeKeys=estimator.ModeKeys, export=estimator.export)


@pytest.fixture(scope="module")
def recorded():
    with open(RECORDED) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    ignored._warned.discard("TPUEstimator.export_to_tpu")  # (once per process)
    with pytest.warns(UserWarning, match="export_to_tpu is ignored"):
        return tpu_programs.bert_shaped(KIT, str(tmp_path_factory.mktemp("bert_shaped")))


@pytest.fixture(scope="module")
def tf215(recorded):
    return recorded["programs"]["bert_shaped"]


def test_the_namespace_has_2_15s_public_names(recorded):
    assert sorted(tpu.__all__) == recorded["names"]["tpu"]
    assert (
        sorted(n for n in dir(tpu.experimental) if not n.startswith("_"))
        == (recorded["names"]["tpu.experimental"])
    )


def test_params_carry_each_modes_batch_size_to_model_fn_and_input_fn(ran, tf215):
    assert ran["params"] == tf215["params"]
    assert ran["input_params"] == tf215["input_params"]
    assert [p["batch_size"] for p in ran["input_params"]] == [8, 16, 16, 4]
    # Exporting: no batch size, use_tpu False (2.15 called model_fn a second time
    # for the TPU MetaGraph, which this kit does not write).
    assert ran["export_params"] == tf215["export_params"][:1]
    assert ran["export_params"] == [{"mode": "infer", "batch_size": None, "use_tpu": False}]


def _steps_read_beside_the_train_op(steps):
    """The global step a hook or host_call reads in the same session call as the train op
    is the step before or after its increment, whichever TF1's executor runs first (on
    2.15 too; a busy machine shows both): call k sees k or k + 1, never going back."""
    return all(k <= step <= k + 1 for k, step in enumerate(steps)) and steps == sorted(steps)


def test_training_from_the_scaffold_fns_checkpoint_matches_2_15(ran, tf215):
    # iterations_per_loop=4: on CPUs 2.15 still ran one step per session call, so the
    # hook saw all 20 steps; so does this kit.
    for side in (ran, tf215):
        assert len(side["steps"]) == 20
        assert _steps_read_beside_the_train_op([step for step, _ in side["steps"]])
    ours = [loss for _, loss in ran["steps"]]
    theirs = [loss for _, loss in tf215["steps"]]
    assert ours == pytest.approx(theirs, abs=1e-4)
    # The first loss is the checkpoint's model's: scaffold_fn initialised every weight.
    assert ours[0] == pytest.approx(0.69528, abs=1e-4)
    assert ran["variables"] == tf215["variables"]
    assert (
        ran["checkpoints"]
        == tf215["checkpoints"]
        == ["model.ckpt-0", "model.ckpt-10", "model.ckpt-20"]
    )
    # The Estimator's loss summary; examples/sec and global_step/sec instead of its step counter.
    assert ran["model_dir_summaries"] == tf215["model_dir_summaries"]


def test_host_call_writes_its_summaries_every_step(ran, tf215):
    # One summary a step, at the step read beside the train op (k or k + 1 for call k:
    # the distinct steps run from 0 or 1 to 19 or 20 with no gap over 2).
    for side in (ran, tf215):
        assert list(side["host_call_summaries"]) == ["host_loss"]
        steps = side["host_call_summaries"]["host_loss"]
        assert steps[0] <= 1 and steps[-1] >= 19 and set(steps) <= set(range(21))
        assert all(0 < later - earlier <= 2 for earlier, later in itertools.pairwise(steps))


def test_eval_metrics_from_a_list_or_a_dict_of_tensors(ran, tf215):
    assert ran["eval"] == pytest.approx(tf215["eval"], abs=1e-4)
    assert ran["eval_by_dict"] == pytest.approx(tf215["eval_by_dict"], abs=1e-4)
    assert sorted(ran["eval"]) == ["eval_accuracy", "eval_loss", "global_step", "loss"]


def test_predictions_match_2_15(ran, tf215):
    assert ran["prediction_keys"] == tf215["prediction_keys"]
    assert len(ran["probabilities"]) == len(tf215["probabilities"]) == 12
    np.testing.assert_allclose(ran["probabilities"], tf215["probabilities"], atol=1e-4)


def test_the_export_is_2_15s_serve_metagraph_and_loads_with_tags_serve(ran, tf215):
    serve, tpu_graph = tf215["export"]
    assert tpu_graph["tags"] == ["serve", "tpu"]
    assert ran["export"] == [serve]
    assert serve["signatures"]["serving_default"]["outputs"] == ["logits", "probabilities"]
    assert sorted(ran["served"]) == sorted(tf215["served"])
    for key, values in ran["served"].items():
        np.testing.assert_allclose(values, tf215["served"][key], atol=1e-4)


# ------------------------------------------------------------------ refusals
def _model_fn(features, labels, mode, params):
    weight = v1.get_variable("w", [], initializer=v1.zeros_initializer())
    loss = tf.reduce_mean(features["x"]) * weight
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=v1.train.get_or_create_global_step()
    )
    return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, predictions={"w": weight})


def _config(tmp_path, **tpu_config):
    return tpu.RunConfig(model_dir=str(tmp_path), tpu_config=tpu.TPUConfig(**tpu_config))


def test_use_tpu_true_fails_where_2_15_looked_for_the_tpu_saying_what_to_use(tmp_path):
    """As 2.15 without a TPU: made (use_tpu=True is its default); training fails with its
    RuntimeError, which says what runs here. (tests/test_tpu_samples.py's
    resnet_main_without_a_tpu holds the rest against 2.15.)"""
    model = tpu.TPUEstimator(_model_fn, config=_config(tmp_path), train_batch_size=8)

    def input_fn(params):
        return {"x": tf.ones([8])}, tf.ones([8])

    with pytest.raises(
        RuntimeError, match=r"^Cannot find any TPU cores.*TPUStrategy.*use_tpu=False"
    ):
        model.train(input_fn, steps=1)


def test_what_2_15_refused_is_refused_by_name(tmp_path):
    # 2.15's first line alone, the kit's detail after it
    first = r"`config` must be provided with type `tpu_config\.RunConfig`\n.*tpu\.RunConfig"
    with pytest.raises(ValueError, match=first):
        tpu.TPUEstimator(_model_fn, config=estimator.RunConfig(), use_tpu=False)
    with pytest.raises(ValueError, match=r"\['batch_size', 'context'\] are reserved keys"):
        tpu.TPUEstimator(
            _model_fn, config=_config(tmp_path), use_tpu=False, params={"batch_size": 3}
        )
    with pytest.raises(ValueError, match="iterations_per_loop='10x'"):
        tpu.TPUConfig(iterations_per_loop="10x")
    with pytest.raises(ValueError, match=r"cluster=.*TPU"):
        tpu.RunConfig(cluster="a TPUClusterResolver")


# ------------------------------------------------------------------ embedding_config_spec
# (tests/test_tpu_samples.py's dlrm_tpu_embedding trains, evaluates, predicts and exports
# with one, against 2.15.)
def _tpu_column():
    categorical = tf.feature_column.categorical_column_with_identity("id", 10)
    return v1.tpu.experimental.embedding_column(categorical, dimension=4)


def _adagrad():  # (tf.compat.v1.tpu.experimental.AdagradParameters once installed)
    return embedding.AdagradParameters(0.1)


def test_an_embedding_config_spec_is_checked_as_2_15_checked_it(tmp_path):
    spec = tpu.experimental.EmbeddingConfigSpec
    with pytest.raises(ValueError, match="exactly one of `feature_columns` and the pair"):
        spec(feature_columns=[], optimization_parameters=_adagrad())
    with pytest.raises(ValueError, match=r'partition_strategy .*"div" or "mod"'):
        spec(
            feature_columns=[_tpu_column()],
            optimization_parameters=_adagrad(),
            partition_strategy="x",
        )
    # A Keras or tf.compat.v1.train optimizer is not a TPU embedding optimizer (ValueError in 2.15).
    with pytest.raises(ValueError, match="optimization_parameters must be an instance of"):
        spec(
            feature_columns=[_tpu_column()], optimization_parameters=v1.train.AdagradOptimizer(0.1)
        )
    categorical = tf.feature_column.categorical_column_with_identity("id", 10)
    with pytest.raises(TypeError, match=r"must be supported types.*IdentityCategoricalColumn"):
        spec(feature_columns=[categorical], optimization_parameters=_adagrad())
    # 2.15's FeatureConfig/TableConfig form: those classes are gone from TF 2.21.
    with pytest.raises(TypeError, match=r"FeatureConfig and TableConfig.*feature_columns=\["):
        spec(feature_to_config_dict={"id": object()}, table_to_config_dict={"t": object()})
    # On CPUs 2.15 refused 'mod' sharding and num_shards=1 with a spec, at construction.
    mod = spec(
        feature_columns=[_tpu_column()],
        optimization_parameters=_adagrad(),
        partition_strategy="mod",
    )
    with pytest.raises(ValueError, match="Mod sharding of embedding tables not supported on CPU"):
        tpu.TPUEstimator(
            _model_fn, config=_config(tmp_path), use_tpu=False, embedding_config_spec=mod
        )
    div = mod._replace(partition_strategy="div")
    with pytest.raises(
        ValueError, match=r"num_shards==1 is unsupported when embedding_config_spec"
    ):
        tpu.TPUEstimator(
            _model_fn,
            config=_config(tmp_path, num_shards=1),
            use_tpu=False,
            embedding_config_spec=div,
        )
    # Off TPUs 2.15 left per_host_input_for_training unchecked (PER_HOST_V1/V2 only on TPUs).
    per_shard = _config(tmp_path, per_host_input_for_training=tpu.InputPipelineConfig.PER_SHARD_V1)
    tpu.TPUEstimator(_model_fn, config=per_shard, use_tpu=False, embedding_config_spec=div)


def test_tf_2_15s_tpu_embedding_optimizer_settings_are_checked_as_there():
    from components.estimator import install

    install.install()  # puts them where TF 2.21 has none
    experimental = v1.tpu.experimental
    for name in ("Adagrad", "Adam", "Ftrl", "StochasticGradientDescent"):
        assert getattr(experimental, f"{name}Parameters") is getattr(embedding, f"{name}Parameters")
    adam = experimental.AdamParameters(0.2)
    assert (adam.beta1, adam.beta2, adam.epsilon, adam.lazy_adam) == (0.9, 0.999, 1e-08, True)
    assert experimental.AdagradParameters(0.1).initial_accumulator == 0.1
    with pytest.raises(ValueError, match="initial_accumulator must be greater than 0"):
        experimental.AdagradParameters(0.1, initial_accumulator=0)
    with pytest.raises(ValueError, match=r"beta1 must be between 0\. and 1"):
        experimental.AdamParameters(0.1, beta1=1.0)
    with pytest.raises(ValueError, match="when disabling Lazy Adam, gradient accumulation"):
        experimental.AdamParameters(0.1, lazy_adam=False, use_gradient_accumulation=False)
    with pytest.raises(ValueError, match="learning_rate_power must be less than or equal to 0"):
        experimental.FtrlParameters(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="gradient clipping limits, gradient accumulation must"):
        experimental.StochasticGradientDescentParameters(
            0.1, use_gradient_accumulation=False, clip_gradient_max=1.0
        )


def test_a_master_is_kept_and_refused_only_where_a_session_would_open_on_it(tmp_path):
    """As 2.15: an export-only TPUEstimator on master='local' exports (no session on
    it), while training there fails as 2.15's did (TensorFlow's NotFoundError: no session
    factory); a `grpc://` server is refused by name, since the kit runs sessions here."""
    config = tpu.RunConfig(master="grpc://10.0.0.2:8470", model_dir=str(tmp_path / "grpc"))
    assert (config.master, config.evaluation_master) == ("grpc://10.0.0.2:8470",) * 2
    assert tpu.RunConfig(master="a", evaluation_master="").evaluation_master == ""
    assert config.replace(save_summary_steps=5).master == "grpc://10.0.0.2:8470"
    model = tpu.TPUEstimator(_model_fn, config=config, use_tpu=False, train_batch_size=4)

    def input_fn(params):
        return {"x": tf.ones([4])}, tf.ones([4])

    with pytest.raises(ValueError, match=r"master='grpc://10\.0\.0\.2:8470'.*in this process"):
        model.train(input_fn, steps=1)
    local = tpu.RunConfig(master="local", model_dir=str(tmp_path / "local"))
    model = tpu.TPUEstimator(_model_fn, config=local, use_tpu=False, train_batch_size=4)
    with pytest.raises(tf.errors.NotFoundError, match='target: "local"'):
        model.evaluate(input_fn, steps=1)


def test_an_input_fn_without_params_is_refused_naming_it(tmp_path):
    model = tpu.TPUEstimator(_model_fn, config=_config(tmp_path), use_tpu=False, train_batch_size=4)

    def input_fn():
        return {"x": tf.ones([4])}, tf.ones([4])

    with pytest.raises(
        ValueError, match=r"input_fn \(<function .*input_fn.*\) does not include params"
    ):
        model.train(input_fn, steps=1)


def test_tpu_estimator_spec_checks_its_host_calls():
    def metric_fn(labels, logits):
        return {}

    with pytest.raises(RuntimeError, match=r"eval_metrics, length of tensors 1 .* takes 2"):
        tpu.TPUEstimatorSpec("eval", loss=tf.constant(1.0), eval_metrics=(metric_fn, [1]))
    with pytest.raises(ValueError, match=r"host_call should have two elements"):
        tpu.TPUEstimatorSpec("train", host_call=(metric_fn,))
    with pytest.raises(TypeError, match="All hooks must be SessionRunHook instances"):
        tpu.TPUEstimatorSpec("train", training_hooks=["not a hook"])
    spec = tpu.TPUEstimatorSpec(
        "eval", loss=tf.constant(1.0), eval_metrics=(metric_fn, {"labels": 1, "wrong": 2})
    )
    with pytest.raises(TypeError, match="unexpected keyword argument 'wrong'"):
        spec.as_estimator_spec()


def test_iterations_per_loop_sets_how_often_examples_per_second_is_logged(tmp_path, caplog):
    # 2.15: log_step_count_steps=6 over loops of 3 steps logged every 2 session calls;
    # on CPUs every session call is one step.
    model = tpu.TPUEstimator(
        _model_fn,
        config=tpu.RunConfig(
            model_dir=str(tmp_path),
            log_step_count_steps=6,
            tpu_config=tpu.TPUConfig(3),  # (iterations_per_loop, positionally as in 2.15)
        ),
        use_tpu=False,
        train_batch_size=4,
    )
    assert model.config.log_step_count_steps is None  # as 2.15: no loss/step log lines
    assert model.config.tpu_config.iterations_per_loop == 3

    def input_fn(params):
        return tf.data.Dataset.from_tensors(({"x": tf.ones([4])}, tf.ones([4]))).repeat()

    with caplog.at_level("INFO", logger="components.estimator.tpu.tpu_estimator"):
        model.train(input_fn, steps=9)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("examples/sec")]
    # The step counter reports every 2 steps after the first: steps 3, 5, 7, 9.
    assert len(lines) == 4
    assert model.get_variable_value("global_step") == 9


def test_a_host_call_without_summaries_runs_with_every_step_of_train_and_evaluate(tmp_path):
    ran_with = []

    def record(loss):
        ran_with.append(float(loss[0]))
        return 0

    def host_call(loss):  # no tf.summary writer to open or flush
        return [tf.py_function(record, [loss], tf.int32)]

    def model_fn(features, labels, mode, params):
        spec = _model_fn(features, labels, mode, params)
        return spec._replace(host_call=(host_call, [tf.reshape(spec.loss, [1])]))

    model = tpu.TPUEstimator(
        model_fn, config=_config(tmp_path), use_tpu=False, train_batch_size=4, eval_batch_size=4
    )

    def input_fn(params):
        x = tf.ones([params["batch_size"]])
        return tf.data.Dataset.from_tensors(({"x": x}, x)).repeat()

    model.train(input_fn, steps=3)
    assert len(ran_with) == 3
    model.evaluate(input_fn, steps=2)
    assert len(ran_with) == 5


def test_tf_2_15s_tensorflow_python_estimator_stub_serves_the_tpu_mains(tmp_path):
    """EfficientNet's and ResNet's mains import TF 2.15's `tensorflow.python.estimator`
    stub for `_load_global_step_from_checkpoint_dir` (their step count; compared with 2.15
    in tests/test_tpu_samples.py); other internal names say what to use instead."""
    from components.estimator import install

    install.install()
    stub = importlib.import_module("tensorflow.python.estimator.estimator")

    assert stub._load_global_step_from_checkpoint_dir(str(tmp_path)) == 0
    with pytest.raises(AttributeError, match=r"estimator\._train_model.*public names"):
        stub._train_model  # noqa: B018
    with pytest.raises(ImportError, match=r"tensorflow\.python\.estimator\.util.*public"):
        import tensorflow.python.estimator.util  # noqa: F401


def test_using_config_shows_the_tpu_fields_after_the_base_ones_as_2_15_did():
    from components.estimator.run_config import as_logged

    config = tpu.RunConfig(tpu_config=tpu.TPUConfig(iterations_per_loop=3, num_shards=8))
    logged = as_logged(config)
    assert logged.index("'_num_worker_replicas': 1") < logged.index("'_tpu_config'")
    assert logged.endswith(
        "'_tpu_config': TPUConfig(iterations_per_loop=3, num_shards=8, "
        "num_cores_per_replica=None, per_host_input_for_training=2, tpu_job_name=None, "
        "initial_infeed_sleep_secs=None, input_partition_dims=None, "
        "eval_training_input_configuration=2, experimental_host_call_every_n_steps=1, "
        "experimental_allow_per_host_v2_parallel_get_next=False, "
        "experimental_feed_hook=None), '_cluster': None}"
    )
