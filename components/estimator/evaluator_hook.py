"""`experimental.InMemoryEvaluatorHook`: evaluation inside `train()`, without a checkpoint.

As with tf.estimator, the model is evaluated as training leaves it: before the
first step, every `every_n_iter` steps and once more at the end, each result
written to `eval_dir(name)` under the global step of the moment.  On the TF2
path evaluation and training share their variables, so nothing is copied.
"""

import contextlib

import tensorflow as tf

from components.estimator.hooks import Hook


@contextlib.contextmanager
def _current_variables(estimator):
    """Makes `estimator.evaluate` read the variables as they are: only the metrics
    start afresh (no restore from a checkpoint)."""

    def reset_metrics(checkpoint_path):
        for variable in estimator._store.metric_variables():
            variable.assign(tf.zeros_like(variable))

    write = estimator._write_eval_summaries
    estimator._prepare_eval = reset_metrics
    estimator._note_untrained = lambda checkpoint_path, mode: None  # (none is read)
    # (Training's variables, whether a checkpoint holds them yet or not.)
    estimator._forget_variables_without_a_checkpoint = lambda checkpoint_path: None
    # As 2.15's, which evaluated no checkpoint: no `checkpoint_path` summary, nor its line.
    estimator._write_eval_summaries = lambda results, name, _, graph: write(
        results, name, None, graph
    )
    try:
        yield
    finally:
        del estimator._prepare_eval, estimator._note_untrained
        del estimator._forget_variables_without_a_checkpoint, estimator._write_eval_summaries


class InMemoryEvaluatorHook(Hook, tf.compat.v1.train.SessionRunHook):
    """Evaluates `input_fn` (for `steps` batches, or all of it) with the model being trained.

    The results of the latest evaluation are kept in `results` too.

    As 2.15's, it is a TF1 `SessionRunHook` too: in a graph with a session (the
    Estimator's graph-mode path, or a program's own `MonitoredSession`) `begin()` builds
    the evaluation graph, `after_create_session` evaluates first, `after_run` every
    `every_n_iter` runs and `end(session)` once more. A subclass overriding one of those
    runs in a graph with a session, its own methods called, as there."""

    def __init__(self, estimator, input_fn, steps=None, hooks=None, name=None, every_n_iter=100):
        from components.estimator import graph_mode

        if every_n_iter is None or every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        config = estimator._user_config
        if config.num_ps_replicas > 0 or config.num_worker_replicas > 1:
            raise ValueError("InMemoryEvaluator supports only single machine (aka Local) setting.")
        hooks = list(hooks or ())
        tf1_hooks = [type(h).__name__ for h in hooks if graph_mode.is_session_run_hook(h)]
        if tf1_hooks:
            raise ValueError(
                f"InMemoryEvaluatorHook: hooks {tf1_hooks} are TF1 SessionRunHooks, which run "
                "only in a graph-mode evaluation, and that reads a checkpoint, not the model "
                "in memory. Pass this kit's Hooks, or evaluate from checkpoints "
                "(train_and_evaluate)."
            )
        self._estimator = estimator
        self._input_fn = input_fn
        self._steps = steps
        self._hooks = hooks
        self._name = name
        self._every_n_iter = every_n_iter
        self.results = None

    @property
    def max_steps_per_call(self):
        return self._every_n_iter - self._iterations % self._every_n_iter

    # (A subclass overriding TF1's session methods of this class runs in a session.)
    _overridden_in_a_session = property(lambda self: InMemoryEvaluatorHook)
    _in_session = None  # the evaluator of a graph-mode run, from its begin() on

    def begin(self):
        self._in_session = None
        if not tf.executing_eagerly():  # (in a graph, for a session: TF1's hook)
            self._in_session = _GraphInMemoryEvaluator(self)
            self._in_session.begin()
            return
        self._iterations = 0
        self._evaluate()
        self._start_step = int(self.results["global_step"])

    def after_create_session(self, session, coord):
        if self._in_session is not None:
            self._in_session.after_create_session(session, coord)

    def after_run(self, run_context, run_values):
        if self._in_session is not None:
            self._in_session.after_run(run_context, run_values)

    def after_step(self, context, logs):
        done = int(logs["global_step"]) - self._start_step
        due = done // self._every_n_iter > self._iterations // self._every_n_iter
        self._iterations = done
        if due:
            self._evaluate()

    def end(self, session):  # (the last step's logs on the TF2 path)
        if self._in_session is not None:
            self._in_session.end(session)
        else:
            self._evaluate()

    def _evaluate(self):
        with _current_variables(self._estimator):
            self.results = self._estimator.evaluate(
                self._input_fn, steps=self._steps, hooks=self._hooks, name=self._name
            )

    def session_run_hook(self, built, tensors):
        """On the graph-mode path, itself: TF1's shape of it (`begin()` in the graph), each
        evaluation reading the training session's variables, as tf.estimator did."""
        return self


class _LoadedVariables(tf.compat.v1.train.SessionRunHook):
    """Sets an evaluation graph's variables to `values` ({op name: value}) once its
    session exists (after any restore): the model as training holds it."""

    def __init__(self, values):
        self._values = values

    def begin(self):
        self._variables = [v for v in tf.compat.v1.global_variables() if v.op.name in self._values]

    def after_create_session(self, session, coord):
        for variable in self._variables:
            variable.load(self._values[variable.op.name], session)


class _GraphInMemoryEvaluator:
    """An InMemoryEvaluatorHook in a TF1 training session: evaluates when the session
    starts, every `every_n_iter` runs and at the end, with the training variables'
    values of the moment (no checkpoint), its results kept in the hook's `results`. As
    tf.estimator's, it builds its evaluation graph once, in `begin()` (input_fn and
    model_fn called once), and runs it in a session of its own each time."""

    def __init__(self, hook):
        self._hook = hook

    def begin(self):
        from components.estimator import graph_mode
        from components.estimator.model_fn import ModeKeys

        hook = self._hook
        self._iterations = 0
        self._variables = {v.op.name: v for v in tf.compat.v1.global_variables()}
        built = graph_mode.ModeGraph(hook._estimator, ModeKeys.EVAL, input_fn=hook._input_fn)
        self._evaluation = graph_mode.Evaluation(built, hook._hooks)

    def after_create_session(self, session, coord):
        self._evaluate(session)

    def after_run(self, run_context, run_values):
        self._iterations += 1
        if self._iterations % self._hook._every_n_iter == 0:
            self._evaluate(run_context.session)

    def end(self, session):
        self._evaluate(session)

    def _evaluate(self, session):
        from components.estimator import estimator as estimator_lib

        hook, evaluation = self._hook, self._evaluation
        loaded = _LoadedVariables(session.run(self._variables))
        results = evaluation.run(hook._steps, None, first_hooks=[loaded])
        hook._estimator._write_eval_summaries(results, hook._name, None, evaluation.built.graph)
        hook.results = estimator_lib.in_215_order(results)
