"""The files a TF1-path train() call writes at its start, written with less work.

The Estimator's CheckpointSaverHook exports the finalized graph once per call and writes
`graph.pbtxt` through `graph_mode.graph_as_text`; what lands in model_dir must be what
TensorFlow's stock code (tf.estimator 2.15's CheckpointSaverHook and Saver) writes for
the call's graph: the same `graph.pbtxt`, the same `.meta` for every checkpoint, the
call's graph in the events.
"""

import glob
import os

import numpy as np
import tensorflow as tf
from google.protobuf import text_format
from tensorflow.core.framework import graph_pb2
from tensorflow.core.protobuf import meta_graph_pb2

from components import estimator
from components.estimator import graph_mode

v1 = tf.compat.v1


def _model_fn(features, labels, mode):
    column = tf.feature_column.embedding_column(
        tf.feature_column.categorical_column_with_vocabulary_list("word", ["ä", "b", "c"]), 2
    )
    net = v1.feature_column.input_layer(features, [column, tf.feature_column.numeric_column("x")])
    net = v1.layers.dense(net, 3, activation=tf.nn.relu)
    logits = v1.layers.dense(net, 1)
    loss = v1.losses.mean_squared_error(labels, logits) * tf.constant(0.5, name="half")
    optimizer = v1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=v1.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn():
    features = {"word": np.array([["ä"], ["b"], ["c"], ["q"]]), "x": np.arange(4.0)[:, None]}
    labels = np.arange(4.0)[:, None]
    return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(2)


class _StockExports(v1.train.CheckpointSaverListener):
    """After each save, what TensorFlow's stock code writes for the call's graph: the
    Saver's `export_meta_graph` (a checkpoint's `.meta`) and `write_graph`'s text."""

    def __init__(self):
        self.metas, self.graph_texts, self.graph_defs = {}, [], []

    def after_save(self, session, global_step):
        saver = session.graph.get_collection(v1.GraphKeys.SAVERS)[0]
        exported = saver.export_meta_graph()  # (the stock Saver.save's own call)
        _without_kit_ops(session.graph, exported)
        self.metas[int(global_step)] = exported.SerializeToString(deterministic=True)
        graph_def = session.graph.as_graph_def(add_shapes=True)
        graph_mode.without_kit_ops(session.graph, graph_def)
        self.graph_defs.append(graph_def)
        self.graph_texts.append(text_format.MessageToString(graph_def))


def _without_kit_ops(graph, exported):
    """The stock export without the op the kit adds for its own use (2.15's graph had
    none), nor that op's type in the MetaGraph's op list."""
    graph_mode.without_kit_ops(graph, exported.graph_def)
    functions = exported.graph_def.library.function
    used = {n.op for n in exported.graph_def.node} | {n.op for f in functions for n in f.node_def}
    kept = [op for op in exported.meta_info_def.stripped_op_list.op if op.name in used]
    del exported.meta_info_def.stripped_op_list.op[:]
    exported.meta_info_def.stripped_op_list.op.extend(kept)


def _events_graphs(model_dir):
    """The graphs in model_dir's events."""
    found = []
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in v1.train.summary_iterator(path):
            if event.HasField("graph_def"):
                found.append(graph_pb2.GraphDef.FromString(event.graph_def))
    return found


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def test_train_writes_what_the_stock_checkpoint_saver_hook_writes(tmp_path):
    model_dir = str(tmp_path)
    config = estimator.RunConfig(model_dir=model_dir, tf_random_seed=7, save_checkpoints_steps=2)
    model = estimator.Estimator(_model_fn, config=config)
    calls = [_StockExports(), _StockExports()]
    for stock in calls:
        model.train(_input_fn, steps=3, saving_listeners=[stock])
        # Each save's .meta (the call's start, every 2 steps, its end) is the stock export.
        for step, meta in stock.metas.items():
            assert _read(os.path.join(model_dir, f"model.ckpt-{step}.meta")) == meta, step
        assert _read(os.path.join(model_dir, "graph.pbtxt")).decode() == stock.graph_texts[0]
    assert sorted(calls[0].metas) == [0, 2, 3] and sorted(calls[1].metas) == [3, 5, 6]
    graphs = _events_graphs(model_dir)  # (and the summary writer's, of the unfinished graph)
    assert all(stock.graph_defs[0] in graphs for stock in calls)
    meta_graph = meta_graph_pb2.MetaGraphDef.FromString(calls[1].metas[6])
    assert meta_graph.saver_def.filename_tensor_name  # (a real export, with the Saver's)


def test_graph_as_text_is_text_format_s_text():
    graph = tf.Graph()
    with graph.as_default():
        words = tf.constant(["ä", "tab\t", 'quote"'], name="words")
        values = tf.constant([[0.1, 1e-7], [3.0, float("inf")]], name="values")
        tf.strings.join([words, words], separator="é")
        tf.cast(values, tf.float16, name="half")
        tf.function(lambda x: x * 2.5)(values)  # a function library, with its attributes
        v1.placeholder(tf.int64, [None, 3], name="ids")
    graph_def = graph.as_graph_def(add_shapes=True)
    assert graph_def.library.function
    assert graph_mode.graph_as_text(graph_def) == text_format.MessageToString(graph_def)
