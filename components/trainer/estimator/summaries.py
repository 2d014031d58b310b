"""Reading back the scalar summaries the Estimator writes (for exporters and early stopping)."""

import collections

import tensorflow as tf
from tensorboard.backend.event_processing import event_file_loader


def read_scalars_by_step(event_files):
    """{step: {tag: value}} from TF2 scalar summaries in `event_files`."""
    by_step = collections.defaultdict(dict)
    for path in sorted(event_files):
        for event in event_file_loader.EventFileLoader(path).Load():
            for value in event.summary.value:
                if value.HasField("tensor"):
                    by_step[event.step][value.tag] = float(tf.make_ndarray(value.tensor))
                elif value.HasField("simple_value"):
                    by_step[event.step][value.tag] = value.simple_value
    return dict(by_step)
