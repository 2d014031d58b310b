"""AdaNet (tensorflow/adanet 0.9/0.10) in its shape, after `tf_upgrade_v2`: Estimator
subclasses whose `train` loops over AdaNet iterations, each a temporary
`tf.estimator.Estimator` trained to `max_steps`, then a bookkeeping phase that evaluates
the candidate ensembles in sessions of its own, materializes reports and grows the graph
for the next iteration by overwriting the model_dir's checkpoint. AdaNet is not installed
on either side: its machinery is written here, small but in its shape (2-3 iterations, 2
candidates each, made-up rows).

- `adanet_simple_dnn_iterations`: the `customizing_adanet`/`simple_dnn` tutorials' shape:
  a subnetwork generator of a linear and a DNN builder (`tf.compat.v1.layers` under
  variable scopes), a `RegressionHead`, candidates grown from the previous ensemble
  (frozen, rebuilt from `architecture-N.json` and restored), an `Evaluator` picking the
  winner by a metric, a `ReportMaterializer` (a `MonitoredSession` restored from the
  checkpoint), then `evaluate`, `predict` and `export_saved_model` of the chosen ensemble.
  Returns the log lines, each iteration's metrics and winner, the checkpoints' variable
  names, the model_dir's files, the export's signatures and predictions;
- `adanet_estimator_surface`: what AdaNet's Estimator reads of its base class:
  `_create_and_assert_global_step(graph)` in a graph of its own, `config.replace`,
  `self.params` ({}), `_warm_start_settings`, `latest_checkpoint()`,
  `get_variable_names/value` after the graph grew, and `train(steps=...)` resumed;
- `autoensemble_canned_candidates`: AutoEnsembleEstimator's candidate pool of canned
  estimators (`DNNEstimator(head=...)`, `LinearEstimator(head=...)`), each subestimator's
  `model_fn` called in a `make_template` as a building block with
  `tf.compat.v1.train.get_global_step` patched to the subnetwork's own step.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_adanet.py` with what `tests/tf215/record_family.py adanet_programs` recorded
under tf.estimator 2.15 (`tests/data/tf215/adanet.json`).
"""

import contextlib
import functools
import json
import os
import shutil

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import LOG_MARKERS, _info_lines, marked_lines
from tests.tutorial_programs import listing, signatures

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "adanet.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

ADANET_MARKERS = (
    *LOG_MARKERS,
    "AdaNet",
    "Adanet",
    "training ended",
    "stopping iteration",
    "preparing iteration",
    "Preparing iteration",
    "ensemble metrics",
    "best ensemble",
    "Overwriting checkpoint",
    "Importing architecture",
    "adapting graph",
    "Adapting graph",
    "Materializing reports",
    "end of input",
)

X = np.random.RandomState(0).uniform(-1, 1, (24, 2)).astype(np.float32)
Y = (X @ np.array([[1.5], [-0.5]], np.float32) + 0.25).astype(np.float32)


def _input_fn(tf, repeat=True, batch=8):
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        return (data.repeat() if repeat else data).batch(batch)

    return input_fn


def _features_and_labels(tf, result):
    """An input_fn's result as (features, labels), AdaNet's parse of it."""
    if isinstance(result, tf.data.Dataset):
        result = tf.compat.v1.data.make_one_shot_iterator(result).get_next()
    if isinstance(result, (list, tuple)):
        return result[0], result[1]
    return result, None


class _Builder:
    """adanet.subnetwork.Builder's shape (simple_dnn's DNN builder): a name, the
    subnetwork's logits, its own train op."""

    def __init__(self, tf, num_layers, learning_rate=0.1, seed=7):
        self.tf, self.num_layers, self.learning_rate, self.seed = (
            tf,
            num_layers,
            learning_rate,
            seed,
        )

    @property
    def name(self):
        return "linear" if not self.num_layers else f"{self.num_layers}_layer_dnn"

    def build_subnetwork(self, features, labels, logits_dimension, training):
        tf = self.tf
        x = tf.compat.v1.feature_column.input_layer(
            features, [tf.feature_column.numeric_column("x", shape=[2])]
        )
        for _ in range(self.num_layers):
            x = tf.compat.v1.layers.dense(
                x,
                units=4,
                activation=tf.nn.relu,
                kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=self.seed),
            )
        return tf.compat.v1.layers.dense(
            x,
            units=logits_dimension,
            kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=self.seed),
        )

    def build_subnetwork_train_op(self, loss, var_list):
        optimizer = self.tf.compat.v1.train.GradientDescentOptimizer(self.learning_rate)
        return optimizer.minimize(loss=loss, var_list=var_list)


class _Generator:
    """adanet.subnetwork.Generator's shape: simple_dnn's, one layer deeper each iteration."""

    def __init__(self, tf):
        self.tf = tf

    def generate_candidates(self, previous_ensemble, iteration_number):
        depth = len(previous_ensemble or [])
        return [_Builder(self.tf, depth), _Builder(self.tf, depth + 1)]


@contextlib.contextmanager
def _subnetwork_step(tf, scope):
    """AdaNet's monkey-patch while a subestimator's model_fn runs: the global step its
    optimizer and head ask for is the subnetwork's own `iteration_step`."""
    from tensorflow.python.training import training_util

    def iteration_step(graph=None):
        graph = graph or tf.compat.v1.get_default_graph()
        reuse = tf.compat.v1.AUTO_REUSE
        with (
            graph.as_default(),
            graph.name_scope(None),
            tf.compat.v1.variable_scope(scope, reuse=reuse),
        ):
            return _counter(tf, "iteration_step")

    places = [tf.compat.v1.train, training_util]
    names = ("get_global_step", "get_or_create_global_step")
    saved = [(place, name, getattr(place, name)) for place in places for name in names]
    for place, name, _ in saved:
        setattr(place, name, iteration_step)
    try:
        yield
    finally:
        for place, name, value in saved:
            setattr(place, name, value)


class _SubestimatorBuilder:
    """autoensemble.common._BuilderFromSubestimator: a canned estimator's `model_fn` as a
    subnetwork, called in a template, its logits and train op taken from its spec."""

    def __init__(self, tf, name, estimator, config):
        self.tf, self.name, self.estimator, self.config = tf, name, estimator, config
        self.train_op = None

    def _call_model_fn(self, features, labels, mode):
        spec = self.estimator.model_fn(
            features=features, labels=labels, mode=mode, config=self.config
        )
        predictions = spec.predictions
        return predictions.get("logits", predictions.get("predictions")), spec.train_op

    def build_subnetwork(self, features, labels, logits_dimension, training):
        tf = self.tf
        mode = tf.estimator.ModeKeys.TRAIN if training else tf.estimator.ModeKeys.PREDICT
        template = tf.compat.v1.make_template("model_fn", self._call_model_fn)
        scope = tf.compat.v1.get_variable_scope().name
        with _subnetwork_step(tf, scope):
            logits, self.train_op = template(features, labels if training else None, mode)
        return logits

    def build_subnetwork_train_op(self, loss, var_list):
        return self.train_op


class _CandidatePoolGenerator:
    """autoensemble.common._GeneratorFromCandidatePool: a builder per estimator of the pool
    (a dict, or a function of the config returning one)."""

    def __init__(self, tf, candidate_pool, config):
        self.tf, self.candidate_pool, self.config = tf, candidate_pool, config

    def generate_candidates(self, previous_ensemble, iteration_number):
        pool = self.candidate_pool
        pool = pool(self.config) if callable(pool) else pool
        return [
            _SubestimatorBuilder(self.tf, name, pool[name], self.config) for name in sorted(pool)
        ]


class ReportMaterializer:
    """adanet.ReportMaterializer's shape: the input_fn its reports are computed over."""

    def __init__(self, input_fn, steps=None):
        self.input_fn, self.steps = input_fn, steps


class Evaluator:
    """adanet.Evaluator: runs its input_fn through the candidates' metrics."""

    def __init__(self, input_fn, metric_name="adanet_loss", steps=None):
        self.input_fn, self.metric_name, self.steps = input_fn, metric_name, steps

    def evaluate(self, tf, sess, ensemble_metrics):
        updates = [metrics[self.metric_name][1] for metrics in ensemble_metrics]
        values = [metrics[self.metric_name][0] for metrics in ensemble_metrics]
        done = 0
        while self.steps is None or done < self.steps:
            try:
                sess.run(updates)
                done += 1
            except tf.errors.OutOfRangeError:
                tf.compat.v1.logging.info("Encountered end of input after %d evaluations", done)
                break
        return sess.run(values)


def _counter(tf, name):
    """An int64 variable starting at 0, out of training's reach (AdaNet's step counters)."""
    v1 = tf.compat.v1
    return v1.get_variable(
        name, shape=[], dtype=tf.int64, initializer=v1.zeros_initializer(), trainable=False
    )


def _adanet_estimator(tf):
    """adanet.Estimator's class, its machinery in its shape, over `tf`'s tf.estimator."""
    v1 = tf.compat.v1

    class _StopAfterTrainingHook(tf.estimator.SessionRunHook):
        def __init__(self, step, steps, after_fn, number):
            self.step, self.steps, self.after_fn, self.number = step, steps, after_fn, number

        def after_run(self, run_context, run_values):
            if run_context.session.run(self.step) >= self.steps:
                v1.logging.info("Now stopping iteration %d training", self.number)
                run_context.request_stop()
                self.after_fn()

    class _OverwriteCheckpointHook(tf.estimator.SessionRunHook):
        """Restores the previous iteration's variables from the model_dir's checkpoint and
        writes the grown graph's over it (`increment.ckpt-N`)."""

        def __init__(self, number, number_variable, previous_vars, config):
            self.number, self.number_variable = number, number_variable
            self.previous_vars, self.model_dir = previous_vars, config.model_dir
            self.state = tf.train.get_checkpoint_state(config.model_dir)
            self.keep = config.keep_checkpoint_max
            self.overwritten = False

        def begin(self):
            self.restore_saver = v1.train.Saver(sharded=True, var_list=self.previous_vars)
            self.update = self.number_variable.assign(self.number)
            self.overwrite_saver = v1.train.Saver(sharded=True, max_to_keep=self.keep)
            self.overwrite_saver.recover_last_checkpoints(self.state.all_model_checkpoint_paths)

        def before_run(self, run_context):
            if self.overwritten:
                return
            session = run_context.session
            self.restore_saver.restore(session, self.state.model_checkpoint_path)
            session.run(self.update)
            path = os.path.join(self.model_dir, "increment.ckpt")
            v1.logging.info(
                "Overwriting checkpoint with new graph for iteration %d to %s-%d",
                self.number,
                path,
                self.number,
            )
            self.overwrite_saver.save(session, path, global_step=self.number)
            self.overwritten = True

    class Estimator(tf.estimator.Estimator):
        def __init__(
            self,
            head,
            subnetwork_generator,
            max_iteration_steps,
            evaluator=None,
            report_materializer=None,
            max_iterations=None,
            model_dir=None,
            config=None,
            **kwargs,
        ):
            tf.estimator.Estimator._assert_members_are_not_overridden = staticmethod(lambda _: None)
            self._head, self._generator = head, subnetwork_generator
            self._max_iteration_steps, self._max_iterations = max_iteration_steps, max_iterations
            self._evaluator, self._report_materializer = evaluator, report_materializer
            self._warm_start_settings = kwargs.get("warm_start_from")
            super().__init__(
                model_fn=self._create_model_fn(),
                params={},
                config=config,
                model_dir=model_dir,
                **kwargs,
            )
            self.history = []

        def _checkpoint_value(self, path, name, default=0):
            return tf.train.load_variable(path, name).item() if path else default

        def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
            latest = tf.train.latest_checkpoint(self.model_dir)
            if steps is not None:
                max_steps = self._checkpoint_value(latest, "global_step") + steps
            while True:
                latest = tf.train.latest_checkpoint(self.model_dir)
                number = self._checkpoint_value(latest, "current_iteration")
                v1.logging.info("Beginning training AdaNet iteration %s", number)
                self._iteration_ended = False
                temp = self._create_temp_estimator(
                    self.config, is_inside_training_loop=True, checkpoint_path=latest
                )
                result = temp.train(
                    input_fn, hooks=hooks, max_steps=max_steps, saving_listeners=saving_listeners
                )
                v1.logging.info("Finished training Adanet iteration %s", number)
                latest = tf.train.latest_checkpoint(self.model_dir)
                global_steps = self._checkpoint_value(latest, "global_step")
                if max_steps is not None and global_steps >= max_steps:
                    v1.logging.info("Training ended after %s global steps", global_steps)
                    return result
                if not self._iteration_ended:
                    return result
                if self._max_iterations and number + 1 >= self._max_iterations:
                    v1.logging.info("Training ended after exceeding maximum AdaNet iterations")
                    return result
                self._execute_bookkeeping_phase(input_fn, number, latest)

        def _best_index(self, path):
            if self._evaluator:
                return self._execute_candidate_evaluation_phase(self._evaluator.input_fn, path)
            number = self._checkpoint_value(path, "current_iteration")
            scope = f"adanet/iteration_{number}/"
            losses = sorted(
                (name, tf.train.load_variable(path, name).item())
                for name, _ in tf.train.list_variables(path)
                if name.startswith(scope) and name.endswith("/adanet_loss")
            )
            return int(np.argmin([loss for _, loss in losses]))

        def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
            path = checkpoint_path or tf.train.latest_checkpoint(self.model_dir)
            v1.logging.info("Evaluating AdaNet model at checkpoint: %s", path)
            temp = self._create_temp_estimator(
                self.config, checkpoint_path=path, best_index=self._best_index(path)
            )
            return temp.evaluate(
                input_fn, steps=steps, hooks=hooks, checkpoint_path=path, name=name
            )

        def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None):
            path = checkpoint_path or tf.train.latest_checkpoint(self.model_dir)
            temp = self._create_temp_estimator(
                self.config, checkpoint_path=path, best_index=self._best_index(path)
            )
            return temp.predict(input_fn, predict_keys=predict_keys, checkpoint_path=path)

        def export_saved_model(self, export_dir_base, serving_input_receiver_fn, **kwargs):
            path = kwargs.pop("checkpoint_path", None) or tf.train.latest_checkpoint(self.model_dir)
            temp = self._create_temp_estimator(
                self.config, checkpoint_path=path, best_index=self._best_index(path)
            )
            return temp.export_saved_model(
                export_dir_base, serving_input_receiver_fn, checkpoint_path=path, **kwargs
            )

        def _create_temp_estimator(self, config, **model_fn_args):
            return tf.estimator.Estimator(
                model_fn=self._create_model_fn(**model_fn_args),
                config=config,
                warm_start_from=self._warm_start_settings,
            )

        @contextlib.contextmanager
        def _call_input_fn_in_new_graph(self, input_fn, config):
            with tf.Graph().as_default() as g:
                v1.set_random_seed(config.tf_random_seed)
                self._create_and_assert_global_step(g)
                with tf.device("/cpu:0"):
                    result = input_fn()
                yield _features_and_labels(tf, result)

        def _execute_bookkeeping_phase(self, train_input_fn, number, path):
            v1.logging.info("Preparing iteration %s:", number + 1)
            evaluator_input_fn = self._evaluator.input_fn if self._evaluator else train_input_fn
            best = self._execute_candidate_evaluation_phase(evaluator_input_fn, path, number)
            if self._report_materializer:
                self._materialize_reports(best, path, number)
            self._execute_graph_growing_phase(train_input_fn, path)
            v1.logging.info("Finished preparing iteration %s.", number + 1)

        def _execute_candidate_evaluation_phase(self, input_fn, path, export_number=None):
            v1.logging.info("Evaluating candidates...")
            mode = tf.estimator.ModeKeys.EVAL
            with self._call_input_fn_in_new_graph(input_fn, self.config) as (features, labels):
                iteration = self._create_iteration(features, labels, mode, path)
                best = self._get_best_ensemble_index(iteration, path)
            if export_number is not None:
                names = iteration["candidates"][best]["subnetworks"]
                with open(self._architecture_filename(export_number), "w") as f:
                    json.dump({"subnetworks": names, "global_step": iteration["step"]}, f)
            return best

        def _get_best_ensemble_index(self, iteration, path):
            candidates = iteration["candidates"]
            with v1.Session(config=self.config.session_config) as sess:
                sess.run(
                    tf.group(
                        v1.global_variables_initializer(),
                        v1.local_variables_initializer(),
                        v1.tables_initializer(),
                    )
                )
                v1.train.Saver(sharded=True).restore(sess, path)
                ensemble_metrics = []
                for candidate in candidates:
                    metrics = dict(candidate["spec"].eval_metric_ops)
                    metrics["adanet_loss"] = v1.metrics.mean(candidate["spec"].loss)
                    ensemble_metrics.append(metrics)
                sess.run(v1.local_variables_initializer())
                if self._evaluator:
                    name = self._evaluator.metric_name
                    values = self._evaluator.evaluate(tf, sess, ensemble_metrics)
                else:
                    name, values = "adanet_loss", sess.run([c["spec"].loss for c in candidates])
            index = int(np.nanargmin(values))
            shown = ", ".join(
                "{}/{} = {:.6f}".format(name, c["name"], v)
                for c, v in zip(candidates, values, strict=True)
            )
            v1.logging.info("Computed ensemble metrics: %s", shown)
            v1.logging.info(
                "'%s' at index %s is the best ensemble", candidates[index]["name"], index
            )
            self.history.append(
                {
                    "iteration": iteration["number"],
                    "metric": name,
                    "values": {
                        c["name"]: float(v) for c, v in zip(candidates, values, strict=True)
                    },
                    "best": candidates[index]["name"],
                }
            )
            return index

        def _materialize_reports(self, best, path, number):
            v1.logging.info("Materializing reports...")
            mode = tf.estimator.ModeKeys.EVAL
            input_fn = self._report_materializer.input_fn
            with self._call_input_fn_in_new_graph(input_fn, self.config) as (features, labels):
                iteration = self._create_iteration(features, labels, mode, path)
                means = {
                    name: v1.metrics.mean(logits)
                    for name, logits in iteration["subnetwork_logits"].items()
                }
                creator = v1.train.ChiefSessionCreator(checkpoint_filename_with_path=path)
                with v1.train.MonitoredSession(session_creator=creator) as sess:
                    while not sess.should_stop():  # (the end of input closes it)
                        sess.run({k: update for k, (_, update) in means.items()})
                        reports = sess.run({k: value for k, (value, _) in means.items()})
            included = iteration["candidates"][best]["subnetworks"]
            report_dir = os.path.join(self.model_dir, "report")
            os.makedirs(report_dir, exist_ok=True)
            with open(os.path.join(report_dir, f"iteration_{number}.json"), "w") as f:
                json.dump(
                    {
                        k: {"mean_logits": float(v), "included": k in included}
                        for k, v in sorted(reports.items())
                    },
                    f,
                    sort_keys=True,
                )
            v1.logging.info("Done materializing reports.")

        def _execute_graph_growing_phase(self, train_input_fn, path):
            v1.logging.info("Adapting graph and incrementing iteration number...")
            temp_dir = os.path.join(self.model_dir, "temp_model_dir")
            config = self.config.replace(model_dir=os.path.join(temp_dir, "0"))
            temp = self._create_temp_estimator(
                config, is_growing_phase=True, is_inside_training_loop=True, checkpoint_path=path
            )
            temp.train(train_input_fn, max_steps=1)
            shutil.rmtree(temp_dir)
            v1.logging.info("Done adapting graph and incrementing iteration number.")

        def _architecture_filename(self, number):
            return os.path.join(self.model_dir, f"architecture-{number}.json")

        def _subnetwork(self, builder, number, features, labels, training):
            scope = f"subnetwork_t{number}_{builder.name}"
            before = set(v1.trainable_variables())
            with v1.variable_scope(scope):
                logits = builder.build_subnetwork(
                    features, labels, self._head.logits_dimension, training
                )
            return scope, logits, [v for v in v1.trainable_variables() if v not in before]

        def _ensemble(self, name, all_logits, features, labels, mode):
            """A ComplexityRegularizedEnsembler's weighted sum of the subnetworks' logits."""
            before = set(v1.trainable_variables())
            with v1.variable_scope(f"ensemble_{name}"):
                logits = 0.0
                for k, sub in enumerate(all_logits):
                    with v1.variable_scope(f"weighted_subnetwork_{k}/logits"):
                        weight = v1.get_variable(
                            "mixture_weight",
                            shape=[],
                            initializer=v1.constant_initializer(1.0 / len(all_logits)),
                        )
                    logits += weight * sub
                bias = v1.get_variable("bias", shape=[1], initializer=v1.zeros_initializer())
                logits += bias
                ema = v1.get_variable(
                    "adanet_loss", shape=[], initializer=v1.zeros_initializer(), trainable=False
                )
            mixture_vars = [v for v in v1.trainable_variables() if v not in before]
            with tf.name_scope(f"ensemble_{name}_head"):
                spec = self._head.create_estimator_spec(
                    features=features,
                    mode=mode,
                    logits=logits,
                    labels=labels,
                    train_op_fn=lambda loss: v1.train.GradientDescentOptimizer(0.05).minimize(
                        loss, var_list=mixture_vars
                    ),
                )
            return {"name": name, "spec": spec, "ema": ema}

        def _previous_ensemble(self, number, features, labels, training):
            """The earlier iterations' winners, rebuilt frozen from their architectures."""
            logits, names = [], []
            for i in range(number):
                filename = self._architecture_filename(i)
                if not tf.io.gfile.exists(filename):
                    continue
                with open(filename) as f:
                    architecture = json.load(f)
                v1.logging.info("Importing architecture from %s", filename)
                builders = {
                    f"subnetwork_t{i}_{b.name}": b
                    for b in self._generator.generate_candidates(names, i)
                }
                with v1.variable_scope(f"iteration_{i}"):
                    for name in architecture["subnetworks"][len(names) :]:
                        _, sub, _ = self._subnetwork(builders[name], i, features, labels, False)
                        logits.append(tf.stop_gradient(sub))
                        names.append(name)
            return logits, names

        def _create_iteration(self, features, labels, mode, path, growing=False):
            number = self._checkpoint_value(path, "current_iteration") + int(growing)
            training = mode == tf.estimator.ModeKeys.TRAIN
            with v1.variable_scope("adanet"):
                previous_logits, previous_names = self._previous_ensemble(
                    number, features, labels, training
                )
                previous_vars = v1.global_variables()
                builders = self._generator.generate_candidates(previous_names, number)
                candidates, train_ops, subnetwork_logits = [], [], {}
                with v1.variable_scope(f"iteration_{number}"):
                    step = _counter(tf, "iteration_step")
                    for builder in builders:
                        scope, logits, var_list = self._subnetwork(
                            builder, number, features, labels, training
                        )
                        subnetwork_logits[scope] = logits
                        name = f"t{number}_{builder.name}"
                        candidate = self._ensemble(
                            name, [*previous_logits, logits], features, labels, mode
                        )
                        candidate["subnetworks"] = [*previous_names, scope]
                        candidates.append(candidate)
                        if training:
                            with tf.name_scope(f"{scope}_train"):
                                sub_loss = v1.losses.mean_squared_error(labels, logits)
                                train_ops.append(
                                    builder.build_subnetwork_train_op(sub_loss, var_list)
                                )
            return {
                "number": number,
                "step": self._checkpoint_value(path, "global_step"),
                "iteration_step": step,
                "candidates": candidates,
                "train_ops": train_ops,
                "subnetwork_logits": subnetwork_logits,
                "previous_vars": previous_vars,
            }

        def _train_op(self, iteration):
            candidates = iteration["candidates"]
            updates = [c["spec"].train_op for c in candidates] + iteration["train_ops"]
            updates += [c["ema"].assign(0.9 * c["ema"] + 0.1 * c["spec"].loss) for c in candidates]
            with tf.control_dependencies(updates):
                return tf.group(
                    iteration["iteration_step"].assign_add(1),
                    v1.train.get_global_step().assign_add(1),
                )

        def _create_model_fn(
            self,
            is_growing_phase=False,
            is_inside_training_loop=False,
            best_index=None,
            checkpoint_path=None,
        ):
            def _adanet_model_fn(features, labels, mode, params, config):
                del params
                path = checkpoint_path or tf.train.latest_checkpoint(self.model_dir)
                training = mode == tf.estimator.ModeKeys.TRAIN
                if training and not is_inside_training_loop:
                    raise UserWarning(
                        "The adanet.Estimator's model_fn should not be called directly in "
                        "TRAIN mode, because its behavior is undefined outside the context "
                        "of its `train` method."
                    )
                iteration = self._create_iteration(features, labels, mode, path, is_growing_phase)
                number_variable = _counter(tf, "current_iteration")
                return self._create_estimator_spec(
                    iteration, mode, number_variable, is_growing_phase, best_index
                )

            return _adanet_model_fn

        def _create_estimator_spec(self, iteration, mode, number_variable, growing, best_index):
            candidates = iteration["candidates"]
            best = best_index if best_index is not None else 0
            spec = candidates[best]["spec"]
            hooks, train_op = [], None
            if mode == tf.estimator.ModeKeys.TRAIN:
                train_op = self._train_op(iteration)
                if growing:
                    train_op = tf.identity(v1.train.get_global_step().assign_add(1))
                    hooks.append(
                        _OverwriteCheckpointHook(
                            iteration["number"],
                            number_variable,
                            iteration["previous_vars"],
                            self.config,
                        )
                    )
                else:

                    def after_fn():
                        self._iteration_ended = True

                    hooks.append(
                        _StopAfterTrainingHook(
                            iteration["iteration_step"],
                            self._max_iteration_steps,
                            after_fn,
                            iteration["number"],
                        )
                    )
            local_init = tf.group(v1.local_variables_initializer(), v1.tables_initializer())
            return tf.estimator.EstimatorSpec(
                mode=mode,
                predictions=spec.predictions,
                loss=(
                    tf.reduce_min(tf.stack([c["spec"].loss for c in candidates]))
                    if train_op is not None
                    else spec.loss
                ),
                train_op=train_op,
                eval_metric_ops=spec.eval_metric_ops,
                training_hooks=hooks,
                scaffold=v1.train.Scaffold(
                    summary_op=tf.constant(""),
                    local_init_op=local_init,
                    ready_for_local_init_op=v1.report_uninitialized_variables(
                        v1.global_variables()
                    ),
                ),
                export_outputs=spec.export_outputs,
            )

    return Estimator


def _checkpoint_names(tf, model_dir):
    path = tf.train.latest_checkpoint(model_dir)
    return [os.path.basename(path), sorted(name for name, _ in tf.train.list_variables(path))]


def _checkpoint_state(model_dir):
    with open(os.path.join(model_dir, "checkpoint")) as f:
        return [line.split(": ")[0] + ": " + os.path.basename(line.split(": ")[1]) for line in f]


def _serving_receiver(tf):
    return tf.estimator.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([2], tf.float32)}
    )


def _served(tf, export_dir, rows):
    examples = [
        tf.train.Example(
            features=tf.train.Features(
                feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=row))}
            )
        ).SerializeToString()
        for row in rows.tolist()
    ]
    loaded = tf.saved_model.load(export_dir, tags=["serve"])
    out = loaded.signatures["serving_default"](tf.constant(examples))
    return {k: v.numpy().tolist() for k, v in sorted(out.items())}


@program
def adanet_simple_dnn_iterations(tf, workdir):
    Estimator = _adanet_estimator(tf)
    model_dir = os.path.join(workdir, "adanet")
    eval_input = _input_fn(tf, repeat=False, batch=12)
    with _info_lines() as seen:
        estimator = Estimator(
            head=tf.estimator.RegressionHead(),
            subnetwork_generator=_Generator(tf),
            max_iteration_steps=3,
            evaluator=Evaluator(eval_input, metric_name="average_loss"),
            report_materializer=ReportMaterializer(eval_input),
            model_dir=model_dir,
            config=tf.estimator.RunConfig(
                tf_random_seed=42, save_checkpoints_steps=100, log_step_count_steps=1
            ),
        )
        estimator.train(_input_fn(tf), max_steps=8)
        results = estimator.evaluate(eval_input)
        predictions = list(estimator.predict(_input_fn(tf, repeat=False, batch=6)))
        export = estimator.export_saved_model(
            os.path.join(workdir, "export"), _serving_receiver(tf)
        )
    export = export.decode() if isinstance(export, bytes) else export
    with open(os.path.join(model_dir, "report", "iteration_0.json")) as f:
        report = json.load(f)
    return {
        "exact": {
            "log_lines": marked_lines(seen, workdir, ADANET_MARKERS),
            "winners": [[h["iteration"], h["metric"], h["best"]] for h in estimator.history],
            "evaluate": sorted(results),
            "checkpoint": _checkpoint_names(tf, model_dir),
            "checkpoint_state": _checkpoint_state(model_dir),
            "model_dir": listing(model_dir),
            "report": {k: v["included"] for k, v in report.items()},
            "signatures": signatures(export),
            "predict_keys": sorted(predictions[0]),
        },
        "close": {
            "iterations": {str(h["iteration"]): h["values"] for h in estimator.history},
            "evaluate": {k: float(v) for k, v in results.items()},
            "predictions": [p["predictions"].tolist() for p in predictions[:6]],
            "served": _served(tf, export, X[:3]),
            "report": {k: v["mean_logits"] for k, v in report.items()},
        },
    }


@program
def autoensemble_canned_candidates(tf, workdir):
    Estimator = _adanet_estimator(tf)
    model_dir = os.path.join(workdir, "auto")
    head = tf.estimator.RegressionHead()
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    config = tf.estimator.RunConfig(tf_random_seed=42, log_step_count_steps=1)

    def candidate_pool(config):
        return {
            "dnn": tf.estimator.DNNEstimator(
                head=head, hidden_units=[3], feature_columns=columns, optimizer="SGD"
            ),
            "linear": tf.estimator.LinearEstimator(
                head=head, feature_columns=columns, optimizer="SGD"
            ),
        }

    with _info_lines() as seen:
        estimator = Estimator(
            head=head,
            subnetwork_generator=_CandidatePoolGenerator(tf, candidate_pool, config),
            max_iteration_steps=2,
            model_dir=model_dir,
            config=config,
        )
        estimator.train(_input_fn(tf), max_steps=4)
        results = estimator.evaluate(_input_fn(tf, repeat=False, batch=12))
        predictions = list(estimator.predict(_input_fn(tf, repeat=False, batch=6)))
    path = estimator.latest_checkpoint()
    steps = {
        name: int(estimator.get_variable_value(name))
        for name in estimator.get_variable_names()
        if name.endswith("step")
    }
    return {
        "exact": {
            "log_lines": marked_lines(seen, workdir, ADANET_MARKERS),
            "winners": [[h["iteration"], h["metric"], h["best"]] for h in estimator.history],
            "checkpoint": _checkpoint_names(tf, model_dir),
            "steps": steps,
            "latest": os.path.basename(path),
            "model_dir": listing(model_dir),
        },
        "close": {
            "iterations": {str(h["iteration"]): h["values"] for h in estimator.history},
            "evaluate": {k: float(v) for k, v in results.items()},
            "predictions": [p["predictions"].tolist() for p in predictions],
        },
    }


@program
def adanet_estimator_surface(tf, workdir):
    """What AdaNet's Estimator reads of its base class without an Evaluator: the best
    ensemble from the checkpoint's `adanet_loss` values (`list_variables`,
    `load_variable`), `max_iterations`, `train(steps=...)` resumed, `params`, `config`,
    `_warm_start_settings` from `warm_start_from` in `**kwargs`, `latest_checkpoint()`,
    `get_variable_names/value`, a named evaluation, and its model_fn's refusal to train
    outside its loop."""
    Estimator = _adanet_estimator(tf)
    model_dir = os.path.join(workdir, "surface")
    config = tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=50)
    warm = tf.estimator.WarmStartSettings(os.path.join(workdir, "nowhere"), vars_to_warm_start=[])
    with _info_lines() as seen:
        estimator = Estimator(
            head=tf.estimator.RegressionHead(),
            subnetwork_generator=_Generator(tf),
            max_iteration_steps=2,
            max_iterations=2,
            model_dir=model_dir,
            config=config,
        )
        estimator.train(_input_fn(tf), steps=3)
        estimator.train(_input_fn(tf), steps=3)
        estimator.train(_input_fn(tf), steps=2)
        results = estimator.evaluate(_input_fn(tf, repeat=False, batch=12), name="holdout")
        warmed = Estimator(
            head=tf.estimator.RegressionHead(),
            subnetwork_generator=_Generator(tf),
            max_iteration_steps=2,
            model_dir=os.path.join(workdir, "warm"),
            warm_start_from=warm,
        )
    replaced = estimator.config.replace(model_dir=os.path.join(model_dir, "temp"))
    names = estimator.get_variable_names()

    def train_outside_the_loop():
        with tf.Graph().as_default():
            tf.compat.v1.train.create_global_step()
            features, labels = _features_and_labels(tf, _input_fn(tf)())
            estimator.model_fn(features, labels, tf.estimator.ModeKeys.TRAIN, estimator.config)

    try:
        train_outside_the_loop()
        refused = None
    except Exception as error:  # (what the user sees: type and first line)
        refused = [type(error).__name__, str(error).splitlines()[0]]
    return {
        "exact": {
            "log_lines": marked_lines(seen, workdir, ADANET_MARKERS),
            "params": estimator.params,
            "latest": os.path.basename(estimator.latest_checkpoint()),
            "current_iteration": int(estimator.get_variable_value("current_iteration")),
            "global_step": int(estimator.get_variable_value("global_step")),
            "names": names,
            "replaced": [
                os.path.relpath(replaced.model_dir, workdir),
                replaced.tf_random_seed,
                replaced.save_checkpoints_steps,
                os.path.relpath(estimator.config.model_dir, workdir),
            ],
            "eval_dir": os.path.relpath(estimator.eval_dir("holdout"), workdir),
            "warm_start": [
                type(warmed._warm_start_settings).__name__,
                os.path.relpath(warmed._warm_start_settings.ckpt_to_initialize_from, workdir),
            ],
            "evaluate": sorted(results),
            "train_outside_the_loop": refused,
            "model_dir": listing(model_dir),
        },
        "close": {"evaluate": {k: float(v) for k, v in results.items()}},
    }


def _adanet_tpu_estimator(tf):
    """adanet.TPUEstimator's class: AdaNet's Estimator and tf.compat.v1.estimator.tpu's
    TPUEstimator together, each temporary estimator a TPUEstimator (here use_tpu=False)."""
    from tensorflow_estimator.python.estimator.tpu import tpu_estimator

    tpu = tf.compat.v1.estimator.tpu

    class TPUEstimator(_adanet_estimator(tf), tpu.TPUEstimator):
        def __init__(self, head, subnetwork_generator, max_iteration_steps, **kwargs):
            self._tpu_args = {
                key: kwargs[key]
                for key in ("use_tpu", "train_batch_size", "eval_batch_size", "predict_batch_size")
            }
            self._original_config = kwargs["config"]
            super().__init__(
                head,
                subnetwork_generator,
                max_iteration_steps,
                export_saved_model_api_version=tpu_estimator.ExportSavedModelApiVersion.V2,
                **kwargs,
            )

        def _create_temp_estimator(self, config, **model_fn_args):
            return tpu.TPUEstimator(
                model_fn=self._create_model_fn(**model_fn_args),
                config=config,
                model_dir=config.model_dir,
                export_saved_model_api_version=tpu_estimator.ExportSavedModelApiVersion.V2,
                **self._tpu_args,
            )

        @contextlib.contextmanager
        def _call_input_fn_in_new_graph(self, input_fn, config):
            bound = functools.partial(input_fn, params=self.params)
            with super()._call_input_fn_in_new_graph(bound, config) as result:
                yield result

    return TPUEstimator


def _tpu_input_fn(tf, repeat=True):
    def input_fn(params):
        data = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        data = data.repeat() if repeat else data
        return data.batch(params.get("batch_size", 12), drop_remainder=True)

    return input_fn


@program
def adanet_tpu_estimator_on_cpu(tf, workdir):
    TPUEstimator = _adanet_tpu_estimator(tf)
    model_dir = os.path.join(workdir, "tpu")
    tpu = tf.compat.v1.estimator.tpu
    config = tpu.RunConfig(
        tf_random_seed=5,
        save_checkpoints_steps=100,
        tpu_config=tpu.TPUConfig(iterations_per_loop=1),
    )
    with _info_lines() as seen:
        estimator = TPUEstimator(
            head=tf.estimator.RegressionHead(),
            subnetwork_generator=_Generator(tf),
            max_iteration_steps=2,
            model_dir=model_dir,
            config=config,
            use_tpu=False,
            train_batch_size=8,
            eval_batch_size=12,
            predict_batch_size=6,
        )
        estimator.train(_tpu_input_fn(tf), max_steps=4)
        results = estimator.evaluate(_tpu_input_fn(tf, repeat=False), steps=2)
        predictions = list(estimator.predict(_tpu_input_fn(tf, repeat=False)))
        export = estimator.export_saved_model(
            os.path.join(workdir, "export"), _serving_receiver(tf)
        )
    export = export.decode() if isinstance(export, bytes) else export
    return {
        "exact": {
            "log_lines": marked_lines(seen, workdir, ADANET_MARKERS),
            "params": sorted(estimator.params),
            "checkpoint": _checkpoint_names(tf, model_dir),
            "model_dir": listing(model_dir),
            "signatures": signatures(export),
            "evaluate": sorted(results),
        },
        "close": {
            "evaluate": {k: float(v) for k, v in results.items()},
            "predictions": [p["predictions"].tolist() for p in predictions],
            "served": _served(tf, export, X[:3]),
        },
    }
