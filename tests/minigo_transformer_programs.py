"""Programs shaped like tensorflow/minigo's `dual_net.py` (its Estimator years), after
`tf_upgrade_v2`, on a 3x3 board with 2 residual blocks and a few made-up positions:

- `minigo_dual_net`: `bootstrap()` forges `model.ckpt-1` from the model_fn built in
  PREDICT mode on placeholders in a `tf.compat.v1.Session`; `get_estimator()`'s
  `tf.estimator.Estimator` (`RunConfig(save_summary_steps, keep_checkpoint_max)`) then
  trains from it with `UpdateRatioSessionHook` (its summaries through
  `FileWriterCache.get(model_dir)`) and `EchoStepCounterHook` (a StepCounterHook
  subclass overriding `_log_and_record`); the model_fn: `tf.compat.v1.layers` conv and
  batch norm (`UPDATE_OPS`), policy and value heads, `piecewise_constant` learning rate,
  `MomentumOptimizer`, a `TPUEstimatorSpec` with `eval_metrics` and a `host_call` of
  `tf.compat.v2.summary` scalars and a conditional reset of the `metrics` locals, turned
  into an EstimatorSpec by `as_estimator_spec()`; `validate()`'s `evaluate(name=...)`,
  `export_model()`'s checkpoint copy, the DualNetwork's session restoring it, and an
  `export_saved_model` of a features placeholder;
- `minigo_tpu_estimator`: the same model_fn returned as the TPUEstimatorSpec itself to a
  `TPUEstimator(use_tpu=False)` (`input_fn(params)` with `params["batch_size"]`), trained,
  evaluated and predicted;
- `transformer_tpu_estimator`: tensorflow/models' `official/r1/transformer/transformer_main.py`
  with `params["use_tpu"]` (a TPUEstimator with `use_tpu=False`): `eval_metrics` of the
  padded metrics, `tpu_util.construct_scalar_host_call`'s "training/" scalars in a
  ".host_call" event file, train/evaluate cycles; then a plain Estimator on the same
  model_dir predicting bare logits (one tensor) by batch and by example, and its export
  (the rest of the sample is in `models_official_r1_programs.transformer_r1`).

Not compared: the evaluated `l2_cost` mean, 0.0 in about one run in four on both sides.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (names, tags, listings, lines, errors) and `close` values.
`tests/test_minigo_transformer.py` compares them with 2.15's recording
(`tests/tf215/record_family.py minigo_transformer_programs`, into
`tests/data/tf215/minigo_transformer.json`).
"""

import functools
import glob
import os

import numpy as np

from tests.google_research_programs import _tensor_summaries
from tests.models_official_r1_programs import (
    TRANSFORMER_PARAMS,
    _sequences,
    _values_out,
    get_eval_metrics,
    get_train_op_and_metrics,
    toy_translator,
    translation_loss,
)
from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tf1_sample_programs import _messages
from tests.tutorial_programs import event_tags, listing, signatures

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "minigo_transformer.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

N, PLANES = 3, 4  # the board's side, the feature planes
FLAGS = {
    "conv_width": 4,
    "policy_conv_width": 2,
    "value_conv_width": 1,
    "fc_width": 4,
    "trunk_layers": 2,
    "lr_boundaries": [3, 5],
    "lr_rates": [0.01, 0.001, 0.0001],
    "l2_strength": 1e-4,
    "value_cost_weight": 1.0,
    "sgd_momentum": 0.9,
    "summary_steps": 2,
    "keep_checkpoint_max": 5,
    "train_batch_size": 4,
}


def _positions(n, seed):
    """Made-up boards: features [n, N, N, PLANES], one-hot pi over N*N+1 moves, outcomes."""
    draw = np.random.RandomState(seed)
    features = draw.randint(0, 2, size=(n, N, N, PLANES)).astype(np.float32)
    pi = np.eye(N * N + 1, dtype=np.float32)[draw.randint(0, N * N + 1, size=n)]
    value = draw.choice([-1.0, 1.0], size=n).astype(np.float32)
    return features, {"pi_tensor": pi, "value_tensor": value}


def get_inference_input(tf):
    v1 = tf.compat.v1
    return (
        v1.placeholder(tf.float32, [None, N, N, PLANES], name="pos_tensor"),
        {
            "pi_tensor": v1.placeholder(tf.float32, [None, N * N + 1]),
            "value_tensor": v1.placeholder(tf.float32, [None]),
        },
    )


def model_inference_fn(tf, features, training):
    v1 = tf.compat.v1
    my_batchn = functools.partial(
        v1.layers.batch_normalization,
        axis=-1,
        momentum=0.95,
        epsilon=1e-5,
        center=True,
        scale=True,
        fused=True,
        training=training,
    )
    my_conv2d = functools.partial(
        v1.layers.conv2d,
        filters=FLAGS["conv_width"],
        kernel_size=3,
        padding="same",
        data_format="channels_last",
        use_bias=False,
        kernel_initializer=v1.glorot_uniform_initializer(seed=1),
    )

    def my_res_layer(inputs):
        int_layer1 = my_batchn(my_conv2d(inputs))
        initial_output = tf.nn.relu(int_layer1)
        int_layer2 = my_batchn(my_conv2d(initial_output))
        return tf.nn.relu(inputs + int_layer2)

    shared_output = tf.nn.relu(my_batchn(my_conv2d(features)))
    for _ in range(FLAGS["trunk_layers"]):
        shared_output = my_res_layer(shared_output)
    policy_conv = my_conv2d(shared_output, filters=FLAGS["policy_conv_width"], kernel_size=1)
    policy_conv = tf.nn.relu(my_batchn(policy_conv, center=False, scale=False))
    dense = functools.partial(
        v1.layers.dense, kernel_initializer=v1.glorot_uniform_initializer(seed=2)
    )
    logits = dense(tf.reshape(policy_conv, [-1, FLAGS["policy_conv_width"] * N * N]), N * N + 1)
    policy_output = tf.nn.softmax(logits, name="policy_output")
    value_conv = my_conv2d(shared_output, filters=FLAGS["value_conv_width"], kernel_size=1)
    value_conv = tf.nn.relu(my_batchn(value_conv, center=False, scale=False))
    value_fc_hidden = tf.nn.relu(
        dense(tf.reshape(value_conv, [-1, FLAGS["value_conv_width"] * N * N]), FLAGS["fc_width"])
    )
    value_output = tf.nn.tanh(tf.reshape(dense(value_fc_hidden, 1), [-1]), name="value_output")
    return policy_output, value_output, logits


def _metric_ops(tf, policy_output, value_output, pi_tensor, costs):
    v1 = tf.compat.v1
    policy_entropy = -tf.reduce_mean(
        tf.reduce_sum(policy_output * tf.math.log(policy_output), axis=1)
    )
    policy_target_top_1 = tf.argmax(pi_tensor, axis=1)
    in_top1 = tf.cast(
        tf.nn.in_top_k(predictions=policy_output, targets=policy_target_top_1, k=1), tf.float32
    )
    in_top3 = tf.cast(
        tf.nn.in_top_k(predictions=policy_output, targets=policy_target_top_1, k=3), tf.float32
    )
    target_confidence = tf.boolean_mask(
        policy_output, tf.one_hot(policy_target_top_1, tf.shape(policy_output)[1])
    )
    policy_cost, value_cost, l2_cost, combined_cost = costs
    with v1.variable_scope("metrics"):
        return {
            "policy_cost": v1.metrics.mean(policy_cost),
            "value_cost": v1.metrics.mean(value_cost),
            "l2_cost": v1.metrics.mean(l2_cost),
            "policy_entropy": v1.metrics.mean(policy_entropy),
            "combined_cost": v1.metrics.mean(combined_cost),
            "policy_accuracy_top_1": v1.metrics.mean(in_top1),
            "policy_accuracy_top_3": v1.metrics.mean(in_top3),
            "policy_top_1_confidence": v1.metrics.mean(tf.reduce_max(policy_output, axis=1)),
            "policy_target_top_1_confidence": v1.metrics.mean(target_confidence),
            "value_confidence": v1.metrics.mean(tf.abs(value_output)),
        }


def make_model_fn(model_dir, use_tpu_spec=False):
    """dual_net.model_fn, FLAGS.model_dir and FLAGS.use_tpu bound."""

    def model_fn(features, labels, mode, params=None):
        import tensorflow as tf

        v1 = tf.compat.v1
        policy_output, value_output, logits = model_inference_fn(
            tf, features, mode == tf.estimator.ModeKeys.TRAIN
        )
        predictions = {"policy_output": policy_output, "value_output": value_output}
        if labels is None:  # served or predicted: no pi/value targets
            return tf.estimator.EstimatorSpec(mode, predictions=predictions)
        policy_cost = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits(
                logits=logits, labels=tf.stop_gradient(labels["pi_tensor"])
            )
        )
        value_cost = FLAGS["value_cost_weight"] * tf.reduce_mean(
            tf.square(value_output - labels["value_tensor"])
        )
        reg_vars = [
            v for v in v1.trainable_variables() if "bias" not in v.name and "beta" not in v.name
        ]
        l2_cost = FLAGS["l2_strength"] * tf.add_n([tf.nn.l2_loss(v) for v in reg_vars])
        combined_cost = policy_cost + value_cost + l2_cost
        global_step = v1.train.get_or_create_global_step()
        learning_rate = v1.train.piecewise_constant(
            global_step, FLAGS["lr_boundaries"], FLAGS["lr_rates"]
        )
        update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
        optimizer = v1.train.MomentumOptimizer(learning_rate, FLAGS["sgd_momentum"])
        with tf.control_dependencies(update_ops):
            train_op = optimizer.minimize(combined_cost, global_step=global_step)

        def eval_metrics_host_call_fn(
            policy_output,
            value_output,
            pi_tensor,
            policy_cost,
            value_cost,
            l2_cost,
            combined_cost,
            step,
            est_mode=tf.estimator.ModeKeys.TRAIN,
        ):
            costs = (policy_cost, value_cost, l2_cost, combined_cost)
            metric_ops = _metric_ops(tf, policy_output, value_output, pi_tensor, costs)
            if est_mode == tf.estimator.ModeKeys.EVAL:
                return metric_ops
            summary_writer = tf.compat.v2.summary.create_file_writer(model_dir)
            with summary_writer.as_default(), tf.compat.v2.summary.record_if(True):
                for metric_name, metric_op in metric_ops.items():
                    tf.compat.v2.summary.scalar(metric_name, metric_op[1], step=global_step)
            reset_op = v1.variables_initializer(v1.local_variables("metrics"))
            cond_reset_op = tf.cond(
                pred=tf.equal(
                    tf.math.floormod(tf.reduce_min(step), FLAGS["summary_steps"]),
                    tf.cast(1, dtype=tf.int64),
                ),
                true_fn=lambda: reset_op,
                false_fn=lambda: tf.no_op(),
            )
            return [*v1.summary.all_v2_summary_ops(), cond_reset_op]

        metric_args = [
            policy_output,
            value_output,
            labels["pi_tensor"],
            tf.reshape(policy_cost, [1]),
            tf.reshape(value_cost, [1]),
            tf.reshape(l2_cost, [1]),
            tf.reshape(combined_cost, [1]),
            tf.reshape(global_step, [1]),
        ]
        eval_metrics_only_fn = functools.partial(
            eval_metrics_host_call_fn, est_mode=tf.estimator.ModeKeys.EVAL
        )
        host_call_fn = functools.partial(
            eval_metrics_host_call_fn, est_mode=tf.estimator.ModeKeys.TRAIN
        )
        tpu_estimator_spec = tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
            mode=mode,
            predictions=predictions,
            loss=combined_cost,
            train_op=train_op,
            eval_metrics=(eval_metrics_only_fn, metric_args),
            host_call=(host_call_fn, metric_args),
        )
        if use_tpu_spec:
            return tpu_estimator_spec
        return tpu_estimator_spec.as_estimator_spec()

    return model_fn


def update_ratio_hook(tf, working_dir, every_n_steps):
    """dual_net.UpdateRatioSessionHook (with compute_update_ratio)."""
    v1 = tf.compat.v1

    class UpdateRatioSessionHook(tf.estimator.SessionRunHook):
        def __init__(self, working_dir, every_n_steps=1000):
            self.working_dir = working_dir
            self.every_n_steps = every_n_steps
            self.before_weights = None

        def begin(self):
            self.summary_writer = v1.summary.FileWriterCache.get(self.working_dir)
            self.weight_tensors = v1.trainable_variables()
            self.global_step = v1.train.get_or_create_global_step()

        def before_run(self, run_context):
            global_step = run_context.session.run(self.global_step)
            if global_step % self.every_n_steps == 0:
                self.before_weights = run_context.session.run(self.weight_tensors)

        def after_run(self, run_context, run_values):
            global_step = run_context.session.run(self.global_step)
            if self.before_weights is not None:
                after = run_context.session.run(self.weight_tensors)
                ratios = [
                    np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel())
                    for a, b in zip(after, self.before_weights, strict=True)
                ]
                summary = v1.Summary(
                    value=[
                        v1.Summary.Value(tag="update_ratios/" + t.name, simple_value=r)
                        for t, r in zip(self.weight_tensors, ratios, strict=True)
                    ]
                )
                self.summary_writer.add_summary(summary, global_step)
                self.before_weights = None

    return UpdateRatioSessionHook(working_dir, every_n_steps)


def echo_step_counter_hook(tf, output_dir, printed):
    class EchoStepCounterHook(tf.estimator.StepCounterHook):
        def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
            printed.append(f"{global_step}: steps per second")
            super()._log_and_record(elapsed_steps, elapsed_time, global_step)

    return EchoStepCounterHook(every_n_steps=2, output_dir=output_dir)


def bootstrap(tf, working_dir):
    """dual_net.bootstrap: model.ckpt-1 from the PREDICT graph's initial weights."""
    v1 = tf.compat.v1
    save_file = os.path.join(working_dir, "model.ckpt-1")
    sess = v1.Session(graph=tf.Graph())
    with sess.graph.as_default():
        features, labels = get_inference_input(tf)
        make_model_fn(working_dir)(features, labels, tf.estimator.ModeKeys.PREDICT)
        sess.run(v1.global_variables_initializer())
        v1.train.Saver().save(sess, save_file)
    sess.close()


def _saved_dicts(lines):
    """The 'Saving dict for global step' lines without their numbers."""
    return [_values_out(m + ",") for m in _messages(lines, "Saving dict")]


def _tensor_tags(tf, model_dir):
    """{tag: the steps written} of the tf2 (tensor) summaries in model_dir."""
    return {tag: sorted(steps) for tag, steps in _tensor_summaries(tf, model_dir).items()}


def _model_dir_record(tf, model_dir, eval_dir):
    """The variables, the train summaries (v1 and tf2, with their steps) and the eval ones
    of a model_dir."""
    return {
        "variables": dict(tf.train.list_variables(model_dir)),
        "train_tags": event_tags(model_dir),
        "host_call_tags": _tensor_tags(tf, model_dir),
        "eval_tags": sorted(event_tags(os.path.join(model_dir, eval_dir))),
    }


def _input_fn(tf, data, batch_size, repeat):
    dataset = tf.data.Dataset.from_tensor_slices(data)
    return (dataset.repeat() if repeat else dataset).batch(batch_size, drop_remainder=True)


def _dual_network_run(tf, save_file, positions):
    """dual_net.DualNetwork: a session on the PREDICT graph restoring `save_file`."""
    v1 = tf.compat.v1
    sess = v1.Session(graph=tf.Graph())
    with sess.graph.as_default():
        features, labels = get_inference_input(tf)
        spec = make_model_fn(os.path.dirname(save_file))(
            features, labels, tf.estimator.ModeKeys.PREDICT
        )
        v1.train.Saver().restore(sess, save_file)
        outputs = sess.run(spec.predictions, feed_dict={features: positions})
    sess.close()
    return outputs


@program
def minigo_dual_net(tf, workdir):
    v1 = tf.compat.v1
    model_dir = os.path.join(workdir, "models")
    os.makedirs(model_dir)
    bootstrap(tf, model_dir)
    v1.summary.FileWriterCache.clear()
    train, test = _positions(16, 0), _positions(8, 1)
    estimator = tf.estimator.Estimator(
        make_model_fn(model_dir),
        model_dir=model_dir,
        config=tf.estimator.RunConfig(
            save_summary_steps=FLAGS["summary_steps"],
            keep_checkpoint_max=FLAGS["keep_checkpoint_max"],
        ),
    )
    printed = []
    hooks = [
        update_ratio_hook(tf, model_dir, every_n_steps=2),
        echo_step_counter_hook(tf, model_dir, printed),
    ]
    with _info_lines() as lines:
        estimator.train(lambda: _input_fn(tf, train, 4, True), steps=6, hooks=hooks)
        results = estimator.evaluate(
            lambda: _input_fn(tf, test, 4, False), steps=2, name="selfplay"
        )
    v1.summary.FileWriterCache.clear()
    latest = estimator.latest_checkpoint()
    exported = []
    for filename in sorted(v1.gfile.Glob(latest + "*")):
        suffix = filename.partition(latest)[2]
        v1.gfile.Copy(filename, os.path.join(workdir, "000001-bootstrap") + suffix)
        exported.append(suffix)
    ran = _dual_network_run(tf, os.path.join(workdir, "000001-bootstrap"), test[0][:2])

    def serving_input_receiver_fn():
        features, _ = get_inference_input(tf)
        return tf.estimator.export.TensorServingInputReceiver(features, features)

    export_dir = estimator.export_saved_model(
        os.path.join(workdir, "export"), serving_input_receiver_fn
    ).decode()
    served = v1.saved_model.load_v2(export_dir).signatures["serving_default"](
        tf.constant(test[0][:2])
    )
    rows = list(estimator.predict(lambda: _input_fn(tf, test, 4, False)))
    return {
        "exact": {
            **_model_dir_record(tf, model_dir, "eval_selfplay"),
            "global_step": int(v1.train.load_variable(model_dir, "global_step")),
            "result_keys": sorted(results),
            "printed": sorted(set(printed)),
            "loss_lines": _saved_dicts(lines),
            "copied": exported,
            "listing": listing(model_dir),
            "signatures": signatures(export_dir),
            "served": sorted(served),
            "prediction_keys": sorted(rows[0]),
        },
        "close": {
            **{k: float(v) for k, v in results.items() if k != "l2_cost"},
            "run_value": ran["value_output"].tolist(),
            "served_value": served["value_output"].numpy().tolist(),
            "predicted_values": [float(r["value_output"]) for r in rows],
        },
    }


@program
def minigo_tpu_estimator(tf, workdir):
    v1 = tf.compat.v1
    model_dir = os.path.join(workdir, "tpu_models")
    train, test = _positions(16, 0), _positions(8, 1)
    run_config = tf.compat.v1.estimator.tpu.RunConfig(
        model_dir=model_dir,
        save_checkpoints_steps=4,
        save_summary_steps=FLAGS["summary_steps"],
        keep_checkpoint_max=FLAGS["keep_checkpoint_max"],
        session_config=v1.ConfigProto(allow_soft_placement=True),
        tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(
            iterations_per_loop=2,
            num_shards=1,
            per_host_input_for_training=tf.compat.v1.estimator.tpu.InputPipelineConfig.PER_HOST_V2,
        ),
    )
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
        use_tpu=False,
        model_fn=make_model_fn(model_dir, use_tpu_spec=True),
        config=run_config,
        train_batch_size=FLAGS["train_batch_size"],
        eval_batch_size=FLAGS["train_batch_size"],
        predict_batch_size=FLAGS["train_batch_size"],
    )
    seen = []

    def input_fn(params):
        seen.append(sorted(k for k in params if k != "context"))
        return _input_fn(tf, train, params["batch_size"], True)

    def eval_input_fn(params):
        return _input_fn(tf, test, params["batch_size"], False)

    with _info_lines() as lines:
        estimator.train(input_fn, steps=6)
        results = estimator.evaluate(eval_input_fn, steps=2, name="selfplay")
    v1.summary.FileWriterCache.clear()
    rows = list(estimator.predict(eval_input_fn))
    return {
        "exact": {
            **_model_dir_record(tf, model_dir, "eval_selfplay"),
            "result_keys": sorted(results),
            "params": seen,
            "loss_lines": _saved_dicts(lines),
            "checkpoints": sorted(
                os.path.basename(p) for p in glob.glob(os.path.join(model_dir, "*.index"))
            ),
            "prediction_keys": sorted(rows[0]),
            "rows": len(rows),
        },
        "close": {
            **{k: float(v) for k, v in results.items() if k != "l2_cost"},
            "predicted_values": [float(r["value_output"]) for r in rows],
        },
    }


# ------------------------------------------------------------------ official/r1/transformer
SEEN_PARAMS = []  # the keys of each params the model_fn was given


def construct_scalar_host_call(tf, metric_dict, model_dir, prefix=""):
    """official/r1/utils/tpu.construct_scalar_host_call after tf_upgrade_v2."""
    metric_names = list(metric_dict)

    def host_call_fn(global_step, *args):
        step = global_step[0]
        writer = tf.compat.v2.summary.create_file_writer(
            logdir=model_dir, filename_suffix=".host_call"
        )
        with writer.as_default(), tf.compat.v2.summary.record_if(True):
            for i, name in enumerate(metric_names):
                tf.compat.v2.summary.scalar(prefix + name, args[i][0], step=step)
            return tf.compat.v1.summary.all_v2_summary_ops()

    global_step_tensor = tf.reshape(tf.compat.v1.train.get_or_create_global_step(), [1])
    other_tensors = [tf.reshape(metric_dict[key], [1]) for key in metric_names]
    return host_call_fn, [global_step_tensor, *other_tensors]


def transformer_tpu_model_fn(features, labels, mode, params):
    """transformer_main.model_fn after tf_upgrade_v2, its `params["use_tpu"]` branches:
    logits as the predictions, eval_metrics and a scalar host_call."""
    import tensorflow as tf

    v1 = tf.compat.v1
    SEEN_PARAMS.append(sorted(k for k in params if k != "context"))
    with v1.variable_scope("model"):
        inputs, targets = features, labels
        if mode == tf.estimator.ModeKeys.PREDICT:
            logits = toy_translator(tf, inputs, tf.zeros_like(inputs))
            if params["use_tpu"]:
                raise NotImplementedError("Prediction is not yet supported on TPUs.")
            return tf.estimator.EstimatorSpec(
                tf.estimator.ModeKeys.PREDICT,
                predictions=logits,
                export_outputs={"translate": tf.estimator.export.PredictOutput(logits)},
            )
        logits, loss = translation_loss(tf, inputs, targets, params)
        if mode == tf.estimator.ModeKeys.EVAL:

            def metric_fn(logits, labels):
                return get_eval_metrics(tf, logits, labels, params=params)

            return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
                mode=mode,
                loss=loss,
                predictions={"predictions": logits},
                eval_metrics=(metric_fn, [logits, labels]),
            )
        train_op, metric_dict = get_train_op_and_metrics(tf, loss, params)
        metric_dict["minibatch_loss"] = loss
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
            mode=mode,
            loss=loss,
            train_op=train_op,
            host_call=construct_scalar_host_call(
                tf, metric_dict=metric_dict, model_dir=params["model_dir"], prefix="training/"
            ),
        )


@program
def transformer_tpu_estimator(tf, workdir):
    """transformer_main.construct_estimator's TPUEstimator (use_tpu=False here), trained
    and evaluated in cycles; then the plain Estimator's predict of bare logits (one
    tensor, not a dict), by batch and by example, and its export."""
    train, test = _sequences(12, 1), _sequences(4, 2)
    model_dir = os.path.join(workdir, "transformer_model")
    params = dict(TRANSFORMER_PARAMS, use_tpu=True, model_dir=model_dir)
    SEEN_PARAMS.clear()
    run_config = tf.compat.v1.estimator.tpu.RunConfig(
        model_dir=model_dir,
        tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=3, num_shards=1),
    )
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn=transformer_tpu_model_fn,
        use_tpu=False,
        train_batch_size=4,
        eval_batch_size=4,
        params={key: value for key, value in params.items() if key != "batch_size"},
        config=run_config,
    )

    def train_input_fn(params):
        return tf.data.Dataset.from_tensor_slices(train).batch(params["batch_size"]).repeat()

    def eval_input_fn(params):
        return tf.data.Dataset.from_tensor_slices(test).batch(params["batch_size"])

    results = []
    with _info_lines() as lines:
        for _ in range(2):
            estimator.train(train_input_fn, steps=3)
            results.append(estimator.evaluate(eval_input_fn, steps=1))
    v1 = tf.compat.v1
    v1.summary.FileWriterCache.clear()
    plain = tf.estimator.Estimator(
        transformer_tpu_model_fn, model_dir=model_dir, params=dict(params, use_tpu=False)
    )
    predict_fn = lambda: tf.data.Dataset.from_tensor_slices(test[0]).batch(4)  # noqa: E731
    batches = list(plain.predict(predict_fn, yield_single_examples=False))
    singles = list(plain.predict(predict_fn))
    on_tpu_estimator = _raised(lambda: estimator.predict(lambda params: predict_fn()))

    def serving_input_fn():
        features = v1.placeholder(dtype=tf.int64, shape=[None, None], name="input_tensor")
        return tf.estimator.export.TensorServingInputReceiver(features, features)

    export_dir = plain.export_saved_model(os.path.join(workdir, "export"), serving_input_fn)
    export_dir = export_dir.decode()
    return {
        "exact": {
            **_model_dir_record(tf, model_dir, "eval"),
            "result_keys": [sorted(r) for r in results],
            "loss_lines": _saved_dicts(lines),
            "params_seen": [list(keys) for keys in sorted(set(map(tuple, SEEN_PARAMS)))],
            "batch_shapes": [list(b.shape) for b in batches],
            "single_shapes": [[type(s).__name__, list(s.shape)] for s in singles],
            "tpu_predict": on_tpu_estimator,
            "signatures": signatures(export_dir),
            "export_listing": listing(export_dir),
        },
        "close": {
            **{f"eval{i}/{k}": float(v) for i, r in enumerate(results) for k, v in r.items()},
            "first_logits": singles[0][0].tolist(),
        },
    }
