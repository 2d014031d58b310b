"""Programs that consume tf.estimator exports the way TF1-era serving and batch-scoring
code does, on tiny models trained a few steps.

Each program trains and exports a model (a TF1 `model_fn` over a parsing or a raw
receiver, with a vocabulary file as the export's asset; canned classifiers and
regressors), then reads the export as such code did:

- `tf.compat.v1.saved_model.loader.load(sess, [tag_constants.SERVING], export_dir)`, the
  MetaGraphDef's signature_defs (input and output tensor names, dtypes, shapes), and
  `sess.run` by the tensor names a user copied from 2.15's export
  (`input_example_tensor:0`, `head/predictions/probabilities:0`, ...);
- the tf.contrib.predictor replacement: a predictor feeding a signature by its input keys
  and fetching its outputs by key;
- `tf.saved_model.load(export_dir).signatures[...]`: output keys, dtypes, values;
- the export's files: `assets/` (the vocabulary's asset name, the asset tensor),
  `variables/` index keys, op names a user greps for in `saved_model.pb`;
- `saved_model_cli show --dir D --all`, run by each TensorFlow's own `saved_model_cli`
  (the one beside its Python), with the export's path taken out.

Each program takes the `tensorflow` module (2.15's, or 2.21's once
`components.estimator.install` gave it the kit's `tf.estimator`) and a fresh folder, and
returns `exact` parts (what such code reads through the signatures), `names` (what it
reads by 2.15's names: tensor names, index keys, ops, the CLI's listing) and `values`
(the scores each way, the class strings); `tests/test_export_consumers.py` compares them with 2.15's recording
(`tests/tf215/record_family.py export_consumer_programs`, into
`tests/data/tf215/export_consumers.json`).
"""

import os
import re
import subprocess
import sys

import numpy as np

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf215")
RECORDED = os.path.join(DATA_DIR, "export_consumers.json")
COLOURS = ["red", "green", "blue"]


def _rows(n=16, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    colour = np.array([COLOURS[i % 3] for i in range(n)])
    label = ((x[:, 0] + (colour == "red")) > 0.3).astype(np.int64)
    return x, colour, label


def _vocabulary(workdir):
    path = os.path.join(workdir, "colours.txt")
    with open(path, "w") as f:
        f.write("\n".join(COLOURS) + "\n")
    return path


def _input_fn(tf, n=16):
    x, colour, label = _rows(n)

    def input_fn():
        features = {"x": x, "colour": colour}
        return tf.data.Dataset.from_tensor_slices((features, label)).batch(8)

    return input_fn


def _serialized(tf, n=3):
    """`n` tf.Examples as a batch-scoring job serialized them."""
    x, colour, _ = _rows(n, seed=1)
    examples = []
    for values, name in zip(x, colour, strict=True):
        feature = {
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=values)),
            "colour": tf.train.Feature(bytes_list=tf.train.BytesList(value=[name.encode()])),
        }
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)))
    return [e.SerializeToString() for e in examples]


def _columns(tf, vocabulary):
    colour = tf.feature_column.categorical_column_with_vocabulary_file("colour", vocabulary)
    return (
        [tf.feature_column.numeric_column("x", shape=[2])],
        [tf.feature_column.indicator_column(colour)],
        colour,
    )


def _floats(value):
    return np.round(np.asarray(value, np.float64), 5).tolist()


def _tensor_info(info):
    return [info.name, int(info.dtype), [d.size for d in info.tensor_shape.dim]]


def _signature_defs(meta_graph):
    """{key: [method, {input: [name, dtype, shape]}, {output: ...}]}, TF2's init op left out."""
    return {
        key: [
            sig.method_name,
            {k: _tensor_info(v) for k, v in sorted(sig.inputs.items())},
            {k: _tensor_info(v) for k, v in sorted(sig.outputs.items())},
        ]
        for key, sig in sorted(meta_graph.signature_def.items())
        if not key.startswith("__")
    }


def _without_names(signature_defs):
    """The signature_defs as code that goes by keys sees them: no tensor names."""
    return {
        key: [method, {k: v[1:] for k, v in ins.items()}, {k: v[1:] for k, v in outs.items()}]
        for key, (method, ins, outs) in signature_defs.items()
    }


def _session_reads(tf, export_dir, feed, fetches, greps):
    """loader.load in a Session: the signature_defs, what `fetches` ({key: tensor name
    2.15 had}) gave fed `feed` ({tensor name: value}) or the error, the ops of `greps`
    the graph has, the asset files' tensors."""
    v1 = tf.compat.v1
    with tf.Graph().as_default() as graph, v1.Session() as sess:
        meta_graph = v1.saved_model.loader.load(
            sess, [v1.saved_model.tag_constants.SERVING], export_dir
        )
        ops = {op.name for op in graph.get_operations()}
        try:
            fetched = {
                k: _numbers_or_strings(v) for k, v in sess.run(fetches, feed_dict=feed).items()
            }
        except (KeyError, ValueError, TypeError) as error:
            fetched = type(error).__name__
        assets = sorted([a.filename, a.tensor_info.name] for a in _asset_file_defs(meta_graph))
        asset_values = sorted(
            os.path.basename(v.decode())
            for v in sess.run(v1.get_collection(v1.GraphKeys.ASSET_FILEPATHS))
        )
        return {
            "signature_defs": _signature_defs(meta_graph),
            "fetched_by_name": fetched,
            "ops": sorted(name for name in greps if name in ops),
            "asset_file_defs": assets,
            "asset_values": asset_values,
        }


def _asset_file_defs(meta_graph):
    """The AssetFileDefs of a MetaGraph: TF1's `saved_model_assets` collection, TF2's field."""
    from tensorflow.core.protobuf import meta_graph_pb2

    found = list(meta_graph.asset_file_def)
    for packed in meta_graph.collection_def["saved_model_assets"].any_list.value:
        asset = meta_graph_pb2.AssetFileDef()
        packed.Unpack(asset)
        found.append(asset)
    return found


def _predictor(tf, export_dir, key, inputs):
    """The tf.contrib.predictor replacement: loads `key`'s signature and feeds it by its
    input keys; {output key: values}."""
    v1 = tf.compat.v1
    with tf.Graph().as_default(), v1.Session() as sess:
        meta_graph = v1.saved_model.loader.load(sess, ["serve"], export_dir)
        signature = meta_graph.signature_def[key]
        feed = {signature.inputs[k].name: v for k, v in inputs.items()}
        fetches = {k: v.name for k, v in signature.outputs.items()}
        return {k: _numbers_or_strings(v) for k, v in sess.run(fetches, feed).items()}


def _numbers_or_strings(value):
    value = np.asarray(value)
    if value.dtype.kind in "SUO":
        return [v.decode() if isinstance(v, bytes) else str(v) for v in value.ravel()]
    return _floats(value)


def _tf2_signatures(tf, export_dir, calls):
    """tf.saved_model.load's signatures called with `calls` ({key: {input: value}}):
    {key: {output: [dtype, values]}}."""
    loaded = tf.saved_model.load(export_dir)
    result = {}
    for key, inputs in calls.items():
        outputs = loaded.signatures[key](**{k: tf.constant(v) for k, v in inputs.items()})
        result[key] = {
            k: [v.dtype.name, _numbers_or_strings(v.numpy())] for k, v in sorted(outputs.items())
        }
    return result


def saved_model_cli(export_dir):
    """`saved_model_cli show --dir D --all` of the running TensorFlow, the path taken out
    and TF's log lines dropped."""
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    shown = subprocess.run(
        [cli, "show", "--dir", export_dir, "--all"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    shown = shown.replace(export_dir, "EXPORT")
    lines = [line.rstrip() for line in shown.splitlines() if line.strip()]
    return [_sorted_op_set(line) for line in lines]


def _sorted_op_set(line):
    """The CLI's `... contains the following ops: {...}` line with the set sorted."""
    found = re.match(r"(.* contains the following ops: )\{(.*)\}$", line)
    if not found:
        return line
    return found.group(1) + ", ".join(sorted(found.group(2).split(", ")))


def _files(export_dir, tf):
    listed = []
    for root, _, files in os.walk(export_dir):
        listed += [os.path.relpath(os.path.join(root, f), export_dir) for f in files]
    keys = sorted(name for name, _ in tf.train.list_variables(f"{export_dir}/variables/variables"))
    return sorted(listed), keys


def _export(est, tf, workdir, receiver_fn):
    path = est.export_saved_model(os.path.join(workdir, "export"), receiver_fn)
    return path.decode() if isinstance(path, bytes) else path


def _consume(tf, export_dir, by_name, greps, predictor_key, predictor_inputs, tf2_calls):
    """What the consumers read; `by_name` = (feed {name: value}, fetches {key: name})."""
    session = _session_reads(tf, export_dir, *by_name, greps)
    files, index_keys = _files(export_dir, tf)
    predicted = _predictor(tf, export_dir, predictor_key, predictor_inputs)
    called = _tf2_signatures(tf, export_dir, tf2_calls)
    signature_defs = session.pop("signature_defs")
    fetched = session.pop("fetched_by_name")
    return {
        "exact": {
            "signature_defs": _without_names(signature_defs),
            "tag_constants": [
                tf.compat.v1.saved_model.tag_constants.SERVING,
                tf.compat.v1.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY,
            ],
            "predictor_keys": sorted(predicted),
            "tf2_outputs": {k: {o: v[0] for o, v in out.items()} for k, out in called.items()},
        },
        "names": {
            "signature_tensors": signature_defs,
            "fetched_by_name": fetched if isinstance(fetched, str) else sorted(fetched),
            "files": files,
            "index_keys": index_keys,
            **session,
        },
        "values": {
            "strings": _strings(predicted, called),
            "predictor": _numeric(predicted),
            "tf2": {k: _numeric({o: v[1] for o, v in out.items()}) for k, out in called.items()},
            "by_name": fetched if isinstance(fetched, dict) else {},
        },
    }


def _numeric(values):
    return {k: v for k, v in sorted(values.items()) if v and not isinstance(v[0], str)}


def _strings(predicted, called):
    found = {f"predictor/{k}": v for k, v in predicted.items() if v and isinstance(v[0], str)}
    for key, outputs in called.items():
        found.update(
            {f"{key}/{k}": v[1] for k, v in outputs.items() if v[1] and isinstance(v[1][0], str)}
        )
    return dict(sorted(found.items()))


# ------------------------------------------------------------------ a TF1 model_fn
def colour_model_fn(features, labels, mode, params):
    """A TF1-era model_fn: input_layer, named layers and outputs, a classify signature."""
    import tensorflow as tf

    v1 = tf.compat.v1
    net = v1.feature_column.input_layer(features, params["columns"])
    hidden = v1.layers.dense(
        net, 4, tf.nn.relu, kernel_initializer=v1.glorot_uniform_initializer(1), name="hidden"
    )
    logits = v1.layers.dense(
        hidden, 2, kernel_initializer=v1.glorot_uniform_initializer(2), name="logits"
    )
    probabilities = tf.nn.softmax(logits, name="probabilities")
    class_ids = tf.argmax(logits, 1, name="class_ids")
    predictions = {"probabilities": probabilities, "class_ids": class_ids}
    if mode == tf.estimator.ModeKeys.PREDICT:
        names = tf.tile(tf.constant([["no", "yes"]]), [tf.shape(logits)[0], 1], name="names")
        export_outputs = {
            "serving_default": tf.estimator.export.ClassificationOutput(
                scores=probabilities, classes=names
            ),
            "predict": tf.estimator.export.PredictOutput(predictions),
        }
        return tf.estimator.EstimatorSpec(
            mode, predictions=predictions, export_outputs=export_outputs
        )
    loss = v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _tf1_estimator(tf, workdir):
    numeric, indicator, _ = _columns(tf, _vocabulary(workdir))
    est = tf.estimator.Estimator(
        colour_model_fn,
        model_dir=os.path.join(workdir, "model"),
        params={"columns": numeric + indicator},
        config=tf.estimator.RunConfig(tf_random_seed=7),
    )
    est.train(_input_fn(tf), steps=3)
    return est, numeric + indicator


TF1_GREPS = [
    "input_example_tensor",
    "ParseExample/ParseExampleV2",
    "hidden/kernel",
    "logits/BiasAdd",
    "probabilities",
    "class_ids",
    "names",
    "global_step",
    "init_all_tables",
    "save/restore_all",
]


def tf1_model_fn_parsing(tf, workdir):
    """A TF1 model_fn exported over a parsing receiver, scored by its tensor names."""
    est, columns = _tf1_estimator(tf, workdir)
    spec = tf.feature_column.make_parse_example_spec(columns)
    export_dir = _export(
        est, tf, workdir, tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    )
    serialized = _serialized(tf)
    result = _consume(
        tf,
        export_dir,
        (
            {"input_example_tensor:0": serialized},
            {"probabilities": "probabilities:0", "class_ids": "class_ids:0"},
        ),
        TF1_GREPS,
        "serving_default",
        {"inputs": serialized},
        {"serving_default": {"inputs": serialized}, "predict": {"examples": serialized}},
    )
    result["names"]["saved_model_cli"] = saved_model_cli(export_dir)
    return result


def tf1_model_fn_raw(tf, workdir):
    """The same model_fn over a raw receiver of placeholders a TF1 user named."""
    est, _ = _tf1_estimator(tf, workdir)
    x, colour, _ = _rows(3, seed=1)

    def receiver_fn():
        inputs = {
            "x": tf.compat.v1.placeholder(tf.float32, [None, 2], name="x"),
            "colour": tf.compat.v1.placeholder(tf.string, [None], name="colour"),
        }
        return tf.estimator.export.ServingInputReceiver(inputs, inputs)

    export_dir = _export(est, tf, workdir, receiver_fn)
    feeds = {"x": x, "colour": colour.astype(bytes)}
    return _consume(
        tf,
        export_dir,
        ({"x:0": x, "colour:0": feeds["colour"]}, {"probabilities": "probabilities:0"}),
        ["x", "colour", "probabilities", "logits/BiasAdd"],
        "predict",
        feeds,
        {"predict": feeds},
    )


def head_model_fn(features, labels, mode, params):
    """A TF1 model_fn handing its logits to tf.estimator's BinaryClassHead."""
    import tensorflow as tf

    v1 = tf.compat.v1
    net = v1.feature_column.input_layer(features, params["columns"])
    logits = v1.layers.dense(
        net, 1, kernel_initializer=v1.glorot_uniform_initializer(3), name="logits"
    )

    def train_op_fn(loss):
        return v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=v1.train.get_global_step()
        )

    return tf.estimator.BinaryClassHead().create_estimator_spec(
        features, mode, logits, labels=labels, train_op_fn=train_op_fn
    )


def tf1_model_fn_head(tf, workdir):
    """A TF1 model_fn with a head: 2.15's head names (`head/predictions/probabilities`,
    `.../logistic`, `head/Tile`) fetched by name."""
    numeric, indicator, _ = _columns(tf, _vocabulary(workdir))
    est = tf.estimator.Estimator(
        head_model_fn,
        model_dir=os.path.join(workdir, "model"),
        params={"columns": numeric + indicator},
        config=_config(tf),
    )
    est.train(_input_fn(tf), steps=3)
    spec = tf.feature_column.make_parse_example_spec(numeric + indicator)
    export_dir = _export(
        est, tf, workdir, tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    )
    serialized = _serialized(tf)
    fetches = {
        "probabilities": "head/predictions/probabilities:0",
        "logistic": "head/predictions/logistic:0",
        "class_ids": "head/predictions/ExpandDims:0",
        "logits": "logits/BiasAdd:0",
    }
    return _consume(
        tf,
        export_dir,
        ({"input_example_tensor:0": serialized}, fetches),
        ["input_example_tensor", "head/Tile", *sorted(n.split(":")[0] for n in fetches.values())],
        "predict",
        {"examples": serialized},
        {"predict": {"examples": serialized}, "serving_default": {"inputs": serialized}},
    )


# ------------------------------------------------------------------ canned estimators
def _canned(tf, workdir, make, fetches, key="predict", cli=False, input_fn=None):
    """Trains `make(numeric, indicator, colour, model_dir)` 3 steps (on `input_fn`, else
    `_input_fn`'s), exports it over a parsing receiver and reads it; `fetches` the tensor
    names 2.15's export had."""
    numeric, indicator, colour = _columns(tf, _vocabulary(workdir))
    est = make(numeric, indicator, colour, os.path.join(workdir, "model"))
    est.train(input_fn or _input_fn(tf), steps=3)
    spec = tf.feature_column.make_parse_example_spec([*numeric, colour])
    export_dir = _export(
        est, tf, workdir, tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    )
    serialized = _serialized(tf)
    calls = {"predict": {"examples": serialized}, "serving_default": {"inputs": serialized}}
    result = _consume(
        tf,
        export_dir,
        ({"input_example_tensor:0": serialized}, fetches),
        [
            "input_example_tensor",
            "ParseExample/ParseExampleV2",
            *sorted(name.split(":")[0] for name in fetches.values()),
        ],
        key,
        {"examples": serialized},
        calls,
    )
    if cli:
        result["names"]["saved_model_cli"] = saved_model_cli(export_dir)
    return result


def dnn_classifier(tf, workdir):
    """DNNClassifier: its head's probabilities, logistic and logits fetched by name."""

    def make(numeric, indicator, colour, model_dir):
        return tf.estimator.DNNClassifier(
            [4], numeric + indicator, model_dir=model_dir, config=_config(tf)
        )

    fetches = {
        "probabilities": "head/predictions/probabilities:0",
        "logistic": "head/predictions/logistic:0",
        "logits": "dnn/logits/BiasAdd:0",
    }
    return _canned(tf, workdir, make, fetches, cli=True)


def linear_regressor(tf, workdir):
    """LinearRegressor: its predictions fetched by name."""

    def make(numeric, indicator, colour, model_dir):
        return tf.estimator.LinearRegressor([*numeric, colour], model_dir=model_dir)

    fetches = {
        "predictions": "linear/linear_model/linear/linear_model/linear/linear_model/weighted_sum:0"
    }
    return _canned(tf, workdir, make, fetches)


def dnn_linear_combined_classifier(tf, workdir):
    """DNNLinearCombinedClassifier: wide colour, deep numbers."""

    def make(numeric, indicator, colour, model_dir):
        return tf.estimator.DNNLinearCombinedClassifier(
            linear_feature_columns=[colour],
            dnn_feature_columns=numeric,
            dnn_hidden_units=[3],
            model_dir=model_dir,
            config=_config(tf),
        )

    return _canned(tf, workdir, make, {"probabilities": "head/predictions/probabilities:0"})


def _weighted_yes_no_input_fn(tf):
    """`_input_fn`'s rows with a weight `w` and the labels as strings "no" and "yes"."""
    x, colour, label = _rows()
    weight = np.linspace(0.5, 1.5, len(label)).astype(np.float32)
    words = np.array([["no", "yes"][i] for i in label]).reshape(-1, 1)

    def input_fn():
        features = {"x": tf.constant(x), "colour": tf.constant(colour), "w": tf.constant(weight)}
        return features, tf.constant(words)

    return input_fn


def linear_classifier_label_vocabulary(tf, workdir):
    """LinearClassifier with weight_column and label_vocabulary: its predicted classes
    are looked up in the vocabulary's table, `head/predictions/hash_table_Lookup/
    LookupTableFindV2:0`, fetched by name with its class ids and probabilities."""

    def make(numeric, indicator, colour, model_dir):
        return tf.estimator.LinearClassifier(
            [*numeric, colour],
            weight_column="w",
            label_vocabulary=["no", "yes"],
            model_dir=model_dir,
        )

    fetches = {
        "classes": "head/predictions/hash_table_Lookup/LookupTableFindV2:0",
        "class_ids": "head/predictions/ExpandDims:0",
        "probabilities": "head/predictions/probabilities:0",
        "logits": "linear/linear_model/linear/linear_model/linear/linear_model/weighted_sum:0",
    }
    return _canned(tf, workdir, make, fetches, input_fn=_weighted_yes_no_input_fn(tf))


def v1_dnn_classifier(tf, workdir):
    """tf.compat.v1.estimator.DNNClassifier: TF1's `dnn/head/...` names."""

    def make(numeric, indicator, colour, model_dir):
        return tf.compat.v1.estimator.DNNClassifier(
            [4], numeric + indicator, model_dir=model_dir, config=_config(tf)
        )

    fetches = {"probabilities": "dnn/head/predictions/probabilities:0"}
    return _canned(tf, workdir, make, fetches)


def v1_linear_regressor(tf, workdir):
    """tf.compat.v1.estimator.LinearRegressor: TF1's linear model in the `linear` scope,
    its sum `linear/linear_model/linear_model/linear_model/weighted_sum` (the V2 class's
    has `linear/linear_model/` three times over)."""

    def make(numeric, indicator, colour, model_dir):
        return tf.compat.v1.estimator.LinearRegressor([*numeric, colour], model_dir=model_dir)

    fetches = {"predictions": "linear/linear_model/linear_model/linear_model/weighted_sum:0"}
    return _canned(tf, workdir, make, fetches)


def v1_linear_classifier_3_classes(tf, workdir):
    """tf.compat.v1.estimator.LinearClassifier of 3 classes: TF1's multi-class head made
    every class's ids and strings first, its class ids `.../predictions/ExpandDims_2`."""

    def make(numeric, indicator, colour, model_dir):
        return tf.compat.v1.estimator.LinearClassifier(
            [*numeric, colour], n_classes=3, model_dir=model_dir
        )

    fetches = {
        "class_ids": "linear/head/predictions/ExpandDims_2:0",
        "logits": "linear/linear_model/linear_model/linear_model/weighted_sum:0",
        "probabilities": "linear/head/predictions/probabilities:0",
    }
    return _canned(tf, workdir, make, fetches)


def v1_baseline_classifier(tf, workdir):
    """tf.compat.v1.estimator.BaselineClassifier: its logits `baseline/Mul:0` (the bias
    times ones of the batch's shape) and its head's probabilities, fetched by name."""

    def make(numeric, indicator, colour, model_dir):
        return tf.compat.v1.estimator.BaselineClassifier(model_dir=model_dir)

    fetches = {
        "logits": "baseline/Mul:0",
        "probabilities": "head/predictions/probabilities:0",
    }
    return _canned(tf, workdir, make, fetches)


def _config(tf):
    return tf.estimator.RunConfig(tf_random_seed=7)


# ------------------------------------------------------------------ receiver alternatives
def _alternatives_receiver_fn(tf, spec, default=True):
    """A parsing receiver with `receiver_tensors_alternatives` as public serving code gave
    them: the parsed features, fed downstream of the parsing (`features`), the serialized
    examples as a single tensor (`example`, fed as `input`), and the dense features alone
    (`dense`, which cannot compute what also reads the sparse colour). With
    `default=False` the receiver tensors are empty and the examples come only through
    the alternative `raw_input`."""

    def receiver_fn():
        serialized = tf.compat.v1.placeholder(tf.string, [None], name="input_example_tensor")
        features = tf.io.parse_example(serialized, spec)
        if not default:
            return tf.estimator.export.ServingInputReceiver(
                features, {}, {"raw_input": {"examples": serialized}}
            )
        dense = {k: v for k, v in features.items() if not isinstance(v, tf.SparseTensor)}
        alternatives = {"features": dict(features), "example": serialized, "dense": dense}
        return tf.estimator.export.ServingInputReceiver(
            features, {"examples": serialized}, alternatives
        )

    return receiver_fn


def _feed(tf, name):
    """What a caller feeds an input named `name`: 3 serialized examples, their `x`, or
    their colour as a SparseTensor's parts (`colour_indices`, ...: the names
    `tf.saved_model.load` gives a sparse input's parts)."""
    x, colour, _ = _rows(3, seed=1)
    feeds = {
        "x": x,
        "colour_indices": np.array([[i, 0] for i in range(3)], np.int64),
        "colour_values": colour.astype(bytes),
        "colour_dense_shape": np.array([3, 1], np.int64),
    }
    return feeds.get(name, np.array(_serialized(tf)))


def _alternatives_read(tf, export_dir):
    """Each signature as serving code reads it: the SignatureDefs (`tf.compat.v1` loader,
    `saved_model_cli`), each signature called through `tf.saved_model.load` (its input
    names, dtypes and shapes, its outputs) and, where its inputs are dense tensors,
    through a Session by its input keys (the predictor)."""
    v1 = tf.compat.v1
    with tf.Graph().as_default(), v1.Session() as sess:
        meta_graph = v1.saved_model.loader.load(sess, ["serve"], export_dir)
    signature_defs = _signature_defs(meta_graph)
    loaded = tf.saved_model.load(export_dir)
    tf2_inputs, calls = {}, {}
    for key in signature_defs:
        specs = loaded.signatures[key].structured_input_signature[1]
        tf2_inputs[key] = {k: [s.dtype.name, s.shape.as_list()] for k, s in sorted(specs.items())}
        calls[key] = {name: _feed(tf, name) for name in specs}
    called = _tf2_signatures(tf, export_dir, calls)
    predicted = {
        key: _predictor(tf, export_dir, key, {k: _feed(tf, k) for k in ins})
        for key, (_, ins, _) in signature_defs.items()
        if all(info[0] for info in ins.values())
    }
    return {
        "exact": {
            "signatures": {key: sig[0] for key, sig in signature_defs.items()},
            "tf2_inputs": tf2_inputs,
            "tf2_outputs": {k: {o: v[0] for o, v in out.items()} for k, out in called.items()},
        },
        "names": {
            "signature_defs": _without_names(signature_defs),
            "signature_tensors": signature_defs,
            "saved_model_cli": [
                line for line in saved_model_cli(export_dir) if not OP_LINE.match(line)
            ],
        },
        "values": {
            "tf2": {k: {o: v[1] for o, v in out.items()} for k, out in called.items()},
            "predictor": predicted,
        },
    }


OP_LINE = re.compile(r".* contains the following ops: ")


def tf1_model_fn_alternatives(tf, workdir):
    """A TF1 model_fn exported over a parsing receiver with alternatives: each group adds
    `<name>:<output key>` signatures (`features:predict`, `example:serving_default`, ...)
    beside `serving_default` and `predict`, those it cannot serve left out."""
    est, columns = _tf1_estimator(tf, workdir)
    spec = tf.feature_column.make_parse_example_spec(columns)
    export_dir = _export(est, tf, workdir, _alternatives_receiver_fn(tf, spec))
    return _alternatives_read(tf, export_dir)


def tf1_model_fn_only_alternatives(tf, workdir):
    """The same model_fn over empty receiver tensors and one alternative, as public code
    wrote for canned models fed raw tensors: only `raw_input:...` signatures, no default."""
    est, columns = _tf1_estimator(tf, workdir)
    spec = tf.feature_column.make_parse_example_spec(columns)
    export_dir = _export(est, tf, workdir, _alternatives_receiver_fn(tf, spec, default=False))
    return _alternatives_read(tf, export_dir)


def _canned_alternatives(tf, workdir, make):
    numeric, indicator, colour = _columns(tf, _vocabulary(workdir))
    est = make(numeric, indicator, colour, os.path.join(workdir, "model"))
    est.train(_input_fn(tf), steps=3)
    spec = tf.feature_column.make_parse_example_spec([*numeric, colour])
    export_dir = _export(est, tf, workdir, _alternatives_receiver_fn(tf, spec))
    return _alternatives_read(tf, export_dir)


def dnn_classifier_alternatives(tf, workdir):
    """DNNClassifier over the receiver with alternatives: classify, regress and predict
    signatures for the examples' group, predict alone for the features'."""

    def make(numeric, indicator, colour, model_dir):
        return tf.estimator.DNNClassifier(
            [4], numeric + indicator, model_dir=model_dir, config=_config(tf)
        )

    return _canned_alternatives(tf, workdir, make)


def v1_dnn_classifier_alternatives(tf, workdir):
    """tf.compat.v1.estimator.DNNClassifier over the receiver with alternatives."""

    def make(numeric, indicator, colour, model_dir):
        return tf.compat.v1.estimator.DNNClassifier(
            [4], numeric + indicator, model_dir=model_dir, config=_config(tf)
        )

    return _canned_alternatives(tf, workdir, make)


def keras_model_fn(features, labels, mode):
    """A TF2-style model_fn (a Keras layer, a Keras optimizer under a GradientTape) that
    reads the dense `x` and the sparse `colour`."""
    import tensorflow as tf

    colour = features["colour"]
    if isinstance(colour, tf.SparseTensor):
        colour = tf.sparse.to_dense(colour, "")[:, 0]
    net = tf.concat([features["x"], tf.cast(tf.equal(colour, "red"), tf.float32)[:, None]], 1)
    layer = tf.keras.layers.Dense(
        2, kernel_initializer=tf.keras.initializers.GlorotUniform(4), name="logits"
    )
    with tf.GradientTape() as tape:
        logits = layer(net)
        if mode != tf.estimator.ModeKeys.PREDICT:
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
    predictions = {"probabilities": tf.nn.softmax(logits), "class_ids": tf.argmax(logits, 1)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    variables = layer.trainable_variables
    step = tf.keras.optimizers.SGD(0.1).apply_gradients(
        zip(tape.gradient(loss, variables), variables, strict=True)
    )
    global_step = tf.compat.v1.train.get_global_step()
    if global_step is not None:  # (2.15 stopped on it; the kit's TF2 path counts itself)
        step = tf.group(step, tf.compat.v1.assign_add(global_step, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=step)


def keras_model_fn_alternatives(tf, workdir):
    """A TF2-style model_fn (the kit exports it from a traced function, not a graph with
    a session) over the receiver with alternatives."""
    numeric, indicator, _ = _columns(tf, _vocabulary(workdir))
    est = tf.estimator.Estimator(keras_model_fn, model_dir=os.path.join(workdir, "model"))
    est.train(_input_fn(tf), steps=3)
    spec = tf.feature_column.make_parse_example_spec(numeric + indicator)
    export_dir = _export(est, tf, workdir, _alternatives_receiver_fn(tf, spec))
    return _alternatives_read(tf, export_dir)


PROGRAMS = {
    "tf1_model_fn_parsing": tf1_model_fn_parsing,
    "tf1_model_fn_raw": tf1_model_fn_raw,
    "tf1_model_fn_head": tf1_model_fn_head,
    "dnn_classifier": dnn_classifier,
    "linear_regressor": linear_regressor,
    "dnn_linear_combined_classifier": dnn_linear_combined_classifier,
    "linear_classifier_label_vocabulary": linear_classifier_label_vocabulary,
    "v1_dnn_classifier": v1_dnn_classifier,
    "v1_linear_regressor": v1_linear_regressor,
    "v1_baseline_classifier": v1_baseline_classifier,
    "v1_linear_classifier_3_classes": v1_linear_classifier_3_classes,
    "tf1_model_fn_alternatives": tf1_model_fn_alternatives,
    "tf1_model_fn_only_alternatives": tf1_model_fn_only_alternatives,
    "dnn_classifier_alternatives": dnn_classifier_alternatives,
    "v1_dnn_classifier_alternatives": v1_dnn_classifier_alternatives,
    "keras_model_fn_alternatives": keras_model_fn_alternatives,
}
