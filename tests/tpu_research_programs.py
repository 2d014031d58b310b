"""Research code's TPUEstimator programs with `use_tpu=False`, as `tf_upgrade_v2` leaves
them, on tiny made-up data, where tests/tpu_sample_programs.py and the BERT, Google
Research, ResNet and official r1 families do not reach:

- `hparams_params`: tensor2tensor's, QANet's and amoeba_net's `params=hparams`, an
  HParams object (tf.contrib.training.HParams' interface, vendored as those projects
  do): TPUEstimator sets `batch_size` (and, for model_fn, `use_tpu`) on its copy with
  `set_hparam`/`add_hparam`, and input_fn and model_fn read `params.batch_size`; train,
  evaluate, predict, `est.params`, and the reserved-key refusal of an HParams;
- `run_config_attributes`: tensor2tensor's `create_run_config`, which sets its own
  attributes on the TPU RunConfig (`config.data_parallelism`, `config.t2t_device_info`,
  `config.use_tpu`) and reads them in model_fn and input_fn from the `config`
  TPUEstimator passes, and from `est.config`;
- `dcgan_two_optimizers`: tensorflow/tpu `models/experimental/dcgan` (`dcgan_main.py`,
  `mnist_model.py`, `mnist_input.py`): a generator and a discriminator of tf.compat.v1
  layers under `AUTO_REUSE` scopes with batch norm, two Adam optimizers over
  `GLOBAL_VARIABLES` of each scope under UPDATE_OPS, the global step advanced by its own
  `assign_add` in a `tf.group`, an input_fn that is a class instance returning a
  one-shot iterator's tensors, eval_metrics over per-example losses, a second
  TPUEstimator on the same RunConfig with only `predict_batch_size` for its images, and
  its loop on `estimator._load_global_step_from_checkpoint_dir`;
- `bigbird_host_call`: google-research/bigbird's `run_classifier.py` and
  `utils.add_scalars_to_summary`: `params=FLAGS.flag_values_dict()`, a Keras layer in
  model_fn, a host_call whose tensors are a dict (its fn takes `**kwargs`) and which
  reads the global step inside (unordered with the train op's increment, so its
  summaries' steps are left out), eval_metrics given a dict of tensors, `export_to_tpu`
  from its flag;
- `electra_finetune`: google-research/electra's `run_finetuning.py` (`ModelRunner`) and
  `training_utils.ETAHook`: a TPUConfig of PER_HOST_V2 and `tpu_job_name=None`,
  `save_checkpoints_secs=None`, per-scope learning rates and the global step advanced
  by the train op, ETAHook (a `tf.estimator.SessionRunHook` running the global step in
  `after_run`) in `training_hooks`, and evaluation by `predict(yield_single_examples=True)`
  of per-example outputs;
- `amoeba_net_ema_hooks`: tensorflow/tpu `models/official/amoeba_net` (inception's and
  mobilenet's mains are the same shape): EMA applied after the train op, its modes on a
  TPUEstimator and on its `use_tpu=False` branch's plain Estimator: evaluations over
  `checkpoints_iterator(timeout_fn=...)` by `checkpoint_path` with `LoadEMAHook` (a
  SessionRunHook restoring `ema.variables_to_restore()` in `after_create_session`), and
  `predict(hooks=[LoadEMAHook, SessionTimingHook], yield_single_examples=False)` taken
  by `itertools.islice`;
- `in_memory_evaluator`: `tf.estimator.experimental.InMemoryEvaluatorHook` given a
  TPUEstimator: evaluated with `eval_batch_size` every 2 steps while training. Its
  `calls` (input_fn's and model_fn's calls, once each: 2.15 built the evaluation graph
  once, in the hook's `begin()`; the lines) are compared by a test of their own;
- `keras_layers_from_a_checkpoint`: a research model of Keras layers and a Keras optimizer
  on a plain Estimator whose encoder starts from pre-trained weights by
  `init_from_checkpoint` given the layer's variables (BERT's `init_checkpoint` in a
  Keras-layer model): features predicted and the pre-trained model evaluated in a fresh
  model_dir before fine-tuning, then fine-tuned.

Hand edits a user makes: data are made-up arrays; weights start from fixed numbers; the
DCGAN's `tf.random_normal` noise is a seeded array in its dataset; ETAHook's times are
left out of its lines.

`program(tf, workdir)` returns {"exact": ..., "close": ...} (and `loose`, for the DCGAN,
whose Adam steps on two nets magnify the releases' convolution rounding), compared by
`tests/test_tpu_research.py` with what `tests/tf215/record_family.py
tpu_research_programs` recorded under tf.estimator 2.15
(`tests/data/tf215/tpu_research.json`).
"""

import glob
import itertools
import os
import re

import numpy as np

from tests.program_registry import registry
from tests.tpu_sample_programs import _checkpoint_variables, _fixed, info_lines
from tests.tutorial_programs import DATA_DIR, error_of, event_tags, listing

RECORDED = os.path.join(DATA_DIR, "tpu_research.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator


def _xy(n, seed):
    x = _fixed([n, 3], seed, 1.0)
    return x, (x.sum(1) > 0).astype(np.int32)


def _dense(tf, inputs, units, seed, **kwargs):
    v1 = tf.compat.v1
    init = v1.constant_initializer(_fixed([int(inputs.shape[-1]), units], seed))
    return v1.layers.dense(inputs, units, kernel_initializer=init, **kwargs)


# ------------------------------------------------------------------ tensor2tensor
class HParams:
    """tf.contrib.training.HParams' interface, as research code vendors it."""

    def __init__(self, **kwargs):
        self._hparam_types = {}
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        self._hparam_types[name] = type(value)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        setattr(self, name, value)

    def values(self):
        return {name: getattr(self, name) for name in self._hparam_types}

    def __contains__(self, key):
        return key in self._hparam_types

    def __repr__(self):
        return f"HParams({sorted(self.values().items())})"


def hparams_model_fn(tf, seen):
    v1 = tf.compat.v1
    tpu = v1.estimator.tpu

    def metric_fn(labels, logits):
        return {"acc": v1.metrics.accuracy(labels, tf.argmax(logits, 1))}

    def model_fn(features, labels, mode, params):
        seen.append(["model_fn", mode, type(params).__name__, repr(params)])
        logits = _dense(tf, features["x"], 2, seed=2)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tpu.TPUEstimatorSpec(mode, predictions={"probabilities": tf.nn.softmax(logits)})
        loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
        optimizer = v1.train.GradientDescentOptimizer(params.learning_rate)
        train_op = optimizer.minimize(loss, v1.train.get_global_step())
        return tpu.TPUEstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, logits])
        )

    return model_fn


@program
def hparams_params(tf, workdir):
    """TPUEstimator(params=an HParams): what input_fn and model_fn get, what it trains."""
    tpu = tf.compat.v1.estimator.tpu
    seen = []
    x, y = _xy(12, 1)

    def input_fn(params):
        seen.append(["input_fn", type(params).__name__, params.batch_size, params.learning_rate])
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return dataset.repeat(2).batch(params.batch_size, drop_remainder=True)

    config = tpu.RunConfig(
        model_dir=os.path.join(workdir, "model"), tpu_config=tpu.TPUConfig(iterations_per_loop=2)
    )
    hparams = HParams(learning_rate=0.5, hidden_size=3)
    model_fn = hparams_model_fn(tf, seen)
    with info_lines() as lines:
        est = tpu.TPUEstimator(
            model_fn=model_fn,
            config=config,
            use_tpu=False,
            params=hparams,
            train_batch_size=4,
            eval_batch_size=4,
            predict_batch_size=4,
        )
        est.train(input_fn, max_steps=3)
        result = est.evaluate(input_fn, steps=2)
        predictions = list(est.predict(input_fn))
        reserved = error_of(
            lambda: tpu.TPUEstimator(
                model_fn=model_fn, config=config, use_tpu=False, params=HParams(batch_size=3)
            )
        )
    return {
        "exact": {
            "seen": seen,
            "params": [repr(est.params), repr(hparams)],
            "evaluate_keys": sorted(result),
            "predictions": len(predictions),
            "reserved": reserved,
            "lines": lines,
        },
        "close": {
            "evaluate": {k: float(v) for k, v in result.items()},
            "probabilities": np.ravel([p["probabilities"] for p in predictions[:3]]).tolist(),
        },
    }


@program
def run_config_attributes(tf, workdir):
    """Attributes tensor2tensor sets on its TPU RunConfig, as model_fn, input_fn and
    `est.config` see them."""
    v1 = tf.compat.v1
    tpu = v1.estimator.tpu
    seen = []
    x, y = _xy(8, 1)

    def attributes(config):
        return [getattr(config, name, "<missing>") for name in ("data_parallelism", "use_tpu")]

    def input_fn(params, config):
        seen.append(["input_fn", *attributes(config)])
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return dataset.repeat().batch(params["batch_size"])

    def model_fn(features, labels, mode, params, config):
        seen.append(["model_fn", mode, *attributes(config), config.t2t_device_info])
        logits = _dense(tf, features["x"], 2, seed=2)
        loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
        optimizer = v1.train.GradientDescentOptimizer(0.1)
        train_op = optimizer.minimize(loss, v1.train.get_global_step())
        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    pipeline = tpu.InputPipelineConfig.PER_HOST_V2
    config = tpu.RunConfig(
        model_dir=os.path.join(workdir, "model"),
        tpu_config=tpu.TPUConfig(
            iterations_per_loop=2, num_shards=1, per_host_input_for_training=pipeline
        ),
    )
    config.data_parallelism = ["/job:localhost/device:CPU:0"]
    config.t2t_device_info = {"num_async_replicas": 1}
    config.use_tpu = False
    with info_lines() as lines:
        est = tpu.TPUEstimator(
            model_fn=model_fn, config=config, use_tpu=False, train_batch_size=4, params={}
        )
        est.train(input_fn, max_steps=2)
    return {
        "exact": {
            "seen": seen,
            "est_config": [*attributes(est.config), est.config.t2t_device_info],
            "replaced": attributes(config.replace(save_summary_steps=5)),
            "lines": lines,
        },
        "close": {},
    }


# ------------------------------------------------------------------ dcgan
NOISE = 4


def _bn(tf, x, is_training, name):
    return tf.compat.v1.layers.batch_normalization(
        x, momentum=0.9, epsilon=1e-5, training=is_training, name=name
    )


def _conv(tf, x, filters, seed, name, transpose=False):
    v1 = tf.compat.v1
    shape = [4, 4, filters, x.shape[-1]] if transpose else [4, 4, x.shape[-1], filters]
    layer = v1.layers.conv2d_transpose if transpose else v1.layers.conv2d
    init = v1.constant_initializer(_fixed(shape, seed))
    return layer(x, filters, [4, 4], [2, 2], padding="same", kernel_initializer=init, name=name)


def discriminator(tf, x, is_training=True, scope="Discriminator"):
    v1 = tf.compat.v1
    with v1.variable_scope(scope, reuse=v1.AUTO_REUSE):
        x = tf.nn.leaky_relu(_conv(tf, x, 2, 11, "d_conv1"), alpha=0.2)
        x = _conv(tf, x, 4, 12, "d_conv2")
        x = tf.nn.leaky_relu(_bn(tf, x, is_training, "d_bn2"), alpha=0.2)
        x = tf.reshape(x, [-1, 2 * 2 * 4])
        return _dense(tf, x, 1, 13, name="d_fc4")


def generator(tf, x, is_training=True, scope="Generator"):
    v1 = tf.compat.v1
    with v1.variable_scope(scope, reuse=v1.AUTO_REUSE):
        x = tf.nn.relu(_bn(tf, _dense(tf, x, 16, 21, name="g_fc2"), is_training, "g_bn2"))
        x = tf.reshape(x, [-1, 2, 2, 4])
        x = _conv(tf, x, 2, 22, "g_dconv3", transpose=True)
        x = tf.nn.relu(_bn(tf, x, is_training, "g_bn3"))
        return tf.tanh(_conv(tf, x, 1, 23, "g_dconv4", transpose=True))


def dcgan_losses(tf, features):
    """(d_loss, g_loss) per example, as dcgan_main's model_fn."""
    generated_images = generator(tf, features["random_noise"])
    d_on_data_logits = tf.squeeze(discriminator(tf, features["real_images"]))
    d_on_g_logits = tf.squeeze(discriminator(tf, generated_images))
    cross_entropy = tf.nn.sigmoid_cross_entropy_with_logits
    d_loss = cross_entropy(
        labels=tf.ones_like(d_on_data_logits), logits=d_on_data_logits
    ) + cross_entropy(labels=tf.zeros_like(d_on_g_logits), logits=d_on_g_logits)
    g_loss = cross_entropy(labels=tf.ones_like(d_on_g_logits), logits=d_on_g_logits)
    return d_loss, g_loss


def dcgan_train_spec(tf, mode, d_loss, g_loss):
    v1 = tf.compat.v1
    d_loss, g_loss = tf.reduce_mean(d_loss), tf.reduce_mean(g_loss)
    d_optimizer = v1.train.AdamOptimizer(learning_rate=0.01, beta1=0.5)
    g_optimizer = v1.train.AdamOptimizer(learning_rate=0.01, beta1=0.5)
    with tf.control_dependencies(v1.get_collection(v1.GraphKeys.UPDATE_OPS)):
        global_variables = v1.GraphKeys.GLOBAL_VARIABLES
        d_step = d_optimizer.minimize(
            d_loss, var_list=v1.get_collection(global_variables, scope="Discriminator")
        )
        g_step = g_optimizer.minimize(
            g_loss, var_list=v1.get_collection(global_variables, scope="Generator")
        )
        increment_step = v1.assign_add(v1.train.get_or_create_global_step(), 1)
        joint_op = tf.group([d_step, g_step, increment_step])
        return v1.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=g_loss, train_op=joint_op)


def dcgan_model_fn(tf):
    v1 = tf.compat.v1
    tpu = v1.estimator.tpu

    def eval_metric_fn(d_loss, g_loss):
        return {
            "discriminator_loss": v1.metrics.mean(d_loss),
            "generator_loss": v1.metrics.mean(g_loss),
        }

    def model_fn(features, labels, mode, params):
        del labels
        if mode == tf.estimator.ModeKeys.PREDICT:
            images = generator(tf, features["random_noise"], is_training=False)
            return tpu.TPUEstimatorSpec(mode=mode, predictions={"generated_images": images})
        d_loss, g_loss = dcgan_losses(tf, features)
        if mode == tf.estimator.ModeKeys.TRAIN:
            return dcgan_train_spec(tf, mode, d_loss, g_loss)
        return tpu.TPUEstimatorSpec(
            mode=mode, loss=tf.reduce_mean(g_loss), eval_metrics=(eval_metric_fn, [d_loss, g_loss])
        )

    return model_fn


class InputFunction:
    """mnist_input.InputFunction: a callable of params; its noise a seeded array here."""

    def __init__(self, tf, is_training, images):
        self.tf, self.is_training, self.images = tf, is_training, images

    def __call__(self, params):
        tf = self.tf
        batch_size = params["batch_size"]
        noise = np.random.RandomState(5 if self.is_training else 6).normal(
            size=(len(self.images), NOISE)
        )
        dataset = tf.data.Dataset.from_tensor_slices((self.images, noise.astype(np.float32)))
        if self.is_training:
            dataset = dataset.repeat()
        dataset = dataset.prefetch(batch_size).batch(batch_size, drop_remainder=True)
        images, random_noise = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        labels = tf.zeros([batch_size], tf.int32)
        return {"real_images": images, "random_noise": random_noise}, labels


def noise_input_fn_builder(tf):
    def noise_input_fn(params):
        np.random.seed(0)
        noise_dataset = tf.data.Dataset.from_tensors(
            tf.constant(np.random.randn(params["batch_size"], NOISE), dtype=tf.float32)
        )
        noise = tf.compat.v1.data.make_one_shot_iterator(noise_dataset).get_next()
        return {"random_noise": noise}, None

    return noise_input_fn


@program
def dcgan_two_optimizers(tf, workdir):
    """dcgan_main's main: train to the next eval step, evaluate, generate, repeated."""
    from tensorflow.python.estimator import estimator

    tpu = tf.compat.v1.estimator.tpu
    model_dir = os.path.join(workdir, "dcgan")
    images = np.tanh(_fixed([24, 8, 8, 1], 3, 1.0))
    config = tpu.RunConfig(
        model_dir=model_dir, tpu_config=tpu.TPUConfig(num_shards=None, iterations_per_loop=2)
    )
    model_fn = dcgan_model_fn(tf)
    with info_lines() as lines:
        est = tpu.TPUEstimator(
            model_fn=model_fn, use_tpu=False, config=config, train_batch_size=4, eval_batch_size=4
        )
        cpu_est = tpu.TPUEstimator(
            model_fn=model_fn, use_tpu=False, config=config, predict_batch_size=10
        )
        current_step = int(estimator._load_global_step_from_checkpoint_dir(model_dir))
        steps, metrics, generated = [current_step], [], []
        while current_step < 6:
            current_step = min(current_step + 3, 6)
            est.train(input_fn=InputFunction(tf, True, images[:16]), max_steps=current_step)
            result = est.evaluate(input_fn=InputFunction(tf, False, images[16:]), steps=2)
            metrics.append({k: float(v) for k, v in sorted(result.items())})
            rows = list(cpu_est.predict(input_fn=noise_input_fn_builder(tf)))
            generated.append(np.concatenate([p["generated_images"] for p in rows]))
            steps.append(int(estimator._load_global_step_from_checkpoint_dir(model_dir)))
    return {
        "exact": {
            "steps": steps,
            "variables": _checkpoint_variables(tf, model_dir),
            "listing": listing(model_dir),
            "tags": event_tags(model_dir),
            "eval_tags": event_tags(os.path.join(model_dir, "eval")),
            "generated_shape": [list(g.shape) for g in generated],
            "evaluate_keys": [sorted(m) for m in metrics],
            "lines": lines,
        },
        "close": {},
        "loose": {
            "metrics": {f"{i}/{k}": v for i, m in enumerate(metrics) for k, v in m.items()},
            "generated": np.ravel([g[:2] for g in generated]).tolist(),
        },
    }


# ------------------------------------------------------------------ bigbird
def summary_values(tf, directory, kind="tensor"):
    """{tag: [values]} of the scalar summaries in `directory` (tf2's as `tensor`, tf1's
    as `simple_value`), in the order written. Their steps are left out: bigbird's
    host_call reads the global step unordered with the train op's increment (in one
    session run, under 2.15 as here)."""
    found = {}
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField(kind):
                    number = value.simple_value if kind == "simple_value" else None
                    if number is None:
                        number = tf.make_ndarray(value.tensor)
                    found.setdefault(value.tag, []).append(float(number))
    return found


def add_scalars_to_summary(tf, summary_dir, scalar_tensors_dict):
    """bigbird's utils.add_scalars_to_summary: a host_call of a dict of tensors."""
    scalar_tensors_dict = {k: tf.reshape(v, [1]) for k, v in scalar_tensors_dict.items()}

    def host_call_fn(**kwargs):
        writer = tf.summary.create_file_writer(summary_dir, max_queue=1000)
        always_record = tf.summary.record_if(True)
        with writer.as_default(), always_record:
            for name, scalar in kwargs.items():
                step = tf.compat.v1.train.get_or_create_global_step()
                tf.summary.scalar(name, tf.reduce_mean(scalar), step)
            return tf.compat.v1.summary.all_v2_summary_ops()

    return host_call_fn, scalar_tensors_dict


def bigbird_model_fn(tf):
    v1 = tf.compat.v1
    tpu = v1.estimator.tpu

    def metric_fn(loss_value, label_ids, logits):
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            "eval_accuracy": v1.metrics.accuracy(label_ids, predictions),
            "eval_loss": v1.metrics.mean(loss_value),
        }

    def model_fn(features, labels, mode, params):
        kernel = tf.keras.initializers.Constant(_fixed([3, 2], 2))
        dense = tf.keras.layers.Dense(2, kernel_initializer=kernel, name="classifier")
        logits = dense(features["x"])
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tpu.TPUEstimatorSpec(mode, predictions={"logits": logits})
        per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = tf.reduce_mean(per_example)
        eval_metrics = host_call = train_op = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            step = v1.train.get_or_create_global_step()
            lr = v1.train.polynomial_decay(params["learning_rate"], step, 10, 0.0)
            optimizer = v1.train.GradientDescentOptimizer(lr)
            train_op = optimizer.minimize(
                loss, global_step=step, var_list=dense.trainable_variables
            )
            scalars = {"learning_rate": lr, "loss": loss}
            host_call = add_scalars_to_summary(tf, params["output_dir"], scalars)
        else:
            tensors = {"loss_value": per_example, "label_ids": labels, "logits": logits}
            eval_metrics = (metric_fn, tensors)
        return tpu.TPUEstimatorSpec(
            mode=mode,
            loss=loss,
            train_op=train_op,
            eval_metrics=eval_metrics,
            host_call=host_call,
        )

    return model_fn


@program
def bigbird_host_call(tf, workdir):
    """run_classifier's estimator: trained, evaluated, predicted; its host_call's summaries."""
    tpu = tf.compat.v1.estimator.tpu
    output_dir = os.path.join(workdir, "out")
    flags = {"output_dir": output_dir, "learning_rate": 0.3, "use_tpu": False}
    x, y = _xy(16, 1)

    def input_fn_builder(training):
        def input_fn(params):
            dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
            dataset = dataset.repeat() if training else dataset
            return dataset.batch(params["batch_size"], drop_remainder=True)

        return input_fn

    pipeline = tpu.InputPipelineConfig.PER_HOST_V2
    tpu_config = tpu.TPUConfig(
        iterations_per_loop=2, num_shards=8, per_host_input_for_training=pipeline
    )
    run_config = tpu.RunConfig(
        model_dir=output_dir, save_checkpoints_steps=3, keep_checkpoint_max=2, tpu_config=tpu_config
    )
    with info_lines() as lines:
        estimator = tpu.TPUEstimator(
            use_tpu=flags["use_tpu"],
            model_fn=bigbird_model_fn(tf),
            config=run_config,
            train_batch_size=4,
            eval_batch_size=4,
            predict_batch_size=4,
            export_to_tpu=flags["use_tpu"],
            params=flags,
        )
        estimator.train(input_fn_builder(True), max_steps=5)
        result = estimator.evaluate(input_fn_builder(False), steps=2)
        predictions = list(estimator.predict(input_fn_builder(False)))
    return {
        "exact": {
            "lines": lines,
            "listing": listing(output_dir),
            "variables": _checkpoint_variables(tf, output_dir),
            "evaluate_keys": sorted(result),
            "predictions": len(predictions),
            "tags": event_tags(output_dir),
            "eval_tags": event_tags(os.path.join(output_dir, "eval")),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in result.items()},
            "summaries": summary_values(tf, output_dir),
            "logits": np.ravel([p["logits"] for p in predictions[:3]]).tolist(),
        },
    }


# ------------------------------------------------------------------ electra
def eta_hook_class(tf, logged):
    """training_utils.ETAHook, its times left out of the lines it logs (into `logged`)."""

    class ETAHook(tf.estimator.SessionRunHook):
        def __init__(self, to_log, n_steps, iterations_per_loop, on_tpu, is_training=True):
            self._to_log, self._n_steps = to_log, n_steps
            self._iterations_per_loop, self._on_tpu = iterations_per_loop, on_tpu
            self._is_training = is_training
            self._steps_run_so_far = 0
            self._global_step = self._global_step_tensor = None

        def begin(self):
            self._global_step_tensor = tf.compat.v1.train.get_or_create_global_step()

        def before_run(self, run_context):
            return tf.estimator.SessionRunArgs(self._to_log)

        def after_run(self, run_context, run_values):
            self._global_step = run_context.session.run(self._global_step_tensor)
            self._steps_run_so_far += self._iterations_per_loop if self._on_tpu else 1
            self.log(run_values)

        def end(self, session):
            self._global_step = session.run(self._global_step_tensor)
            self.log()

        def log(self, run_values=None):
            step = self._global_step if self._is_training else self._steps_run_so_far
            msg = f"{step}/{self._n_steps} = {100.0 * step / self._n_steps:.1f}%"
            for tag, value in (run_values.results if run_values else {}).items():
                msg += f" - {tag}: {value:.4f}"
            logged.append(msg)

    return ETAHook


def electra_model_fn(tf, eta_hook):
    v1 = tf.compat.v1
    tpu = v1.estimator.tpu

    def train_op_of(loss):
        """Per-scope learning rates (layer-wise decay's shape), the step advanced by hand."""
        step = v1.train.get_or_create_global_step()
        rates = {"electra": 0.05, "task_specific": 0.5}
        grads_and_vars = v1.train.GradientDescentOptimizer(1.0).compute_gradients(loss)
        updates = [v.assign_sub(rates[v.name.split("/")[0]] * g) for g, v in grads_and_vars]
        return tf.group(tf.group(*updates), [step.assign(step + 1)])

    def model_fn(features, labels, mode, params):
        with v1.variable_scope("electra"):
            hidden = _dense(tf, features["x"], 4, seed=2, activation=tf.tanh, name="encoder")
        logits = _dense(tf, hidden, 2, seed=3, name="task_specific/cls")
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=features["label_ids"], logits=logits
        )
        loss = tf.reduce_mean(losses)
        if mode == tf.estimator.ModeKeys.TRAIN:
            hook = eta_hook({"loss": loss}, 5, 2, False)
            return tpu.TPUEstimatorSpec(
                mode=mode, loss=loss, train_op=train_op_of(loss), training_hooks=[hook]
            )
        outputs = {
            "task_id": features["task_id"],
            "eid": features["eid"],
            "logits": logits,
            "predictions": tf.argmax(logits, -1),
            "loss": losses,
            "label_ids": features["label_ids"],
        }
        return tpu.TPUEstimatorSpec(mode=mode, predictions=outputs)

    return model_fn


@program
def electra_finetune(tf, workdir):
    """ModelRunner: train, then evaluate a task by predict's per-example outputs."""
    tpu = tf.compat.v1.estimator.tpu
    logged = []
    x, y = _xy(12, 1)
    examples = {"x": x, "label_ids": y, "task_id": np.zeros(12, np.int32), "eid": np.arange(12)}

    def input_fn_builder(training):
        def input_fn(params):
            dataset = tf.data.Dataset.from_tensor_slices(examples)
            dataset = dataset.repeat() if training else dataset
            return dataset.batch(params["batch_size"], drop_remainder=training)

        return input_fn

    tpu_config = tpu.TPUConfig(
        iterations_per_loop=2,
        num_shards=8,
        per_host_input_for_training=tpu.InputPipelineConfig.PER_HOST_V2,
        tpu_job_name=None,
    )
    model_dir = os.path.join(workdir, "model")
    run_config = tpu.RunConfig(
        cluster=None,
        model_dir=model_dir,
        save_checkpoints_steps=1000000,
        save_checkpoints_secs=None,
        tpu_config=tpu_config,
    )
    with info_lines() as lines:
        estimator = tpu.TPUEstimator(
            use_tpu=False,
            model_fn=electra_model_fn(tf, eta_hook_class(tf, logged)),
            config=run_config,
            train_batch_size=4,
            eval_batch_size=4,
            predict_batch_size=4,
        )
        estimator.train(input_fn=input_fn_builder(True), max_steps=5)
        rows = list(estimator.predict(input_fn_builder(False), yield_single_examples=True))
    return {
        "exact": {
            "lines": lines,
            "eta": [line.split(" - ")[0] for line in logged],
            "listing": listing(model_dir),
            "variables": _checkpoint_variables(tf, model_dir),
            "keys": sorted(rows[0]),
            "eids": [int(row["eid"]) for row in rows],
        },
        "close": {
            "eta_loss": [float(line.split(": ")[-1]) for line in logged if " - " in line],
            "accuracy": float(np.mean([row["predictions"] == row["label_ids"] for row in rows])),
            "loss": float(np.mean([row["loss"] for row in rows])),
        },
    }


# ------------------------------------------------------------------ amoeba_net's EMA
EMA_DECAY = 0.5


def ema_hook_classes(tf, logged):
    """amoeba_net's (and inception's) LoadEMAHook, its contrib `assign_from_checkpoint_fn`
    a Saver's restore as users write it after tf_upgrade_v2, and SessionTimingHook."""
    v1 = tf.compat.v1

    class LoadEMAHook(v1.train.SessionRunHook):
        def __init__(self, model_dir):
            super().__init__()
            self._model_dir = model_dir

        def begin(self):
            ema = v1.train.ExponentialMovingAverage(EMA_DECAY)
            variables_to_restore = ema.variables_to_restore()
            saver = v1.train.Saver(variables_to_restore)
            checkpoint = v1.train.latest_checkpoint(self._model_dir)
            self._load_ema = lambda session: saver.restore(session, checkpoint)
            logged.append(sorted(variables_to_restore))

        def after_create_session(self, session, coord):
            v1.logging.info("Reloading EMA...")
            self._load_ema(session)

    class SessionTimingHook(v1.train.SessionRunHook):
        def __init__(self):
            self._before_runs, self._after_runs = [], []

        def before_run(self, run_context):
            self._before_runs.append(0)

        def after_run(self, run_context, run_values):
            self._after_runs.append(0)

    return LoadEMAHook, SessionTimingHook


def ema_model_fn(tf, tpu_spec):
    """amoeba_net_model's shape: EMA applied after the train op; a TPUEstimatorSpec on
    TPUEstimator, an EstimatorSpec on its use_tpu=False branch's plain Estimator."""
    v1 = tf.compat.v1

    def spec(mode, metric_fn, metric_args, **kwargs):
        if tpu_spec:
            metrics = (metric_fn, metric_args) if mode == "eval" else None
            return v1.estimator.tpu.TPUEstimatorSpec(mode, eval_metrics=metrics, **kwargs)
        metric_ops = metric_fn(*metric_args) if mode == "eval" else None
        return tf.estimator.EstimatorSpec(mode, eval_metric_ops=metric_ops, **kwargs)

    def metric_fn(labels, logits):
        return {"accuracy": v1.metrics.accuracy(labels, tf.argmax(logits, 1))}

    def model_fn(features, labels, mode, params):
        hidden = _dense(tf, features, 4, seed=2, activation=tf.nn.relu, name="hidden")
        logits = _dense(tf, hidden, 2, seed=3, name="logits")
        if mode == tf.estimator.ModeKeys.PREDICT:
            probabilities = tf.nn.softmax(logits)
            return spec(mode, None, None, predictions={"probabilities": probabilities})
        loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op, step = None, v1.train.get_global_step()
        if mode == tf.estimator.ModeKeys.TRAIN:
            train_op = v1.train.GradientDescentOptimizer(0.5).minimize(loss, step)
            ema = v1.train.ExponentialMovingAverage(decay=EMA_DECAY, num_updates=step)
            averaged = v1.trainable_variables() + v1.moving_average_variables()
            with tf.control_dependencies([train_op]), tf.name_scope("moving_average"):
                train_op = ema.apply(averaged)
        return spec(mode, metric_fn, [labels, logits], loss=loss, train_op=train_op)

    return model_fn


def ema_estimator(tf, kind, model_dir):
    tpu = tf.compat.v1.estimator.tpu
    if kind == "plain":
        config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=3)
        return tf.estimator.Estimator(ema_model_fn(tf, False), config=config, params={})
    config = tpu.RunConfig(
        model_dir=model_dir,
        save_checkpoints_steps=3,
        tpu_config=tpu.TPUConfig(iterations_per_loop=3),
    )
    return tpu.TPUEstimator(
        model_fn=ema_model_fn(tf, True),
        use_tpu=False,
        config=config,
        train_batch_size=4,
        eval_batch_size=4,
        predict_batch_size=4,
        params={},
    )


@program
def amoeba_net_ema_hooks(tf, workdir):
    """amoeba_net's modes: train, eval over checkpoints_iterator(timeout_fn) with
    LoadEMAHook, predict with hooks and yield_single_examples=False taken by islice."""
    v1 = tf.compat.v1
    logged, found = [], {}
    load_ema_hook, timing_hook = ema_hook_classes(tf, logged)
    x, y = _xy(16, 1)

    def input_fn_builder(training):
        def input_fn(params):
            dataset = tf.data.Dataset.from_tensor_slices((x, y))
            dataset = dataset.repeat() if training else dataset
            return dataset.batch(params.get("batch_size", 4), drop_remainder=True)

        return input_fn

    def evaluations(est, model_dir):
        checkpoints = v1.train.checkpoints_iterator(model_dir, timeout=0, timeout_fn=lambda: True)
        for checkpoint in checkpoints:
            hooks = [load_ema_hook(model_dir)]
            result = est.evaluate(input_fn_builder(False), 2, hooks, checkpoint_path=checkpoint)
            yield {k: float(v) for k, v in result.items()}

    with info_lines() as lines:
        for kind in ("tpu", "plain"):
            model_dir = os.path.join(workdir, kind)
            est = ema_estimator(tf, kind, model_dir)
            est.train(input_fn_builder(True), steps=6)
            without_ema = est.evaluate(input_fn_builder(False), steps=2)
            timing = timing_hook()
            hooks = [load_ema_hook(model_dir), timing]
            rows = est.predict(input_fn_builder(False), hooks=hooks, yield_single_examples=False)
            batches = [row["probabilities"] for row in itertools.islice(rows, 3)]
            found[kind] = {
                "without_ema": {k: float(v) for k, v in without_ema.items()},
                "with_ema": {str(i): r for i, r in enumerate(evaluations(est, model_dir))},
                "probabilities": np.ravel(batches).tolist(),
                "runs": [len(timing._before_runs), len(timing._after_runs)],
            }
    return {
        "exact": {
            "restored": logged,
            "shapes": {kind: len(found[kind]["probabilities"]) for kind in found},
            "runs": {kind: found[kind].pop("runs") for kind in found},
            "lines": lines,
        },
        "close": found,
    }


# ------------------------------------------------------------------ in-memory evaluation
@program
def in_memory_evaluator(tf, workdir):
    """tf.estimator.experimental.InMemoryEvaluatorHook given a TPUEstimator (evaluated
    with eval_batch_size in memory every 2 steps while training)."""
    v1 = tf.compat.v1
    tpu = v1.estimator.tpu
    x, y = _xy(16, 1)
    calls = []

    def input_fn_builder(training):
        def input_fn(params):
            calls.append(["input_fn", training, params["batch_size"]])
            dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
            dataset = dataset.repeat() if training else dataset
            return dataset.batch(params["batch_size"], drop_remainder=True)

        return input_fn

    def model_fn(features, labels, mode, params):
        calls.append(["model_fn", mode, params["batch_size"]])
        model = hparams_model_fn(tf, [])
        return model(features, labels, mode, HParams(learning_rate=0.5))

    model_dir = os.path.join(workdir, "model")
    config = tpu.RunConfig(
        model_dir=model_dir,
        save_checkpoints_steps=2,
        tpu_config=tpu.TPUConfig(iterations_per_loop=2),
    )
    with info_lines() as lines:
        est = tpu.TPUEstimator(
            model_fn=model_fn,
            use_tpu=False,
            config=config,
            train_batch_size=4,
            eval_batch_size=2,
            params={},
        )
        evaluator = tf.estimator.experimental.InMemoryEvaluatorHook(
            est, input_fn_builder(False), steps=2, every_n_iter=2
        )
        est.train(input_fn_builder(True), max_steps=4, hooks=[evaluator])
    eval_dir = os.path.join(model_dir, "eval")
    return {
        "exact": {
            "listing": listing(model_dir),
            "eval_tags": event_tags(eval_dir),
        },
        "close": {"evaluations": summary_values(tf, eval_dir, "simple_value")},
        "calls": {"calls": calls, "lines": lines},
    }


# ------------------------------------------------------------------ keras layers from a checkpoint
def write_encoder_checkpoint(tf, path):
    """A pre-trained encoder's checkpoint of fixed numbers (`enc/kernel`, `enc/bias`)."""
    v1 = tf.compat.v1
    with tf.Graph().as_default():
        v1.get_variable("enc/kernel", initializer=tf.constant(_fixed([3, 2], 7)))
        v1.get_variable("enc/bias", initializer=tf.constant([0.5, -0.5]))
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            v1.train.Saver().save(session, path)


def keras_encoder_model_fn(tf, init_checkpoint, calls):
    """A Keras-layer model_fn (a Keras optimizer, no TF1 one) whose encoder starts from a
    pre-trained checkpoint by init_from_checkpoint given the layer's variables."""
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        layer = tf.keras.layers.Dense(2, name="enc")
        logits = layer(features["x"])
        assignment_map = {"enc/kernel": layer.kernel, "enc/bias": layer.bias}
        v1.train.init_from_checkpoint(init_checkpoint, assignment_map)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
        per_example = tf.keras.losses.sparse_categorical_crossentropy(
            labels, logits, from_logits=True
        )
        loss = tf.reduce_mean(per_example)
        train_op = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = tf.keras.optimizers.SGD(0.1)
            grads = tf.gradients(loss, layer.trainable_weights)
            step = v1.train.get_or_create_global_step()
            train_op = tf.group(
                optimizer.apply_gradients(zip(grads, layer.trainable_weights, strict=True)),
                step.assign_add(1),
            )
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


@program
def keras_layers_from_a_checkpoint(tf, workdir):
    """Features extracted (predict) and the pre-trained model evaluated before any
    fine-tuning, in a fresh model_dir, then fine-tuned and evaluated."""
    x, y = _xy(16, 1)
    init_checkpoint = os.path.join(workdir, "pretrained", "model.ckpt")
    write_encoder_checkpoint(tf, init_checkpoint)
    calls = []

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)

    model_dir = os.path.join(workdir, "model")
    est = tf.estimator.Estimator(
        keras_encoder_model_fn(tf, init_checkpoint, calls), model_dir=model_dir
    )
    with info_lines() as lines:
        features = next(est.predict(input_fn))["logits"]
        before = est.evaluate(input_fn, steps=1)
        est.train(input_fn, max_steps=2)
        after = est.evaluate(input_fn, steps=1)
    return {
        "exact": {
            "calls": calls,
            # (The step of `loss = ..., step = N` is read unordered with the train op's
            # assign_add, in its session run, under 2.15 as here: 0 or 1.)
            "lines": [re.sub(r"step = \d+$", "step = <n>", line) for line in lines],
            "variables": sorted(est.get_variable_names()),
        },
        "close": {
            "features": np.ravel(features).tolist(),
            "before": {k: float(v) for k, v in before.items()},
            "after": {k: float(v) for k, v in after.items()},
            "kernel": np.ravel(est.get_variable_value("enc/kernel")).tolist(),
        },
    }
