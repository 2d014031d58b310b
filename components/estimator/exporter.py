"""Exporters: which evaluated checkpoints become SavedModels under `export/<name>/`.

Files are read and removed through `tf.io.gfile`, so a `gs://` (or any
TensorFlow file system) model_dir works as a local one does.
"""

import functools
import inspect
import logging
import os

import tensorflow as tf

log = logging.getLogger(__name__)


class Exporter:
    """Called by `train_and_evaluate` after each evaluation."""

    @property
    def name(self):
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        raise NotImplementedError


def _export_versions(export_path):
    if not tf.io.gfile.isdir(export_path):
        return []
    return sorted(int(n) for n in tf.io.gfile.listdir(export_path) if n.strip("/").isdigit())


def _keep_newest(export_path, exports_to_keep):
    if not exports_to_keep:
        return
    for version in _export_versions(export_path)[:-exports_to_keep]:
        path = os.path.join(export_path, str(version))
        try:
            tf.io.gfile.rmtree(path)
        except tf.errors.NotFoundError:
            log.info("Export %s was already removed.", path)


class _SavedModelExporter(Exporter):
    def __init__(
        self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5
    ):
        # (2.15 took any name here: EvalSpec refuses a None or empty one.)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError("`exports_to_keep`, if provided, must be positive number")
        self._name = name
        self._receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text
        self._exports_to_keep = exports_to_keep

    @property
    def name(self):
        return self._name

    @property
    def serving_input_receiver_fn(self):
        return self._receiver_fn

    def _save(self, estimator, export_path, checkpoint_path):
        path = estimator.export_saved_model(
            export_path,
            self._receiver_fn,
            assets_extra=self._assets_extra,
            as_text=self._as_text,
            checkpoint_path=checkpoint_path,
        )
        _keep_newest(export_path, self._exports_to_keep)
        return path


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation; keeps the newest `exports_to_keep`."""

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        return self._save(estimator, export_path, checkpoint_path)


class FinalExporter(_SavedModelExporter):
    """Exports once, after the final evaluation."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text, None)

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if not is_the_final_export:
            return None
        log.info("Performing the final export in the end of training.")
        return self._save(estimator, export_path, checkpoint_path)


def _loss_smaller(best_eval_result, current_eval_result):
    """tf.estimator's default: the smaller `loss` is better."""
    for name, result in (
        ("best_eval_result", best_eval_result),
        ("current_eval_result", current_eval_result),
    ):
        if not result or "loss" not in result:
            raise ValueError(f"{name} cannot be empty or no loss is found in it.")
    return best_eval_result["loss"] > current_eval_result["loss"]


def _arg_names(fn):
    """The names a call can give positionally or by keyword, as 2.15's fn_args named them:
    a partial's bound ones left out."""
    if isinstance(fn, functools.partial):
        names = _arg_names(fn.func)[len(fn.args) :]
        return [n for n in names if n not in (fn.keywords or {})]
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds]


def _check_compare_fn(compare_fn):
    """2.15's checks: a compare_fn takes `best_eval_result` and `current_eval_result`
    and nothing else."""
    if compare_fn is None:
        raise ValueError("`compare_fn` must not be None.")
    args = set(_arg_names(compare_fn))
    for needed in ("best_eval_result", "current_eval_result"):
        if needed not in args:
            raise ValueError(f"compare_fn ({compare_fn}) must include {needed} argument.")
    others = list(args - {"best_eval_result", "current_eval_result"})
    if others:
        raise ValueError(f"compare_fn ({compare_fn}) has following not expected args: {others}")


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation beats the best so far, as tf.estimator 2.15's did.

    The first call in a process, and the first after the estimator's model_dir changed,
    reads the best result back from the eval events matching `event_file_pattern`
    (logging 'Loading best metric from event files.'); the first call always exports
    (2.15's `_has_exported`), later ones when `compare_fn(best_eval_result=...,
    current_eval_result=...)` says the evaluation is better.
    """

    def __init__(
        self,
        name="best_exporter",
        serving_input_receiver_fn=None,
        event_file_pattern="eval/*.tfevents.*",
        compare_fn=_loss_smaller,
        assets_extra=None,
        as_text=False,
        exports_to_keep=5,
    ):
        _check_compare_fn(compare_fn)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError(
                f"`exports_to_keep`, if provided, must be a positive number. Got {exports_to_keep}"
            )
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text, exports_to_keep)
        self._event_file_pattern = event_file_pattern
        self._compare_fn = compare_fn
        self._best = None
        self._model_dir = None
        self._has_exported = False

    def _best_in_events(self, pattern):
        """The best of the eval results the events hold: each event's simple values (the
        evaluations' scalars; global_step is the events' step, not a value)."""
        best = None
        for path in sorted(tf.io.gfile.glob(pattern)):
            for event in tf.compat.v1.train.summary_iterator(path):
                result = {
                    v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")
                }
                if result and (best is None or self._compare_fn(best, result)):
                    best = result
        return best

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if self._event_file_pattern and self._model_dir != estimator.model_dir:
            log.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            self._best = self._best_in_events(
                os.path.join(self._model_dir, self._event_file_pattern)
            )
        if not (
            self._best is None
            or not self._has_exported
            or self._compare_fn(best_eval_result=self._best, current_eval_result=eval_result)
        ):
            return None
        log.info("Performing best model export.")
        self._best = eval_result
        path = self._save(estimator, export_path, checkpoint_path)
        self._has_exported = True
        return path
