"""Exporters: which evaluated checkpoints become SavedModels under `export/<name>/`.

Files are read and removed through `tf.io.gfile`, so a `gs://` (or any
TensorFlow file system) model_dir works as a local one does.
"""

import logging
import os

import numpy as np
import tensorflow as tf

from components.estimator import summaries

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
        if not name:
            raise ValueError("An exporter needs a name.")
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError("exports_to_keep must be positive or None.")
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
    for result in (best_eval_result, current_eval_result):
        if not result or "loss" not in result:
            raise ValueError("BestExporter's default compare_fn needs `loss` in eval results.")
    return current_eval_result["loss"] < best_eval_result["loss"]


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation beats the best so far.

    The best so far is read back from the eval event files on first use, so a
    restarted job does not re-export a worse model.
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
        if serving_input_receiver_fn is None:
            raise ValueError("BestExporter needs a serving_input_receiver_fn.")
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text, exports_to_keep)
        self._event_file_pattern = event_file_pattern
        self._compare_fn = compare_fn
        self._best = None
        self._loaded = False

    def _load_best(self, model_dir, current_step):
        # The evaluation being exported has just been written there too: skip it.
        self._loaded = True
        pattern = os.path.join(model_dir, self._event_file_pattern)
        for step, values in summaries.read_scalars_by_step(tf.io.gfile.glob(pattern)).items():
            if step == current_step:
                continue
            result = dict(values, global_step=step)
            if self._best is None or self._compare_fn(self._best, result):
                self._best = result

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        current = {k: np.asarray(v).item() for k, v in eval_result.items()}
        if not self._loaded and self._event_file_pattern:
            self._load_best(estimator.model_dir, current.get("global_step"))
        if self._best is not None and not self._compare_fn(self._best, current):
            return None
        self._best = current
        log.info("New best model at step %s; exporting.", current.get("global_step"))
        return self._save(estimator, export_path, checkpoint_path)
