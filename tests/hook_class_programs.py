"""tf.estimator's hook classes as public code uses them beyond `Estimator.train(hooks=)`:
tf.estimator 2.15's `LoggingTensorHook`, `NanTensorHook`, `StepCounterHook` and
`StopAtStepHook` were TF1's own classes (`tf.compat.v1.train.*`).

- `hooks_in_a_monitored_training_session`: TF1 code after `tf_upgrade_v2` (which renames
  `tf.train.StopAtStepHook` and its siblings to `tf.estimator.*`), tf-slim's and TF-GAN's
  loops: the four hooks passed to `tf.compat.v1.train.MonitoredTrainingSession`, what
  runs, logs and is written; `isinstance` checks against TF1's classes;
- `nan_loss_in_a_monitored_session`: `NanTensorHook` there, failing or stopping;
- `hook_refusals`: what the four say to arguments they refuse;
- `step_counter_subclasses_canned`, `step_counter_subclasses_tf1_model_fn`: subclasses of
  `tf.estimator.StepCounterHook` as public code writes them (minigo's EchoStepCounterHook
  and a throughput hook overriding `_log_and_record`, tf_yarn's, a hook setting
  `_summary_tag` in `begin()`, galileo's reading `_last_global_step` in `end(session)`)
  in `train()` of a canned estimator and of a TF1 model_fn: the calls they get, the
  summaries written.
- `subclasses_overriding_end`: subclasses of `tf.estimator.StopAtStepHook` and
  `LoggingTensorHook` overriding `end(session)` (reading the global step there), in
  `train()` of a canned estimator and of a Keras-layer model_fn with a Keras optimizer:
  the calls they get.
- `subclasses_calling_super_end_by_keyword`: subclasses of three of them overriding
  `end(self, session)` and calling `super().end(session=session)`, in `train()` of a
  canned estimator, with a StopAtStepHook subclass among them (2.15's own session) and
  without (the kit's TF2 path).
- `in_memory_evaluator_as_tf1_hook`: `tf.estimator.experimental.InMemoryEvaluatorHook`
  as TF1's hook: `isinstance`, driven by a program's own `MonitoredTrainingSession` over a
  graph of the Estimator's variables, and a subclass overriding `after_create_session`,
  `after_run` and `end(session)` (calling `super()`) in `train()` of a TF1 model_fn: the
  calls it gets, the evaluations written (steps, losses); `in_memory_evaluator_events`:
  the eval folder's tags and steps after a canned estimator's training with it.
- `early_stopping_hook_as_tf1_hook`: `make_early_stopping_hook`'s and
  `stop_if_no_decrease_hook`'s hooks as TF1's: `isinstance`, and the first driven by a
  program's own `MonitoredTrainingSession` (the runs, the questions asked, the variables);
  `non_chief_stop_hooks_as_tf1_hooks`: a worker's (TF_CONFIG) early-stopping hook and
  `make_stop_at_checkpoint_step_hook`'s, the same way.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (equal) and `close` values (1e-4). `tests/test_hook_classes.py`
compares them with 2.15's recording (`tests/tf215/record_family.py hook_class_programs`,
into `tests/data/tf215/hook_classes.json`).
"""

import glob
import os

import numpy as np

from tests.program_registry import registry
from tests.tf1_fidelity_programs import _info_lines, _normalized, _raised

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "hook_classes.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator

HOOKS = ("LoggingTensorHook", "NanTensorHook", "StepCounterHook", "StopAtStepHook")


def _event_tags(tf, folder):
    """{tag: steps} of the event files in `folder` (TF1's writers flushed first)."""
    tf.compat.v1.summary.FileWriterCache.clear()
    tags = {}
    for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(int(event.step))
    return {k: sorted(v) for k, v in sorted(tags.items())}


def _lines(lines, workdir, *markers):
    return [_normalized(line, workdir) for line in lines if any(m in line for m in markers)]


def _square_loop(tf):
    """A TF1 graph: the global step, w = 2 and loss = w * w, a GradientDescent step."""
    step = tf.compat.v1.train.get_or_create_global_step()
    w = tf.compat.v1.get_variable("w", initializer=2.0)
    loss = tf.square(w, name="loss")
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return step, loss, train_op


def _run(tf, hooks, train_op, fetch):
    """Runs `train_op` in a MonitoredTrainingSession until a hook stops it: the fetches."""
    fetched = []
    with tf.compat.v1.train.MonitoredTrainingSession(
        hooks=hooks, save_checkpoint_secs=None, save_summaries_steps=None
    ) as session:
        while not session.should_stop():
            fetched.append(session.run([train_op, fetch])[1])
    return fetched


@program
def hooks_in_a_monitored_training_session(tf, workdir):
    counter_dir = os.path.join(workdir, "steps")
    with tf.Graph().as_default():
        step, loss, train_op = _square_loop(tf)
        hooks = [
            tf.estimator.StopAtStepHook(last_step=5),
            tf.estimator.NanTensorHook(loss),
            tf.estimator.LoggingTensorHook({"loss": loss, "step": step}, every_n_iter=2),
            tf.estimator.StepCounterHook(every_n_steps=2, output_dir=counter_dir),
        ]
        with _info_lines() as lines:
            losses = _run(tf, hooks, train_op, loss)
        # then 3 more steps in a new session, by num_steps
        with _info_lines() as more_lines:
            more = _run(tf, [tf.estimator.StopAtStepHook(num_steps=3)], train_op, step)
    return {
        "exact": {
            "isinstance": {
                name: [
                    isinstance(hook, tf.compat.v1.train.SessionRunHook),
                    isinstance(hook, tf.estimator.SessionRunHook),
                    isinstance(hook, getattr(tf.compat.v1.train, name)),
                ]
                for name, hook in zip(HOOKS, [hooks[2], hooks[1], hooks[3], hooks[0]], strict=True)
            },
            "runs": len(losses),
            "log_lines": _lines(lines, workdir, "loss = ", "/sec"),
            "summaries": _event_tags(tf, counter_dir),
            "more_runs": len(more),  # (the step read beside the train op races it)
            "more_log_lines": _lines(more_lines, workdir, "loss = ", "/sec"),
        },
        "close": {"losses": np.asarray(losses).tolist()},
    }


@program
def nan_loss_in_a_monitored_session(tf, workdir):
    found = {}
    for fail in (True, False):
        with tf.Graph().as_default():
            step = tf.compat.v1.train.get_or_create_global_step()
            w = tf.compat.v1.get_variable("w", initializer=2.0)
            loss = tf.sqrt(w - 3.0, name="loss")  # NaN
            train_op = tf.compat.v1.assign_add(step, 1)
            hooks = [
                tf.estimator.NanTensorHook(loss, fail_on_nan_loss=fail),
                tf.estimator.StopAtStepHook(last_step=4),
            ]
            with _info_lines() as lines:
                raised = _raised(lambda hooks=hooks: _run(tf, hooks, train_op, step))  # noqa: B023
            found[f"fail_on_nan_loss={fail}"] = {
                "raised": raised,
                "lines": _lines(lines, workdir, "diverged", "NaN"),
            }
    return {"exact": found}


@program
def hook_refusals(tf, workdir):
    est = tf.estimator
    calls = {
        "StopAtStepHook()": lambda: est.StopAtStepHook(),
        "StopAtStepHook(1, 2)": lambda: est.StopAtStepHook(num_steps=1, last_step=2),
        "StepCounterHook(None)": lambda: est.StepCounterHook(every_n_steps=None),
        "StepCounterHook(1, 1)": lambda: est.StepCounterHook(every_n_steps=1, every_n_secs=1),
        "LoggingTensorHook(['x'])": lambda: est.LoggingTensorHook(["x"]),
        "LoggingTensorHook(['x'], 0)": lambda: est.LoggingTensorHook(["x"], every_n_iter=0),
        "LoggingTensorHook(['x'], 1, 1)": lambda: est.LoggingTensorHook(
            ["x"], every_n_iter=1, every_n_secs=1
        ),
    }
    return {"exact": {name: _raised(call) for name, call in calls.items()}}


def _step_counter_subclasses(tf, workdir):
    """Subclasses of tf.estimator.StepCounterHook as public code writes them; each records
    what it is called with."""
    calls = {}

    class EchoStepCounterHook(tf.estimator.StepCounterHook):
        """minigo's: logs, then records as its parent."""

        def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
            calls.setdefault("echo", []).append([int(elapsed_steps), int(global_step)])
            super()._log_and_record(elapsed_steps, elapsed_time, global_step)

    class ThroughputHook(tf.estimator.StepCounterHook):
        """examples per second: its own tag, the steps times the batch size."""

        def __init__(self, batch_size, **kwargs):
            self.batch_size = batch_size
            super().__init__(**kwargs)

        def begin(self):
            super().begin()
            self._summary_tag = "throughput"

        def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
            calls.setdefault("throughput", []).append([int(elapsed_steps), int(global_step)])
            super()._log_and_record(elapsed_steps * self.batch_size, elapsed_time, global_step)

    class SummaryAtEnd(tf.estimator.StepCounterHook):
        """galileo's: reads the last global step it saw when the run ends."""

        def end(self, session):
            calls.setdefault("last_global_step", []).append(int(self._last_global_step))
            super().end(session)

    hooks = [
        EchoStepCounterHook(every_n_steps=2, output_dir=os.path.join(workdir, "echo")),
        ThroughputHook(4, every_n_steps=3, output_dir=os.path.join(workdir, "throughput")),
        SummaryAtEnd(every_n_steps=2, output_dir=os.path.join(workdir, "end")),
    ]
    return hooks, calls


def _subclass_results(tf, workdir, train):
    hooks, calls = _step_counter_subclasses(tf, workdir)
    with _info_lines() as lines:
        train(hooks)
    return {
        "exact": {
            "calls": calls,
            "summaries": {
                name: _event_tags(tf, os.path.join(workdir, name))
                for name in ("echo", "throughput", "end")
            },
            "rate_lines": len(_lines(lines, workdir, "global_step/sec: ", "throughput: ")),
        }
    }


_X = np.linspace(-1, 1, 8, dtype=np.float32).reshape(-1, 1)


def _input_fn(tf):
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": _X}, 2 * _X)).batch(4).repeat()


@program
def step_counter_subclasses_canned(tf, workdir):
    column = tf.feature_column.numeric_column("x")
    model = tf.estimator.LinearRegressor([column], model_dir=os.path.join(workdir, "model"))
    return _subclass_results(
        tf, workdir, lambda hooks: model.train(_input_fn(tf), hooks=hooks, steps=7)
    )


@program
def step_counter_subclasses_tf1_model_fn(tf, workdir):
    def model_fn(features, labels, mode):
        prediction = tf.compat.v1.layers.dense(features["x"], 1)
        loss = tf.compat.v1.losses.mean_squared_error(labels, prediction)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    model = tf.estimator.Estimator(model_fn, model_dir=os.path.join(workdir, "model"))
    return _subclass_results(
        tf, workdir, lambda hooks: model.train(_input_fn(tf), hooks=hooks, steps=7)
    )


@program
def step_counter_subclass_with_session_methods(tf, workdir):
    """tensornets' evaluation hook: a StepCounterHook subclass overriding `after_run` to
    time its own step count with the parent's `_timer`, in a canned estimator's train()
    and evaluate()."""
    seen = {}

    class SecondsPerStep(tf.estimator.StepCounterHook):
        def __init__(self, every_n_steps, name):
            self._steps, self._name = 0, name
            super().__init__(every_n_steps)

        def after_run(self, run_context, run_values):
            self._steps += 1
            if self._timer.should_trigger_for_step(self._steps):
                elapsed, steps = self._timer.update_last_triggered_step(self._steps)
                if elapsed is not None:
                    seen.setdefault(self._name, []).append(steps)

    column = tf.feature_column.numeric_column("x")
    model = tf.estimator.LinearRegressor([column], model_dir=os.path.join(workdir, "model"))
    training, evaluation = SecondsPerStep(2, "train"), SecondsPerStep(1, "evaluate")
    model.train(_input_fn(tf), hooks=[training], steps=5)
    model.evaluate(_input_fn(tf), hooks=[evaluation], steps=3)
    return {"exact": {"seen": seen, "steps": [training._steps, evaluation._steps]}}


def _overriding_hooks(tf, seen):
    """Subclasses of the hooks overriding TF1's session methods, each calling super()."""

    class StopReporting(tf.estimator.StopAtStepHook):
        def end(self, session):
            step = session.run(tf.compat.v1.train.get_global_step())
            seen.append(["stop_end", int(step)])
            super().end(session)

    class LoggingReporting(tf.estimator.LoggingTensorHook):
        def end(self, session):
            seen.append(["logging_end", hasattr(session, "run")])
            super().end(session)

    return [
        StopReporting(num_steps=3),
        LoggingReporting({"loss": "loss"}, every_n_iter=2, at_end=True),
    ]


def _keras_model_fn(features, labels, mode):
    import tensorflow as tf

    layer = tf.keras.layers.Dense(1, kernel_initializer="zeros", name="dense")
    loss = tf.reduce_mean(tf.square(layer(features["x"]) - labels))
    variables = layer.trainable_variables
    update = tf.keras.optimizers.legacy.SGD(0.1).apply_gradients(
        zip(tf.gradients(loss, variables), variables, strict=True)
    )
    train_op = tf.group(update, tf.compat.v1.train.get_global_step().assign_add(1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@program
def subclasses_overriding_end(tf, workdir):
    """2.15 ran each in its session, its `end(session)` called; here they were swapped for
    fresh TF1 hooks, so the overrides never ran."""
    column = tf.feature_column.numeric_column("x")
    estimators = {
        "canned": tf.estimator.LinearRegressor([column], os.path.join(workdir, "canned")),
        "keras": tf.estimator.Estimator(_keras_model_fn, os.path.join(workdir, "keras")),
    }
    seen = {}
    for name, est in estimators.items():
        seen[name] = []
        est.train(_input_fn(tf), hooks=_overriding_hooks(tf, seen[name]))
        seen[name].append(["global_step", int(est.get_variable_value("global_step"))])
    return {"exact": seen, "close": {}}


@program
def stop_at_step_hook_at_or_past_its_step(tf, workdir):
    """`StopAtStepHook(last_step=...)` given to a call that starts at or past it: 2.15's
    hook asked to stop after a step only, so `train()` trained one step more and
    `evaluate()` evaluated one batch (here they trained none, and evaluate() failed with
    an UnboundLocalError). A canned estimator and a Keras-layer model_fn (the TF2 path)."""
    column = tf.feature_column.numeric_column("x")
    estimators = {
        "canned": tf.estimator.LinearRegressor([column], os.path.join(workdir, "canned")),
        "keras": tf.estimator.Estimator(_keras_model_fn, os.path.join(workdir, "keras")),
    }
    seen, close = {}, {}
    for name, est in estimators.items():
        est.train(_input_fn(tf), steps=3)
        steps = []
        for last_step in (3, 2):
            est.train(
                _input_fn(tf), steps=5, hooks=[tf.estimator.StopAtStepHook(last_step=last_step)]
            )
            steps.append(int(est.get_variable_value("global_step")))
        hooks = {
            "at": tf.estimator.StopAtStepHook(last_step=5),
            "past": tf.estimator.StopAtStepHook(last_step=2),
            "one_more": tf.estimator.StopAtStepHook(num_steps=1),
        }
        losses = {
            key: float(est.evaluate(_input_fn(tf), steps=2, hooks=[hook])["loss"])
            for key, hook in hooks.items()
        }
        seen[name] = {"global_steps": steps}
        close[name] = losses
    return {"exact": seen, "close": close}


def _ending_by_keyword(tf, base, seen, *args, **kwargs):
    """A subclass of `base` whose `end(session)` calls its parent's by keyword."""

    class EndingByKeyword(base):
        def end(self, session):
            seen.append(base.__name__)
            super().end(session=session)

    return EndingByKeyword(*args, **kwargs)


@program
def subclasses_calling_super_end_by_keyword(tf, workdir):
    """2.15's hooks named `end`'s parameter `session`; the kit's named it `logs`, so such
    a call failed with TypeError: unexpected keyword argument 'session'."""
    est = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x")], os.path.join(workdir, "model")
    )
    found = {}
    for name, with_stop in (("with_stop_hook", True), ("without", False)):
        seen = []
        hooks = [
            _ending_by_keyword(
                tf, tf.estimator.StepCounterHook, seen, 2, output_dir=os.path.join(workdir, name)
            ),
        ]
        if with_stop:
            hooks += [
                _ending_by_keyword(tf, tf.estimator.StopAtStepHook, seen, num_steps=3),
                _ending_by_keyword(
                    tf, tf.estimator.LoggingTensorHook, seen, {"loss": "loss"}, 2, at_end=True
                ),
            ]
        raised = _raised(lambda hooks=hooks: est.train(_input_fn(tf), hooks=hooks, steps=3))
        found[name] = {
            "raised": raised,
            "ended": sorted(seen),
            "global_step": int(est.get_variable_value("global_step")),
        }
    return {"exact": found}


def _w_model_fn(features, labels, mode):
    """A TF1 model_fn: prediction w * x, w from 0.5, GradientDescent."""
    import tensorflow as tf

    w = tf.compat.v1.get_variable("w", initializer=0.5)
    prediction = w * features["x"]
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=prediction)


def _eval_losses(tf, folder):
    """[step, loss] of each evaluation written to `folder`."""
    tf.compat.v1.summary.FileWriterCache.clear()
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            found += [
                [int(event.step), v.simple_value] for v in event.summary.value if v.tag == "loss"
            ]
    return found


@program
def in_memory_evaluator_as_tf1_hook(tf, workdir):
    """2.15's InMemoryEvaluatorHook was a TF1 SessionRunHook: a program's own session ran
    it (here: AttributeError, no `after_create_session`), and a subclass's overrides of
    its session methods were called (here: never)."""
    evaluation = lambda: tf.data.Dataset.from_tensor_slices(({"x": _X}, 2 * _X)).batch(4)  # noqa: E731
    est = tf.estimator.Estimator(_w_model_fn, os.path.join(workdir, "own"))
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(
        est, evaluation, every_n_iter=2, name="mine"
    )
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        w = tf.compat.v1.get_variable("w", initializer=0.5)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            tf.square(w - 2.0), global_step=step
        )
        raised = _raised(lambda: _run(tf, [hook, tf.estimator.StopAtStepHook(5)], train_op, step))
    calls = []

    class Counting(tf.estimator.experimental.InMemoryEvaluatorHook):
        def after_create_session(self, session, coord):
            calls.append("after_create_session")
            super().after_create_session(session, coord)

        def after_run(self, run_context, run_values):
            calls.append("after_run")
            super().after_run(run_context, run_values)

        def end(self, session):
            calls.append("end")
            super().end(session=session)

    trained = tf.estimator.Estimator(_w_model_fn, os.path.join(workdir, "trained"))
    trained.train(_input_fn(tf), steps=5, hooks=[Counting(trained, evaluation, every_n_iter=2)])
    own, subclassed = (
        _eval_losses(tf, os.path.join(workdir, *folder))
        for folder in (("own", "eval_mine"), ("trained", "eval"))
    )
    return {
        "exact": {
            "isinstance": isinstance(hook, tf.compat.v1.train.SessionRunHook),
            "own_session": {"raised": raised, "steps": [s for s, _ in own]},
            "subclass": {"calls": calls, "steps": [s for s, _ in subclassed]},
        },
        "close": {"own_session": [v for _, v in own], "subclass": [v for _, v in subclassed]},
    }


@program
def early_stopping_hook_as_tf1_hook(tf, workdir):
    """2.15's early-stopping hooks were TF1 SessionRunHooks: a program's own session ran
    one (here: AttributeError, no `after_create_session`)."""
    est = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x")], os.path.join(workdir, "model")
    )
    asked = []

    def should_stop():
        asked.append(len(asked))
        return len(asked) >= 3

    experimental = tf.estimator.experimental
    hook = experimental.make_early_stopping_hook(est, should_stop, None, run_every_steps=2)
    no_decrease = experimental.stop_if_no_decrease_hook(est, "loss", 10)
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.assign_add(step, 1)
        with _info_lines() as lines:
            raised = _raised(lambda: _run(tf, [hook], train_op, step))
        names = sorted(v.op.name for v in tf.compat.v1.global_variables())
    return {
        "exact": {
            "isinstance": [
                isinstance(h, tf.compat.v1.train.SessionRunHook) for h in (hook, no_decrease)
            ],
            "raised": raised,
            "asked": len(asked),
            "variables": names,
            "lines": _lines(lines, workdir, "early stopping"),
        }
    }


def _stop_signal(tf):
    """The early-stopping signal 2.15's hooks share, made first, and its raising op."""
    with tf.compat.v1.variable_scope("signal_early_stopping", reuse=tf.compat.v1.AUTO_REUSE):
        signal = tf.compat.v1.get_variable(
            "STOP",
            shape=[],
            dtype=tf.bool,
            initializer=tf.compat.v1.constant_initializer(False),
            collections=[tf.compat.v1.GraphKeys.GLOBAL_VARIABLES],
            trainable=False,
        )
    return signal.assign(True)


def _runs_until_stopped(tf, hook, raise_signal=False):
    """Runs a step counter in a MonitoredTrainingSession with `hook` (at most 6 runs; with
    `raise_signal`, the stop signal raised after the second): how many ran."""
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.assign_add(step, 1)
        raise_op = _stop_signal(tf) if raise_signal else None
        runs = 0
        with tf.compat.v1.train.MonitoredTrainingSession(
            hooks=[hook], save_checkpoint_secs=None, save_summaries_steps=None
        ) as session:
            while not session.should_stop() and runs < 6:
                session.run(train_op)
                runs += 1
                if raise_op is not None and runs == 2:
                    session.run_step_fn(lambda step_context: step_context.session.run(raise_op))
        return runs


def _value_or_error(call):
    """`call()`'s value, or what it raised."""
    found = []
    raised = _raised(lambda: found.append(call()))
    return found[0] if raised is None else raised


@program
def non_chief_stop_hooks_as_tf1_hooks(tf, workdir):
    """A worker's stop hooks were TF1 SessionRunHooks under 2.15 (here: the kit's own,
    AttributeError in a program's session): the signal's reader stops the run after the
    chief's signal, the checkpoint-step hook at its step once the chief's checkpoint (of
    step 5) is past it."""
    import json

    model_dir = os.path.join(workdir, "model")
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.Session() as session:
            session.run(step.initializer)
            session.run(step.assign(5))
            tf.compat.v1.train.Saver().save(session, os.path.join(model_dir, "model.ckpt"), 5)
    cluster = {"chief": ["localhost:1"], "worker": ["localhost:2"], "ps": ["localhost:3"]}
    os.environ["TF_CONFIG"] = json.dumps(
        {"cluster": cluster, "task": {"type": "worker", "index": 0}}
    )
    try:
        est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], model_dir)
    finally:
        del os.environ["TF_CONFIG"]
    experimental = tf.estimator.experimental
    signalled = experimental.make_early_stopping_hook(est, lambda: True, None, run_every_steps=1)
    at_checkpoint = experimental.make_stop_at_checkpoint_step_hook(est, 2, 0)
    return {
        "exact": {
            "isinstance": [
                isinstance(h, tf.compat.v1.train.SessionRunHook) for h in (signalled, at_checkpoint)
            ],
            "signalled_runs": _value_or_error(lambda: _runs_until_stopped(tf, signalled, True)),
            "at_checkpoint_runs": _value_or_error(lambda: _runs_until_stopped(tf, at_checkpoint)),
        }
    }


@program
def sessions_hooks_are_given(tf, workdir):
    """What hooks and saving listeners are handed as a session, as user code checks it
    (`isinstance(session, tf.compat.v1.Session)` before running or saving with it): in a
    TF1 model_fn's train(), a canned model's evaluate() and predict()."""
    seen = []

    def looked_at(where, session):
        seen.append(
            [
                where,
                isinstance(session, tf.compat.v1.Session),
                isinstance(session, tf.compat.v1.InteractiveSession),
                session.__class__.__name__,
                repr(session).split(" object at ")[0],
            ]
        )

    class Looking(tf.compat.v1.train.SessionRunHook):
        def after_create_session(self, session, coord):
            looked_at("after_create_session", session)

        def after_run(self, run_context, run_values):
            if not seen or seen[-1][0] != "after_run":
                looked_at("after_run", run_context.session)

        def end(self, session):
            looked_at("end", session)

    class Listening(tf.estimator.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            looked_at("after_save", session)

    model = tf.estimator.Estimator(_w_model_fn, model_dir=os.path.join(workdir, "tf1"))
    model.train(_input_fn(tf), hooks=[Looking()], steps=2, saving_listeners=[Listening()])
    column = tf.feature_column.numeric_column("x")
    canned = tf.estimator.LinearRegressor([column], model_dir=os.path.join(workdir, "canned"))
    canned.train(_input_fn(tf), steps=2)
    canned.evaluate(_input_fn(tf), hooks=[Looking()], steps=1)
    features = lambda: tf.data.Dataset.from_tensor_slices({"x": _X}).batch(4)  # noqa: E731
    next(iter(canned.predict(features, hooks=[Looking()])))
    return {"exact": {"seen": seen}}


@program
def in_memory_evaluator_events(tf, workdir):
    """A canned LinearRegressor (the kit's TF2 path) trained with an
    InMemoryEvaluatorHook: 2.15's evaluations read no checkpoint, so its eval folder held
    the metrics at each evaluation's step and no `checkpoint_path` summary (the kit wrote
    the latest checkpoint's, `model.ckpt-0` at steps 2 and 4), nor logged its line."""
    folder = os.path.join(workdir, "model")
    evaluation = lambda: tf.data.Dataset.from_tensor_slices(({"x": _X}, 2 * _X)).batch(4)  # noqa: E731
    est = tf.estimator.LinearRegressor([tf.feature_column.numeric_column("x")], folder)
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, evaluation, every_n_iter=2)
    with _info_lines() as lines:
        est.train(_input_fn(tf), steps=5, hooks=[hook])
    return {
        "exact": {
            "events": _event_tags(tf, os.path.join(folder, "eval")),
            "lines": _lines(lines, workdir, "checkpoint_path"),
        }
    }
