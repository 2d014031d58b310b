"""`tf.data.experimental.CheckpointInputPipelineHook`, which TensorFlow 2.16 dropped with
tf.estimator: a training hook that saves where the input's iterators are, so a later
`train()` call (or a restarted job) reads on from there instead of from the start.

As tf.estimator 2.15's TensorFlow did: the iterators of the training graph (its
`"iterators"` collection: the Estimator's own over an input_fn's Dataset, and any the
input_fn made) are saved beside the model's checkpoints, under `input.ckpt-<step>`
(`input_<task type>_<task id>.ckpt-<step>` when several workers train), listed in
`checkpoint_input` (not `checkpoint`, which lists the model's), on the Estimator's
checkpoint schedule (`save_checkpoints_steps` or `save_checkpoints_secs`) and at the end
of the call. The first step of a call restores the latest of them, or, when there is
none, saves the iterators as they start. Such a hook needs a session: the Estimator runs
the call in a graph, as 2.15 ran every call.
"""

import tensorflow as tf
from tensorflow.python.data.experimental.ops import iterator_ops as experimental_iterator_ops
from tensorflow.python.data.ops import iterator_ops

_V1 = tf.compat.v1


class _InputSaver(_V1.train.Saver):
    """A Saver whose checkpoints are listed in a state file of their own."""

    def __init__(self, saveables, latest_filename):
        super().__init__(saveables, sharded=True)
        self._latest_filename = latest_filename

    def save(self, sess, save_path, global_step=None, latest_filename=None, **kwargs):
        latest_filename = latest_filename or self._latest_filename
        return super().save(sess, save_path, global_step, latest_filename, **kwargs)


class CheckpointInputPipelineHook(_V1.train.SessionRunHook):
    """Saves the training input's iterators every checkpoint, and restores the latest
    such save when a `train()` call starts (see the module's docstring)."""

    def __init__(self, estimator, external_state_policy=None):
        # (TensorFlow's own check, with its ValueError for another string.)
        self._external_state_policy = (
            experimental_iterator_ops._convert_external_state_policy_to_enum(
                "fail" if external_state_policy is None else external_state_policy
            )
        )
        config = estimator.config
        prefix = "input"
        if config.num_worker_replicas > 1:
            prefix = f"input_{config.task_type}_{config.task_id}"
        # TF1's checkpoint saver, on the Estimator's schedule (its lines, its events), given
        # a Saver of the iterators alone in begin().
        self._saver_hook = _V1.train.CheckpointSaverHook(
            estimator.model_dir,
            save_secs=config.save_checkpoints_secs,
            save_steps=config.save_checkpoints_steps,
            checkpoint_basename=prefix + ".ckpt",
        )
        self._latest_filename = "checkpoint_" + prefix
        self._first_run = False

    def begin(self):
        hook = self._saver_hook
        if hook._saver is None and hook._scaffold is None:
            saveables = [
                iterator_ops._IteratorSaveable(
                    resource, resource.name, external_state_policy=self._external_state_policy
                )
                for resource in _V1.get_collection(iterator_ops.GLOBAL_ITERATORS)
            ]
            hook._saver = _InputSaver(saveables, self._latest_filename)
        hook.begin()

    def after_create_session(self, session, coord):
        self._first_run = True  # (restored at the first step, once every iterator started)

    def before_run(self, run_context):
        if self._first_run:
            self._first_run = False
            self._restore_or_save(run_context.session)
        return self._saver_hook.before_run(run_context)

    def _restore_or_save(self, session):
        hook = self._saver_hook
        latest = tf.train.latest_checkpoint(hook._checkpoint_dir, self._latest_filename)
        if latest:
            hook._get_saver().restore(session, latest)
            return
        step = session.run(hook._global_step_tensor)
        hook._save(session, step)
        hook._timer.update_last_triggered_step(step)

    def after_run(self, run_context, run_values):
        self._saver_hook.after_run(run_context, run_values)

    def end(self, session):
        self._saver_hook.end(session)


def install(tf_module):
    """Gives `tf.data.experimental` and `tf.compat.v1.data.experimental` the hook, where
    TensorFlow has none of its own."""
    for data in (tf_module.data, tf_module.compat.v1.data):
        namespace = getattr(data, "experimental", None)
        if namespace is not None and not hasattr(namespace, "CheckpointInputPipelineHook"):
            namespace.CheckpointInputPipelineHook = CheckpointInputPipelineHook
