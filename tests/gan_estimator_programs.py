"""TF-GAN's Estimators (tensorflow/gan, `tensorflow_gan/python/estimator/gan_estimator.py`,
`train.py`, `losses/`, `eval/summaries.py`) as its examples use them
(`examples/mnist_estimator`), after `tf_upgrade_v2`, on tiny made-up data. The library is
not installed on either side, so its code is written out here in its shape:

- `gan_estimator_sequential_hooks`: a `tf.estimator.Estimator` subclass whose model_fn
  builds the generator and the discriminator under `Generator` / `Discriminator` variable
  scopes (`tfgan.gan_model`, the discriminator reused on real data), Wasserstein losses with
  their summaries, `add_gan_model_summaries` (a histogram per variable, named by
  `var.name` with its `:0`), two TF1 Adam optimizers, `gan_train_ops` (tf-slim's
  `create_train_op`: an update barrier, `compute_gradients` over the scope's variables,
  `check_numerics`, the train op in `TRAIN_OP`; the global step's `assign_add` as the spec's
  train op) and `get_sequential_train_hooks(GANTrainSteps(1, 2))` (`RunTrainOpsHook`s that run
  the train ops in `before_run`); evaluate with the generator and discriminator losses'
  means and `get_eval_metric_ops_fn`'s; predict of the generated samples (a tensor);
- `gan_estimator_joint_hooks`: the same with `get_joint_train_hooks()` and a callable
  optimizer, trained twice (the second `train` resumes from the checkpoint);
- `tpu_gan_estimator_on_cpu`: `TPUGANEstimator(use_tpu=False)`, a TPUEstimator subclass
  whose train op runs the discriminator's then the generator's step (no hooks), its eval
  metrics as `eval_metrics=(metric_fn, tensors)`, predictions as `{'generated_data': ...}`;
- `conditional_gan_tuple_features_export`: a conditional GAN whose features are a tuple
  (noise, one-hot labels), predict from a one-shot iterator's `get_next()` with no
  labels, a dataset of 1-tuples refused, and an export of tuple features refused;
- `wgan_gp_image_summaries`: a WGAN-GP (the gradient penalty at seeded random interpolates,
  `tf.gradients` through the discriminator reused outside its name scope), RMSProp for the
  discriminator, TF-GAN's image summaries of real and generated data;
- `gan_train_and_evaluate_logging_hook`: `train_and_evaluate` with a LoggingTensorHook
  added to TF-GAN's hooks, then predict from a second GANEstimator with no checkpoint of
  its own, `warm_start_from` the first's generator, and its evaluation (2.15 warm-started
  both).

`program(tf, workdir)` returns `exact` parts (listings, variable names, keys, tags, log
lines: equal) and `close` values (a model of fixed initial values fed in file order: 1e-4).
`tests/test_gan_estimators.py` compares them with 2.15's recording
(`tests/tf215/record_family.py gan_estimator_programs`, into
`tests/data/tf215/gan_estimator.json`).
"""

import collections
import functools
import inspect
import os

import numpy as np

from tests.program_registry import registry
from tests.public_code_programs import _floats, _kept_lines
from tests.research_code_programs import _event_tags
from tests.tf1_fidelity_programs import _info_lines, _raised
from tests.tutorial_programs import listing

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "gan_estimator.json")
PROGRAMS, program = registry()

GANModel = collections.namedtuple(
    "GANModel",
    "generator_inputs generated_data generator_variables generator_scope generator_fn "
    "real_data discriminator_real_outputs discriminator_gen_outputs "
    "discriminator_variables discriminator_scope discriminator_fn",
)
GANLoss = collections.namedtuple("GANLoss", "generator_loss discriminator_loss")
GANTrainOps = collections.namedtuple(
    "GANTrainOps", "generator_train_op discriminator_train_op global_step_inc_op"
)
GANTrainSteps = collections.namedtuple(
    "GANTrainSteps", "generator_train_steps discriminator_train_steps"
)
_ONE_EACH = GANTrainSteps(1, 1)


# --- tensorflow_gan/python/train.py, in its shape ---


def _convert_tensor_or_l_or_d(tf, value):
    if isinstance(value, (list, tuple)):
        return [tf.convert_to_tensor(value=v) for v in value]
    if isinstance(value, dict):
        return {k: tf.convert_to_tensor(value=v) for k, v in value.items()}
    return tf.convert_to_tensor(value=value)


def _gan_model(tf, generator_fn, discriminator_fn, real_data, generator_inputs):
    v1 = tf.compat.v1
    with v1.variable_scope("Generator") as gen_scope:
        generator_inputs = _convert_tensor_or_l_or_d(tf, generator_inputs)
        generated_data = generator_fn(generator_inputs)
    with v1.variable_scope("Discriminator") as dis_scope:
        discriminator_gen_outputs = discriminator_fn(generated_data, generator_inputs)
    with v1.variable_scope(dis_scope, reuse=True):
        real_data = tf.convert_to_tensor(value=real_data)
        discriminator_real_outputs = discriminator_fn(real_data, generator_inputs)
    trainable = v1.GraphKeys.TRAINABLE_VARIABLES
    return GANModel(
        generator_inputs,
        generated_data,
        v1.get_collection(trainable, gen_scope.name + "/"),
        gen_scope,
        generator_fn,
        real_data,
        discriminator_real_outputs,
        discriminator_gen_outputs,
        v1.get_collection(trainable, dis_scope.name + "/"),
        dis_scope,
        discriminator_fn,
    )


def _create_train_op(tf, total_loss, optimizer, variables_to_train, update_ops):
    """tf-slim's `create_train_op` with TF-GAN's arguments (no global step)."""
    v1 = tf.compat.v1
    if update_ops:
        with tf.control_dependencies(update_ops):
            barrier = tf.no_op(name="update_barrier")
        with tf.control_dependencies([barrier]):
            total_loss = tf.identity(total_loss)
    grads = optimizer.compute_gradients(total_loss, variables_to_train)
    grad_updates = optimizer.apply_gradients(grads, global_step=None)
    with v1.name_scope("train_op"):
        total_loss = tf.debugging.check_numerics(total_loss, "LossTensor is inf or nan")
        with tf.control_dependencies([grad_updates]):
            train_op = tf.identity(total_loss)
    train_ops = v1.get_collection_ref(v1.GraphKeys.TRAIN_OP)
    if train_op not in train_ops:
        train_ops.append(train_op)
    return train_op


def _gan_train_ops(tf, model, loss, generator_optimizer, discriminator_optimizer):
    v1 = tf.compat.v1
    global_step = v1.train.get_or_create_global_step()
    global_step_inc = global_step.assign_add(1)
    all_updates = set(v1.get_collection(v1.GraphKeys.UPDATE_OPS))
    gen_updates = set(v1.get_collection(v1.GraphKeys.UPDATE_OPS, model.generator_scope.name))
    dis_updates = set(v1.get_collection(v1.GraphKeys.UPDATE_OPS, model.discriminator_scope.name))
    if all_updates - gen_updates - dis_updates:
        raise ValueError("There are unused update ops: %s" % (all_updates - gen_updates))
    with v1.name_scope("generator_train"):
        gen_train_op = _create_train_op(
            tf,
            loss.generator_loss,
            generator_optimizer,
            model.generator_variables,
            list(gen_updates),
        )
    with v1.name_scope("discriminator_train"):
        disc_train_op = _create_train_op(
            tf,
            loss.discriminator_loss,
            discriminator_optimizer,
            model.discriminator_variables,
            list(dis_updates),
        )
    return GANTrainOps(gen_train_op, disc_train_op, global_step_inc)


def _run_train_ops_hook(tf):
    class RunTrainOpsHook(tf.estimator.SessionRunHook):
        """Runs train ops in `before_run`, as TF-GAN's hook does."""

        def __init__(self, train_ops, train_steps):
            if not isinstance(train_ops, (list, tuple)):
                train_ops = [train_ops]
            self._train_ops = train_ops
            self._train_steps = train_steps

        def before_run(self, run_context):
            for _ in range(self._train_steps):
                run_context.session.run(self._train_ops)

    return RunTrainOpsHook


def get_sequential_train_hooks(tf, train_steps=_ONE_EACH):
    RunTrainOpsHook = _run_train_ops_hook(tf)

    def get_hooks(train_ops):
        generator_hook = RunTrainOpsHook(
            train_ops.generator_train_op, train_steps.generator_train_steps
        )
        discriminator_hook = RunTrainOpsHook(
            train_ops.discriminator_train_op, train_steps.discriminator_train_steps
        )
        return [generator_hook, discriminator_hook]

    return get_hooks


def get_joint_train_hooks(tf, train_steps=_ONE_EACH):
    RunTrainOpsHook = _run_train_ops_hook(tf)
    g_steps, d_steps = train_steps.generator_train_steps, train_steps.discriminator_train_steps
    num_d_and_g_steps = min(g_steps, d_steps)

    def get_hooks(train_ops):
        g_op, d_op = train_ops.generator_train_op, train_ops.discriminator_train_op
        joint_hook = RunTrainOpsHook([g_op, d_op], num_d_and_g_steps)
        g_hook = RunTrainOpsHook(g_op, g_steps - num_d_and_g_steps)
        d_hook = RunTrainOpsHook(d_op, d_steps - num_d_and_g_steps)
        return [joint_hook, g_hook, d_hook]

    return get_hooks


# --- tensorflow_gan/python/losses and eval/summaries.py, in their shape ---


def wasserstein_generator_loss(tf, gan_model, add_summaries=False):
    v1 = tf.compat.v1
    with v1.name_scope(None, "generator_wasserstein_loss") as scope:
        outputs = tf.cast(gan_model.discriminator_gen_outputs, tf.float32)
        loss = v1.losses.compute_weighted_loss(-outputs, 1.0, scope)
        if add_summaries:
            v1.summary.scalar("generator_wass_loss", loss)
    return loss


def wasserstein_discriminator_loss(tf, gan_model, add_summaries=False):
    v1 = tf.compat.v1
    with v1.name_scope(None, "discriminator_wasserstein_loss") as scope:
        real = tf.cast(gan_model.discriminator_real_outputs, tf.float32)
        gen = tf.cast(gan_model.discriminator_gen_outputs, tf.float32)
        loss_on_generated = v1.losses.compute_weighted_loss(gen, 1.0, scope, loss_collection=None)
        loss_on_real = v1.losses.compute_weighted_loss(real, 1.0, scope, loss_collection=None)
        loss = loss_on_generated - loss_on_real
        v1.losses.add_loss(loss, v1.GraphKeys.LOSSES)
        if add_summaries:
            v1.summary.scalar("discriminator_gen_wass_loss", loss_on_generated)
            v1.summary.scalar("discriminator_real_wass_loss", loss_on_real)
            v1.summary.scalar("discriminator_wass_loss", loss)
    return loss


def add_gan_model_summaries(tf, gan_model):
    v1 = tf.compat.v1
    with v1.name_scope("generator_variables"):
        for var in gan_model.generator_variables:
            v1.summary.histogram(var.name, var)
    with v1.name_scope("discriminator_variables"):
        for var in gan_model.discriminator_variables:
            v1.summary.histogram(var.name, var)


# --- tensorflow_gan/python/estimator/gan_estimator.py, in its shape ---


def _with_mode(fn, mode):
    if "mode" in inspect.signature(fn).parameters:
        return functools.partial(fn, mode=mode)
    return fn


def _eval_spec(tf, gan_model, gan_loss, get_eval_metric_ops_fn):
    v1 = tf.compat.v1
    scalar_loss = gan_loss.generator_loss + gan_loss.discriminator_loss
    with v1.name_scope(None, "metrics", [gan_loss.generator_loss, gan_loss.discriminator_loss]):
        eval_metric_ops = {
            "generator_loss": v1.metrics.mean(gan_loss.generator_loss),
            "discriminator_loss": v1.metrics.mean(gan_loss.discriminator_loss),
        }
        if get_eval_metric_ops_fn is not None:
            custom = get_eval_metric_ops_fn(gan_model)
            if not isinstance(custom, dict):
                raise TypeError(f"get_eval_metric_ops_fn must return a dict, received: {custom}")
            eval_metric_ops.update(custom)
    return tf.estimator.EstimatorSpec(
        mode=tf.estimator.ModeKeys.EVAL,
        predictions=gan_model.generated_data,
        loss=scalar_loss,
        eval_metric_ops=eval_metric_ops,
    )


def _train_spec(tf, gan_model, gan_loss, optimizers, get_hooks_fn):
    scalar_loss = gan_loss.generator_loss + gan_loss.discriminator_loss
    train_ops = _gan_train_ops(tf, gan_model, gan_loss, *optimizers)
    return tf.estimator.EstimatorSpec(
        loss=scalar_loss,
        mode=tf.estimator.ModeKeys.TRAIN,
        train_op=train_ops.global_step_inc_op,
        training_hooks=get_hooks_fn(train_ops),
    )


def _predict_spec(tf, generator_fn, features):
    with tf.compat.v1.variable_scope("Generator"):
        generated = generator_fn(_convert_tensor_or_l_or_d(tf, features))
    return tf.estimator.EstimatorSpec(mode=tf.estimator.ModeKeys.PREDICT, predictions=generated)


def gan_estimator(tf, **kw):
    """`tfgan.estimator.GANEstimator(...)`: a subclass of `tf.estimator.Estimator`."""

    class GANEstimator(tf.estimator.Estimator):
        def __init__(
            self,
            model_dir=None,
            generator_fn=None,
            discriminator_fn=None,
            generator_loss_fn=None,
            discriminator_loss_fn=None,
            generator_optimizer=None,
            discriminator_optimizer=None,
            get_hooks_fn=None,
            get_eval_metric_ops_fn=None,
            add_summaries=None,
            use_loss_summaries=True,
            config=None,
            params=None,
            warm_start_from=None,
        ):
            def _model_fn(features, labels, mode, params):
                gen_fn, dis_fn = _with_mode(generator_fn, mode), _with_mode(discriminator_fn, mode)
                if mode == tf.estimator.ModeKeys.PREDICT:
                    return _predict_spec(tf, gen_fn, features)
                gan_model = _gan_model(tf, gen_fn, dis_fn, labels, features)
                if add_summaries:
                    with tf.compat.v1.name_scope(None):
                        add_gan_model_summaries(tf, gan_model)
                gan_loss = GANLoss(
                    generator_loss_fn(gan_model, add_summaries=use_loss_summaries),
                    discriminator_loss_fn(gan_model, add_summaries=use_loss_summaries),
                )
                if mode == tf.estimator.ModeKeys.EVAL:
                    return _eval_spec(tf, gan_model, gan_loss, get_eval_metric_ops_fn)
                optimizers = [
                    o() if callable(o) else o
                    for o in (generator_optimizer, discriminator_optimizer)
                ]
                hooks_fn = get_hooks_fn or get_sequential_train_hooks(tf)
                return _train_spec(tf, gan_model, gan_loss, optimizers, hooks_fn)

            super().__init__(
                model_fn=_model_fn,
                model_dir=model_dir,
                config=config,
                params=params,
                warm_start_from=warm_start_from,
            )

    return GANEstimator(**kw)


# --- examples/mnist_estimator, on 4-dim noise and 8-dim "images" ---


def _init(tf, rows, cols, scale):
    values = (np.arange(rows * cols, dtype=np.float32) % 7 - 3.0) * scale
    return tf.compat.v1.constant_initializer(values.reshape(rows, cols))


def _generator_fn(tf):
    def generator_fn(noise, mode):
        del mode
        layers = tf.compat.v1.layers
        net = layers.dense(noise, 6, activation=tf.nn.relu, kernel_initializer=_init(tf, 4, 6, 0.1))
        return layers.dense(net, 8, activation=tf.tanh, kernel_initializer=_init(tf, 6, 8, 0.05))

    return generator_fn


def _discriminator_fn(tf):
    def discriminator_fn(data, conditioning):
        del conditioning
        layers = tf.compat.v1.layers
        net = layers.dense(
            data, 5, activation=tf.nn.leaky_relu, kernel_initializer=_init(tf, 8, 5, 0.1)
        )
        return layers.dense(net, 1, kernel_initializer=_init(tf, 5, 1, 0.2))

    return discriminator_fn


def _get_eval_metric_ops_fn(tf):
    def get_eval_metric_ops_fn(gan_model):
        real_data_logits = tf.reduce_mean(input_tensor=gan_model.discriminator_real_outputs)
        gen_data_logits = tf.reduce_mean(input_tensor=gan_model.discriminator_gen_outputs)
        return {
            "real_data_logits": tf.compat.v1.metrics.mean(real_data_logits),
            "gen_data_logits": tf.compat.v1.metrics.mean(gen_data_logits),
        }

    return get_eval_metric_ops_fn


_ROWS = 8


def _noise():
    return (np.arange(_ROWS * 4, dtype=np.float32) % 5 / 5.0 - 0.4).reshape(_ROWS, 4)


def _train_input_fn(tf, batch_size=4):
    images = (np.arange(_ROWS * 8, dtype=np.float32) % 9 / 9.0 - 0.5).reshape(_ROWS, 8)

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices((_noise(), images))
        return data.repeat().batch(batch_size, drop_remainder=True)

    return input_fn


def _eval_input_fn(tf):
    images = (np.arange(_ROWS * 8, dtype=np.float32) % 9 / 9.0 - 0.5).reshape(_ROWS, 8)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((_noise(), images)).batch(4)

    return input_fn


def _predict_input_fn(tf):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(_noise()[:4]).batch(2)

    return input_fn


def _wgan(tf, model_dir, networks, discriminator_loss_fn, optimizers, **kw):
    """A GANEstimator of Wasserstein losses over `networks` (generator_fn, discriminator_fn)."""
    generator_fn, discriminator_fn = networks
    generator_optimizer, discriminator_optimizer = optimizers
    return gan_estimator(
        tf,
        model_dir=model_dir,
        generator_fn=generator_fn,
        discriminator_fn=discriminator_fn,
        generator_loss_fn=functools.partial(wasserstein_generator_loss, tf),
        discriminator_loss_fn=discriminator_loss_fn,
        generator_optimizer=generator_optimizer,
        discriminator_optimizer=discriminator_optimizer,
        **kw,
    )


def _estimator(tf, model_dir, get_hooks_fn, generator_optimizer):
    return _wgan(
        tf,
        model_dir,
        (_generator_fn(tf), _discriminator_fn(tf)),
        functools.partial(wasserstein_discriminator_loss, tf),
        (generator_optimizer, tf.compat.v1.train.AdamOptimizer(0.01, 0.5)),
        get_hooks_fn=get_hooks_fn,
        get_eval_metric_ops_fn=_get_eval_metric_ops_fn(tf),
        add_summaries=["variables"],
        config=tf.estimator.RunConfig(log_step_count_steps=1, save_summary_steps=1),
    )


def _report(estimator, model_dir, lines, eval_results, predictions, exact):
    """What the programs compare: the model_dir's files, variables, evaluate's keys, the
    summaries' tags, the log lines (`exact`, with the program's own parts) and the values."""
    workdir = os.path.dirname(model_dir)
    variables = sorted(estimator.get_variable_names())
    words = ("Saving checkpoints", "Loss for", "loss = ", "Saving dict", "illegal")
    return {
        "exact": {
            "listing": sorted(p for p in listing(model_dir) if not p.endswith(".meta")),
            "variables": variables,
            "evaluate_keys": sorted(eval_results),
            "train_tags": _event_tags(model_dir),
            "eval_tags": _event_tags(os.path.join(model_dir, "eval")),
            "lines": _kept_lines(lines, workdir, *words),
            **exact,
        },
        "close": {
            "eval": _floats(eval_results),
            "predictions": [np.asarray(p).tolist() for p in predictions],
            "values": {
                v: np.asarray(estimator.get_variable_value(v)).tolist()
                for v in variables
                if v.startswith(("Generator", "Discriminator"))
            },
        },
    }


def _run(tf, workdir, name, get_hooks_fn, generator_optimizer, trains):
    model_dir = os.path.join(workdir, name)
    estimator = _estimator(tf, model_dir, get_hooks_fn, generator_optimizer)
    with _info_lines() as lines:
        for steps in trains:
            estimator.train(_train_input_fn(tf), steps=steps)
        eval_results = estimator.evaluate(_eval_input_fn(tf))
        predictions = list(estimator.predict(_predict_input_fn(tf)))
    shapes = {"prediction_shapes": [list(np.shape(p)) for p in predictions]}
    return _report(estimator, model_dir, lines, eval_results, predictions, shapes)


@program
def gan_estimator_sequential_hooks(tf, workdir):
    hooks = get_sequential_train_hooks(tf, GANTrainSteps(1, 2))
    optimizer = tf.compat.v1.train.AdamOptimizer(0.01, 0.5)
    return _run(tf, workdir, "sequential", hooks, optimizer, [3])


@program
def gan_estimator_joint_hooks(tf, workdir):
    hooks = get_joint_train_hooks(tf, GANTrainSteps(2, 1))
    return _run(
        tf, workdir, "joint", hooks, lambda: tf.compat.v1.train.AdamOptimizer(0.01, 0.5), [2, 2]
    )


# --- tensorflow_gan/python/estimator/tpu_gan_estimator.py, in its shape (use_tpu=False) ---


def _tpu_train_op(tf, gan_model, gan_loss, optimizers, joint):
    """The discriminator's then the generator's step in one op, then the global step's."""
    v1 = tf.compat.v1
    gen_opt, dis_opt = optimizers
    with v1.name_scope("discriminator_train"):
        dis_op = dis_opt.minimize(
            gan_loss.discriminator_loss, var_list=gan_model.discriminator_variables
        )
    dependencies = [] if joint else [dis_op]
    with tf.control_dependencies(dependencies), v1.name_scope("generator_train"):
        gen_op = gen_opt.minimize(gan_loss.generator_loss, var_list=gan_model.generator_variables)
    with tf.control_dependencies([gen_op, dis_op]):
        return v1.train.get_or_create_global_step().assign_add(1)


def _tpu_eval_metrics(tf, gan_model, gan_loss):
    def metric_fn(generator_loss, discriminator_loss, real_logits, gen_logits):
        return {
            "generator_loss": tf.compat.v1.metrics.mean(generator_loss),
            "discriminator_loss": tf.compat.v1.metrics.mean(discriminator_loss),
            "real_data_logits": tf.compat.v1.metrics.mean(real_logits),
            "gen_data_logits": tf.compat.v1.metrics.mean(gen_logits),
        }

    tensors = {
        "generator_loss": tf.reshape(gan_loss.generator_loss, [1]),
        "discriminator_loss": tf.reshape(gan_loss.discriminator_loss, [1]),
        "real_logits": gan_model.discriminator_real_outputs,
        "gen_logits": gan_model.discriminator_gen_outputs,
    }
    return metric_fn, tensors


def tpu_gan_estimator(tf, model_dir, joint):
    """`tfgan.estimator.TPUGANEstimator(..., use_tpu=False)`: a TPUEstimator subclass."""
    TPUEstimator = tf.compat.v1.estimator.tpu.TPUEstimator
    TPUEstimatorSpec = tf.compat.v1.estimator.tpu.TPUEstimatorSpec
    modes = tf.estimator.ModeKeys

    class TPUGANEstimator(TPUEstimator):
        def __init__(self, **kwargs):
            def _model_fn(features, labels, mode, params):
                del params
                if mode == modes.PREDICT:
                    with tf.compat.v1.variable_scope("Generator"):
                        generated = _generator_fn(tf)(features, mode)
                    return TPUEstimatorSpec(mode=mode, predictions={"generated_data": generated})
                gan_model = _gan_model(
                    tf, _with_mode(_generator_fn(tf), mode), _discriminator_fn(tf), labels, features
                )
                gan_loss = GANLoss(
                    wasserstein_generator_loss(tf, gan_model),
                    wasserstein_discriminator_loss(tf, gan_model),
                )
                scalar_loss = gan_loss.generator_loss + gan_loss.discriminator_loss
                if mode == modes.EVAL:
                    metrics = _tpu_eval_metrics(tf, gan_model, gan_loss)
                    return TPUEstimatorSpec(mode=mode, loss=scalar_loss, eval_metrics=metrics)
                optimizers = [tf.compat.v1.train.AdamOptimizer(0.01, 0.5) for _ in range(2)]
                train_op = _tpu_train_op(tf, gan_model, gan_loss, optimizers, joint)
                return TPUEstimatorSpec(mode=mode, loss=scalar_loss, train_op=train_op)

            super().__init__(model_fn=_model_fn, **kwargs)

    config = tf.compat.v1.estimator.tpu.RunConfig(
        model_dir=model_dir,
        log_step_count_steps=1,
        tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=2),
    )
    return TPUGANEstimator(
        config=config,
        use_tpu=False,
        train_batch_size=4,
        eval_batch_size=4,
        predict_batch_size=2,
    )


def _tpu_input_fn(tf, mode):
    images = (np.arange(_ROWS * 8, dtype=np.float32) % 9 / 9.0 - 0.5).reshape(_ROWS, 8)

    def input_fn(params):
        if mode == "predict":
            data = tf.data.Dataset.from_tensor_slices(_noise()[:4])
        else:
            data = tf.data.Dataset.from_tensor_slices((_noise(), images))
        data = data.repeat() if mode == "train" else data
        return data.batch(params["batch_size"], drop_remainder=True)

    return input_fn


@program
def tpu_gan_estimator_on_cpu(tf, workdir):
    model_dir = os.path.join(workdir, "tpu_gan")
    estimator = tpu_gan_estimator(tf, model_dir, joint=False)
    with _info_lines() as lines:
        estimator.train(_tpu_input_fn(tf, "train"), max_steps=4)
        eval_results = estimator.evaluate(_tpu_input_fn(tf, "eval"), steps=2)
        predictions = list(estimator.predict(_tpu_input_fn(tf, "predict")))
    generated = [p["generated_data"] for p in predictions]
    keys = {"prediction_keys": sorted(predictions[0])}
    return _report(estimator, model_dir, lines, eval_results, generated, keys)


# --- examples/mnist conditional GAN: (noise, one-hot labels) as a tuple of features ---


def _conditional_generator_fn(tf):
    def generator_fn(inputs):
        noise, one_hot = inputs
        net = tf.concat([noise, one_hot], 1)
        return tf.compat.v1.layers.dense(net, 8, kernel_initializer=_init(tf, 7, 8, 0.05))

    return generator_fn


def _conditional_discriminator_fn(tf):
    def discriminator_fn(data, conditioning):
        _, one_hot = conditioning
        net = tf.concat([data, one_hot], 1)
        return tf.compat.v1.layers.dense(net, 1, kernel_initializer=_init(tf, 11, 1, 0.1))

    return discriminator_fn


def _conditional_input_fn(tf, mode):
    one_hot = np.eye(3, dtype=np.float32)[np.arange(_ROWS) % 3]
    images = (np.arange(_ROWS * 8, dtype=np.float32) % 9 / 9.0 - 0.5).reshape(_ROWS, 8)

    def input_fn():
        if mode == "predict":
            data = tf.data.Dataset.from_tensor_slices((_noise()[:4], one_hot[:4])).batch(2)
            return tf.compat.v1.data.make_one_shot_iterator(data).get_next(), None
        if mode == "one_tuple":
            return tf.data.Dataset.from_tensor_slices(((_noise()[:4], one_hot[:4]),)).batch(2)
        data = tf.data.Dataset.from_tensor_slices(((_noise(), one_hot), images))
        return (data.repeat() if mode == "train" else data).batch(4)

    return input_fn


def _serving_input_fn(tf):
    noise = tf.compat.v1.placeholder(tf.float32, [None, 4], name="noise")
    one_hot = tf.compat.v1.placeholder(tf.float32, [None, 3], name="one_hot")
    receiver = {"noise": noise, "one_hot": one_hot}
    return tf.estimator.export.ServingInputReceiver((noise, one_hot), receiver)


@program
def conditional_gan_tuple_features_export(tf, workdir):
    model_dir = os.path.join(workdir, "conditional")
    sgd = tf.compat.v1.train.GradientDescentOptimizer
    estimator = _wgan(
        tf,
        model_dir,
        (_conditional_generator_fn(tf), _conditional_discriminator_fn(tf)),
        functools.partial(wasserstein_discriminator_loss, tf),
        (sgd(0.1), sgd(0.1)),
    )
    with _info_lines() as lines:
        estimator.train(_conditional_input_fn(tf, "train"), max_steps=2)
        eval_results = estimator.evaluate(_conditional_input_fn(tf, "eval"))
        predictions = list(estimator.predict(_conditional_input_fn(tf, "predict")))
        batches = list(
            estimator.predict(_conditional_input_fn(tf, "predict"), yield_single_examples=False)
        )
        one_tuple = _raised(lambda: estimator.predict(_conditional_input_fn(tf, "one_tuple")))
        export = _raised(
            lambda: estimator.export_saved_model(
                os.path.join(workdir, "export"), lambda: _serving_input_fn(tf)
            )
        )
    return {
        "exact": {
            "listing": sorted(p for p in listing(model_dir) if not p.endswith(".meta")),
            "variables": sorted(estimator.get_variable_names()),
            "evaluate_keys": sorted(eval_results),
            "prediction_shapes": [list(np.shape(p)) for p in predictions],
            "batch_shapes": [list(np.shape(b)) for b in batches],
            "one_tuple_predict": one_tuple,
            # (2.15's first line; the kit adds a line saying which receiver and what it was)
            "tuple_features_export": [export[0], export[1].splitlines()[0]],
            "lines": _kept_lines(lines, workdir, "Saving checkpoints", "Loss for", "Saving dict"),
        },
        "close": {
            "eval": _floats(eval_results),
            "predictions": [np.asarray(p).tolist() for p in predictions],
        },
    }


# --- a WGAN-GP (`tfgan.losses.wasserstein_gradient_penalty`) with image summaries ---


def wasserstein_gradient_penalty(tf, gan_model, add_summaries=False):
    """The penalty on the discriminator's gradient at random interpolates of real and
    generated data (a seeded `random_uniform`, `tf.gradients`), as TF-GAN's loss."""
    v1 = tf.compat.v1
    real, generated = gan_model.real_data, gan_model.generated_data
    with v1.name_scope(None, "wasserstein_gradient_penalty"):
        alpha = v1.random_uniform([tf.shape(real)[0], 1])
        interpolates = real + alpha * (generated - real)
        with v1.name_scope(None), v1.variable_scope(gan_model.discriminator_scope, reuse=True):
            disc = gan_model.discriminator_fn(interpolates, gan_model.generator_inputs)
        gradients = tf.gradients(ys=disc, xs=interpolates)[0]
        slopes = tf.sqrt(tf.reduce_sum(tf.square(gradients), axis=1) + 1e-10)
        penalty = v1.losses.compute_weighted_loss(tf.square(slopes - 1.0))
        if add_summaries:
            v1.summary.scalar("gradient_penalty_loss", penalty)
    return penalty


def _gp_discriminator_loss(tf):
    def discriminator_loss_fn(gan_model, add_summaries=False):
        loss = wasserstein_discriminator_loss(tf, gan_model, add_summaries)
        add_gan_model_image_summaries(tf, gan_model)
        return loss + 10.0 * wasserstein_gradient_penalty(tf, gan_model, add_summaries)

    return discriminator_loss_fn


def add_gan_model_image_summaries(tf, gan_model, grid_size=2):
    """TF-GAN's image summaries: real and generated data as [2, 4, 1] images."""
    v1 = tf.compat.v1
    real = tf.reshape(gan_model.real_data[:grid_size], [-1, 2, 4, 1])
    generated = tf.reshape(gan_model.generated_data[:grid_size], [-1, 2, 4, 1])
    v1.summary.image("real_data", real, max_outputs=grid_size)
    v1.summary.image("generated_data", generated, max_outputs=grid_size)
    v1.summary.scalar("image_count", tf.size(input=real))


@program
def wgan_gp_image_summaries(tf, workdir):
    model_dir = os.path.join(workdir, "wgan_gp")

    estimator = _wgan(
        tf,
        model_dir,
        (_generator_fn(tf), _discriminator_fn(tf)),
        _gp_discriminator_loss(tf),
        (tf.compat.v1.train.AdamOptimizer(0.01, 0.5), tf.compat.v1.train.RMSPropOptimizer(0.01)),
        get_eval_metric_ops_fn=_get_eval_metric_ops_fn(tf),
        config=tf.estimator.RunConfig(tf_random_seed=7, save_summary_steps=1),
    )
    with _info_lines() as lines:
        estimator.train(_train_input_fn(tf), max_steps=3)
        eval_results = estimator.evaluate(_eval_input_fn(tf))
        predictions = list(estimator.predict(_predict_input_fn(tf)))
    return _report(estimator, model_dir, lines, eval_results, predictions, {})


@program
def gan_train_and_evaluate_logging_hook(tf, workdir):
    """`train_and_evaluate` of the sequential GAN, a LoggingTensorHook on both losses added
    to TF-GAN's hooks, then a second GANEstimator warm-started from the first's model_dir."""
    model_dir = os.path.join(workdir, "tae")
    sequential = get_sequential_train_hooks(tf)

    def get_hooks_fn(train_ops):
        losses = {"total": "add:0"}
        every = tf.estimator.LoggingTensorHook(losses, every_n_iter=1)
        return [*sequential(train_ops), every]

    optimizer = tf.compat.v1.train.AdamOptimizer(0.01, 0.5)
    estimator = _estimator(tf, model_dir, get_hooks_fn, optimizer)
    train_spec = tf.estimator.TrainSpec(_train_input_fn(tf), max_steps=3)
    eval_spec = tf.estimator.EvalSpec(_eval_input_fn(tf), steps=None, throttle_secs=0)
    with _info_lines() as lines:
        result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
        warm = _wgan(
            tf,
            os.path.join(workdir, "warm"),
            (_generator_fn(tf), _discriminator_fn(tf)),
            functools.partial(wasserstein_discriminator_loss, tf),
            (optimizer, tf.compat.v1.train.AdamOptimizer(0.01, 0.5)),
            warm_start_from=tf.estimator.WarmStartSettings(model_dir, "Generator"),
        )
        predictions = list(warm.predict(_predict_input_fn(tf)))
        warm_eval = _floats(warm.evaluate(_eval_input_fn(tf)))
    eval_results, export_results = result
    report = _report(estimator, model_dir, lines, eval_results, predictions, {})
    report["exact"]["lines"] = _kept_lines(
        lines,
        workdir,
        "Saving checkpoints",
        "Loss for",
        "loss = ",
        "total = ",
        "Saving dict",
        "Warm-start",
        "warm-start",
        "Warm-starting",
    )
    report["exact"]["export_results"] = export_results
    report["close"]["warm_eval"] = warm_eval
    return report
