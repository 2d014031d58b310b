"""`tf.compat.v1.estimator.tpu.TPUEstimator(use_tpu=False)` under the options, specs and
calls public TPU code passes beyond what the sample families run (tpu_programs,
tpu_sample_programs, tpu_research_programs, bert_task_programs), on one tiny linear
classifier of TF1 variables started from fixed numbers:

- `train_distribute_strategy`: a TPU RunConfig given `train_distribute` (a one-device
  strategy), trained and evaluated;
- `export_leaves_use_tpu_in_params`: an export with `export_to_tpu` (API V1, the
  default), then train and evaluate: the params input_fn and model_fn get, and
  `est.params`; the same with `export_to_tpu=False` and with API V2;
- `export_every_mode`: `experimental_export_all_saved_models` of TRAIN, EVAL and PREDICT
  receivers and `export_saved_model(experimental_mode='eval')`: MetaGraph tags, signatures
  and the lines (the warning for each mode but PREDICT);
- `export_before_training`: what an export without a checkpoint says, and logs first;
- `export_signatures`: the export methods' parameters, and `export_savedmodel`'s
  `strip_default_attrs` taken;
- `spec_checked_when_made`: what TPUEstimatorSpec refused when made (`Missing train_op.`,
  ...), a loss of one element made a scalar, a PREDICT spec's export_outputs completed;
- `api_version_from_its_module`: `ExportSavedModelApiVersion.V2` imported from 2.15's
  `tpu_estimator` module (AdaNet's TPUEstimator passes it), exported;
- `batch_size_options`: eval and predict batch sizes left None, batch sizes not divisible
  by `num_shards`: the params each call gets, metrics and predictions;
- `partial_batches`: evaluate(steps=None) over 17 rows in batches of 6, predict with
  `yield_single_examples` True and False, and `drop_remainder=True`;
- `iterations_per_loop_and_steps`: `iterations_per_loop` not dividing `steps`, larger than
  `steps`, and train(steps) then train(max_steps): steps, files, summary tags and steps;
- `host_calls`: a host_call writing tf.compat.v2.summary scalars (a list, a dict of
  tensors), and AdaNet's `(lambda **kwargs: [tf.no_op()], {})`: tags and steps written;
- `eval_metrics_forms`: `eval_metrics` of tf.compat.v1.metrics from a list and a dict,
  Keras metrics, none, and a metric_fn returning a tensor;
- `metric_fn_arguments`: how many tensors a metric_fn takes, as TPUEstimatorSpec counted
  them (a functools.partial binding one by keyword, keyword-only arguments, defaults,
  `*args`, `**kwargs`), and the partial's metrics evaluated;
- `hooks_and_plain_spec`: training, evaluation and prediction hooks of the spec and of
  the call, in order; a model_fn returning a plain EstimatorSpec.

`program(tf, workdir)` returns {"exact": ..., "close": ...}, compared by
`tests/test_tpu_options.py` with what `tests/tf215/record_family.py tpu_options_programs`
recorded under tf.estimator 2.15 (`tests/data/tf215/tpu_options.json`).
"""

import functools
import os
import re

import numpy as np

from tests.program_registry import registry
from tests.tpu_sample_programs import GREPPED, info_lines
from tests.tutorial_programs import DATA_DIR, event_tags, listing

RECORDED = os.path.join(DATA_DIR, "tpu_options.json")
PROGRAMS, program = registry()  # name -> run(tf, workdir), and its decorator
# TPUEstimator's lines, and the export's warnings and refusals.
LOGGED = re.compile(f"{GREPPED.pattern[:-1]}|TPUEstimator only handles|Couldn't find)")
ROWS, FEATURES = 20, 3
WEIGHTS = np.array([[0.3, -0.2], [-0.4, 0.1], [0.2, 0.5]], np.float32)


def _data(n=ROWS, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    return x, (x[:, 0] - x[:, 1] > 0).astype(np.int32)


def error_line(call, workdir=None):
    """[type, first line] of what `call()` raises (the workdir as <workdir>), or None."""
    try:
        call()
    except Exception as error:  # what a user sees is the point
        line = (str(error).splitlines() or [""])[0]
        return [type(error).__name__, line.replace(workdir, "<workdir>") if workdir else line]
    return None


def meta_graphs(export_dir):
    """[tags, {signature: [method, {input: tensor}, {output: tensor}]}] of each MetaGraph."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir.decode(), "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    return [
        [
            sorted(meta.meta_info_def.tags),
            {
                key: [
                    signature.method_name,
                    {name: info.name for name, info in sorted(signature.inputs.items())},
                    {name: info.name for name, info in sorted(signature.outputs.items())},
                ]
                for key, signature in sorted(meta.signature_def.items())
            },
        ]
        for meta in saved.meta_graphs
    ]


def metric_fn(tf):
    def fn(labels, logits):
        predicted = tf.argmax(logits, 1)
        return {
            "accuracy": tf.compat.v1.metrics.accuracy(labels, predicted),
            "mean_logit": tf.compat.v1.metrics.mean(logits),
        }

    return fn


def model_fn_of(tf, seen, **spec_options):
    """A linear classifier's TPUEstimatorSpec; `seen` gets each call's mode and params
    (sorted keys, batch_size, use_tpu). `more=f`: f(tf, mode, labels, logits, loss) gives
    more of the spec's arguments; `plain=True`: an EstimatorSpec."""
    v1 = tf.compat.v1

    def model_fn(features, labels, mode, params):
        seen.append(["model_fn", mode, sorted(params), params.get("batch_size"), params["use_tpu"]])
        w = v1.get_variable("w", initializer=WEIGHTS)
        b = v1.get_variable("b", initializer=np.zeros(2, np.float32))
        logits = tf.matmul(features["x"], w) + b
        predictions = {"logits": logits, "classes": tf.argmax(logits, 1)}
        spec = (
            tf.estimator.EstimatorSpec
            if spec_options.get("plain")
            else v1.estimator.tpu.TPUEstimatorSpec
        )
        more = spec_options.get("more", lambda *args: {})
        if mode == "infer":
            return spec(mode, predictions=predictions, **more(tf, mode, None, logits, None))
        loss = tf.reduce_mean(
            v1.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        train_op = None
        if mode == "train":
            train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
                loss, v1.train.get_global_step()
            )
        kwargs = dict(more(tf, mode, labels, logits, loss))
        if mode == "eval" and "eval_metrics" not in kwargs and not spec_options.get("plain"):
            kwargs["eval_metrics"] = (metric_fn(tf), [labels, logits])
        return spec(mode, loss=loss, train_op=train_op, **kwargs)

    return model_fn


def input_fn_of(tf, seen, mode, n=ROWS, drop_remainder=False):
    """`mode`'s input of `n` rows (training's repeated), batched by params['batch_size']."""
    x, y = _data(n, 0 if mode != "predict" else 1)

    def input_fn(params):
        seen.append(["input_fn", mode, sorted(params), params.get("batch_size")])
        pairs = {"x": x} if mode == "predict" else ({"x": x}, y)
        dataset = tf.data.Dataset.from_tensor_slices(pairs)
        dataset = dataset.repeat() if mode == "train" else dataset
        return dataset.batch(params.get("batch_size") or 4, drop_remainder=drop_remainder)

    return input_fn


def serving_input_fn(tf):
    def receiver():
        x = tf.compat.v1.placeholder(tf.float32, [None, FEATURES], name="x")
        return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    return receiver


def supervised_input_fn(tf):
    def receiver():
        x = tf.compat.v1.placeholder(tf.float32, [None, FEATURES], name="x")
        y = tf.compat.v1.placeholder(tf.int32, [None], name="y")
        build = tf.compat.v1.estimator.experimental.build_raw_supervised_input_receiver_fn
        return build({"x": x}, y)()

    return receiver


def estimator(tf, workdir, model_fn, run_config=None, **kwargs):
    tpu = tf.compat.v1.estimator.tpu
    batch_sizes = {"train_batch_size": 4, "eval_batch_size": 4, "predict_batch_size": 4}
    return tpu.TPUEstimator(
        model_fn=model_fn,
        config=run_config or tpu.RunConfig(model_dir=os.path.join(workdir, "model")),
        use_tpu=False,
        **{**batch_sizes, **kwargs},
    )


def trained(tf, est, seen, max_steps=5, eval_rows=ROWS, predict_rows=ROWS, **predict_kwargs):
    """Trains, evaluates and predicts: (exact, close) of what a user looks at."""
    est.train(input_fn_of(tf, seen, "train"), max_steps=max_steps)
    evaluated = est.evaluate(input_fn_of(tf, seen, "eval", n=eval_rows))
    predicted = list(
        est.predict(input_fn_of(tf, seen, "predict", n=predict_rows), **predict_kwargs)
    )
    exact = {
        "variables": est.get_variable_names(),
        "metrics": sorted(evaluated),
        "predictions": len(predicted),
        "shapes": {k: list(np.shape(v)) for k, v in sorted(predicted[0].items())},
    }
    close = {
        "metrics": {k: float(v) for k, v in evaluated.items()},
        "w": est.get_variable_value("w").ravel().tolist(),
        "logits": np.concatenate([np.reshape(p["logits"], (-1, 2)) for p in predicted])
        .ravel()
        .tolist(),
    }
    return exact, close


@program
def train_distribute_strategy(tf, workdir):
    tpu = tf.compat.v1.estimator.tpu
    seen = []
    config = tpu.RunConfig(
        model_dir=os.path.join(workdir, "model"),
        train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"),
    )
    est = estimator(tf, workdir, model_fn_of(tf, seen), run_config=config)
    with info_lines(LOGGED) as lines:
        exact, close = trained(tf, est, seen)
    return {"exact": {**exact, "seen": seen, "lines": lines}, "close": close}


def _export_then_train(tf, workdir, **kwargs):
    seen = []
    est = estimator(tf, workdir, model_fn_of(tf, seen), params={"lr": 0.1}, **kwargs)
    est.train(input_fn_of(tf, seen, "train"), max_steps=2)
    est.export_saved_model(os.path.join(workdir, "export"), serving_input_fn(tf))
    params = est.params
    est.train(input_fn_of(tf, seen, "train"), max_steps=3)
    est.evaluate(input_fn_of(tf, seen, "eval"))
    return {"seen": seen, "params": params}


@program
def export_leaves_use_tpu_in_params(tf, workdir):
    """2.15 built its `serve, tpu` MetaGraph (export_to_tpu, API V1) with the Estimator's
    own params, setting use_tpu=False in them: later input_fns and est.params have it."""
    exact = {}
    for name, kwargs in (
        ("export_to_tpu", {}),
        ("export_to_cpu_only", {"export_to_tpu": False}),
        ("api_version_2", {"export_saved_model_api_version": 2}),
    ):
        folder = os.path.join(workdir, name)
        os.makedirs(folder)
        exact[name] = _export_then_train(tf, folder, **kwargs)
    return {"exact": exact, "close": {}}


@program
def export_every_mode(tf, workdir):
    seen = []
    est = estimator(tf, workdir, model_fn_of(tf, seen))
    est.train(input_fn_of(tf, seen, "train"), max_steps=2)
    receivers = {
        "train": supervised_input_fn(tf),
        "eval": supervised_input_fn(tf),
        "infer": serving_input_fn(tf),
    }
    with info_lines(LOGGED) as lines:
        every = est.experimental_export_all_saved_models(os.path.join(workdir, "all"), receivers)
        evaluation = est.export_saved_model(
            os.path.join(workdir, "eval"), supervised_input_fn(tf), experimental_mode="eval"
        )
    graphs = {
        "every": meta_graphs(every),
        "eval": meta_graphs(evaluation),
    }
    return {"exact": {"graphs": graphs, "lines": lines, "seen": seen}, "close": {}}


@program
def export_before_training(tf, workdir):
    seen = []
    est = estimator(tf, workdir, model_fn_of(tf, seen))
    with info_lines(LOGGED) as lines:
        served = error_line(
            lambda: est.export_saved_model(os.path.join(workdir, "e"), serving_input_fn(tf)),
            workdir,
        )
        every = error_line(
            lambda: est.experimental_export_all_saved_models(
                os.path.join(workdir, "all"), {"eval": supervised_input_fn(tf)}
            ),
            workdir,
        )
    return {"exact": {"served": served, "every": every, "lines": lines, "seen": seen}, "close": {}}


@program
def spec_checked_when_made(tf, workdir):
    spec = tf.compat.v1.estimator.tpu.TPUEstimatorSpec
    exact = {}
    with tf.Graph().as_default():
        loss, no_op, predictions = tf.constant([2.0]), tf.no_op(), {"a": tf.constant([1.0, 2.0])}
        refusals = {
            "train_without_train_op": lambda: spec("train", loss=loss),
            "train_without_anything": lambda: spec("train"),
            "eval_without_loss": lambda: spec("eval"),
            "predict_without_predictions": lambda: spec("infer"),
            "loss_a_float": lambda: spec("eval", loss=1.0),
            "loss_of_two": lambda: spec("eval", loss=tf.constant([1.0, 2.0])),
            "prediction_an_int": lambda: spec("infer", predictions={"a": 1}),
            "export_output_an_int": lambda: spec(
                "infer", predictions=predictions, export_outputs={"x": 1}
            ),
        }
        exact["refusals"] = {name: error_line(call) for name, call in refusals.items()}
        made = spec("train", loss=loss, train_op=no_op)
        exact["loss_shape"] = made.loss.shape.as_list()
        exact["export_outputs"] = sorted(spec("infer", predictions=predictions).export_outputs)
        one = {"pred": tf.estimator.export.PredictOutput(predictions)}
        exact["one_export_output"] = sorted(
            spec("infer", predictions=predictions, export_outputs=one).export_outputs
        )
    return {"exact": exact, "close": {}}


@program
def api_version_from_its_module(tf, workdir):
    from tensorflow_estimator.python.estimator.tpu import tpu_estimator

    seen = []
    est = estimator(
        tf,
        workdir,
        model_fn_of(tf, seen),
        export_saved_model_api_version=tpu_estimator.ExportSavedModelApiVersion.V2,
        export_to_tpu=False,
    )
    est.train(input_fn_of(tf, seen, "train"), max_steps=2)
    path = est.export_saved_model(os.path.join(workdir, "export"), serving_input_fn(tf))
    return {"exact": {"graphs": meta_graphs(path), "seen": seen}, "close": {}}


@program
def export_signatures(tf, workdir):
    import inspect

    tpu_estimator = tf.compat.v1.estimator.tpu.TPUEstimator
    names = ["export_saved_model", "export_savedmodel", "experimental_export_all_saved_models"]
    signatures = {name: str(inspect.signature(getattr(tpu_estimator, name))) for name in names}
    est = estimator(tf, workdir, model_fn_of(tf, []))
    stripped = error_line(
        lambda: est.export_savedmodel(
            os.path.join(workdir, "e"), serving_input_fn(tf), strip_default_attrs=True
        ),
        workdir,
    )
    return {"exact": {"signatures": signatures, "stripped": stripped}, "close": {}}


@program
def batch_size_options(tf, workdir):
    tpu = tf.compat.v1.estimator.tpu
    exact, close = {}, {}
    for name, kwargs, tpu_config in (
        ("eval_and_predict_none", {"eval_batch_size": None, "predict_batch_size": None}, None),
        ("not_divisible_by_shards", {"train_batch_size": 6, "eval_batch_size": 5, "predict_batch_size": 3}, tpu.TPUConfig(num_shards=8)),
    ):  # fmt: skip
        seen = []
        config = tpu.RunConfig(model_dir=os.path.join(workdir, name), tpu_config=tpu_config)
        est = estimator(tf, workdir, model_fn_of(tf, seen), run_config=config, **kwargs)
        exact[name], close[name] = trained(tf, est, seen)
        exact[name]["seen"] = seen
    return {"exact": exact, "close": close}


@program
def partial_batches(tf, workdir):
    seen = []
    est = estimator(tf, workdir, model_fn_of(tf, seen), eval_batch_size=6, predict_batch_size=6)
    exact, close = trained(tf, est, seen, eval_rows=17, predict_rows=17)
    batches = list(est.predict(input_fn_of(tf, seen, "predict", n=17), yield_single_examples=False))
    exact["batch_shapes"] = [list(np.shape(b["logits"])) for b in batches]
    dropped = est.evaluate(input_fn_of(tf, seen, "eval", n=17, drop_remainder=True))
    close["dropped"] = {k: float(v) for k, v in dropped.items()}
    kept = list(est.predict(input_fn_of(tf, seen, "predict", n=17, drop_remainder=True)))
    exact["dropped_predictions"] = len(kept)
    return {"exact": {**exact, "seen": seen}, "close": close}


@program
def iterations_per_loop_and_steps(tf, workdir):
    tpu = tf.compat.v1.estimator.tpu
    exact = {}
    for name, iterations, calls in (
        ("three_by_five", 3, [{"steps": 5}]),
        ("ten_by_three", 10, [{"steps": 3}]),
        (
            "steps_then_max_steps",
            4,
            [{"steps": 3}, {"max_steps": 5}, {"max_steps": 5}, {"steps": 2}],
        ),
    ):
        folder = os.path.join(workdir, name)
        config = tpu.RunConfig(
            model_dir=folder,
            tpu_config=tpu.TPUConfig(iterations_per_loop=iterations),
            log_step_count_steps=2,
            save_summary_steps=2,
        )
        est = estimator(tf, workdir, model_fn_of(tf, []), run_config=config)
        with info_lines(LOGGED) as lines:
            for call in calls:
                est.train(input_fn_of(tf, [], "train"), **call)
        steps = int(est.get_variable_value("global_step"))
        exact[name] = {
            "step": steps,
            "files": listing(folder),
            "tags": event_tags(folder),
            "lines": lines,
        }
    return {"exact": exact, "close": {}}


def _v2_scalar_host_call(tf, folder, as_dict):
    v1 = tf.compat.v1

    def more(tf, mode, labels, logits, loss):
        if mode == "infer":
            return {}
        step = tf.reshape(v1.train.get_or_create_global_step(), [1])
        losses = tf.reshape(loss, [1])

        def host_call_fn(step, loss):
            writer = tf.compat.v2.summary.create_file_writer(os.path.join(folder, mode))
            with writer.as_default(), tf.compat.v2.summary.record_if(True):
                tf.compat.v2.summary.scalar("host_loss", loss[0], step=step[0])
                return v1.summary.all_v2_summary_ops()

        tensors = {"step": step, "loss": losses} if as_dict else [step, losses]
        return {"host_call": (host_call_fn, tensors)}

    return more


@program
def host_calls(tf, workdir):
    exact, close = {}, {}
    for name, as_dict in (("list", False), ("dict", True)):
        folder = os.path.join(workdir, name)
        seen = []
        est = estimator(
            tf, folder, model_fn_of(tf, seen, more=_v2_scalar_host_call(tf, folder, as_dict))
        )
        exact[name], close[name] = trained(tf, est, seen)
        exact[name]["written"] = {
            mode: event_tags(os.path.join(folder, mode)) for mode in ("train", "eval")
        }
    adanet = {"host_call": (lambda **kwargs: [tf.no_op()], {})}
    est = estimator(
        tf, os.path.join(workdir, "adanet"), model_fn_of(tf, [], more=lambda *args: adanet)
    )
    exact["empty_dict"], close["empty_dict"] = trained(tf, est, [])
    return {"exact": exact, "close": close}


def _keras_metrics(tf, mode, labels, logits, loss):
    if mode != "eval":
        return {}

    def fn(labels, logits):
        accuracy, mean = tf.keras.metrics.SparseCategoricalAccuracy(), tf.keras.metrics.Mean()
        accuracy.update_state(labels, logits)
        mean.update_state(logits)
        return {"keras_accuracy": accuracy, "keras_mean": mean}

    return {"eval_metrics": (fn, [labels, logits])}


@program
def eval_metrics_forms(tf, workdir):
    def given(eval_metrics):
        def more(tf, mode, labels, logits, loss):
            return {"eval_metrics": eval_metrics(labels, logits)} if mode == "eval" else {}

        return more

    forms = {
        "dict_of_tensors": given(lambda labels, logits: (metric_fn(tf), {"labels": labels, "logits": logits})),
        "keras_metrics": _keras_metrics,
        "none": given(lambda labels, logits: None),
        "a_tensor": given(lambda labels, logits: (lambda labels, logits: {"m": tf.reduce_mean(logits)}, [labels, logits])),
    }  # fmt: skip
    exact, close = {}, {}
    for name, more in forms.items():
        est = estimator(tf, os.path.join(workdir, name), model_fn_of(tf, [], more=more))
        est.train(input_fn_of(tf, [], "train"), max_steps=3)
        try:
            evaluated = est.evaluate(input_fn_of(tf, [], "eval"))
        except Exception as error:  # (what a user sees)
            exact[name] = [type(error).__name__, str(error).splitlines()[0]]
            continue
        exact[name], close[name] = sorted(evaluated), {k: float(v) for k, v in evaluated.items()}
    return {"exact": exact, "close": close}


@program
def metric_fn_arguments(tf, workdir):
    """How many tensors a metric_fn takes, as TPUEstimatorSpec counted its arguments: a
    functools.partial binding one by keyword, keyword-only ones, defaults, *args, **kwargs;
    the partial's metrics evaluated."""
    spec = tf.compat.v1.estimator.tpu.TPUEstimatorSpec

    def scaled(labels, logits, scale):
        return metric_fn(tf)(labels, logits * scale)

    def keyword_only(labels, logits, *, scale=1.0):
        return metric_fn(tf)(labels, logits * scale)

    def with_default(labels, logits, weights=None):
        return metric_fn(tf)(labels, logits)

    def star(*tensors):
        return metric_fn(tf)(*tensors)

    def keywords(**tensors):
        return metric_fn(tf)(**tensors)

    partial = functools.partial(scaled, scale=2.0)
    exact, close = {}, {}
    with tf.Graph().as_default():
        pair = [tf.constant([0, 1]), tf.constant([[0.1, 0.2], [0.3, -0.1]])]
        for name, fn in (
            ("partial_by_keyword", partial),
            ("keyword_only", keyword_only),
            ("with_default", with_default),
            ("star_args", star),
            ("kwargs_only", keywords),
        ):
            exact[name] = error_line(
                lambda fn=fn: spec("eval", loss=tf.constant(1.0), eval_metrics=(fn, pair))
            )

    def more(tf, mode, labels, logits, loss):
        return {"eval_metrics": (partial, [labels, logits])} if mode == "eval" else {}

    est = estimator(tf, workdir, model_fn_of(tf, [], more=more))
    est.train(input_fn_of(tf, [], "train"), max_steps=2)
    close["partial"] = {k: float(v) for k, v in est.evaluate(input_fn_of(tf, [], "eval")).items()}
    return {"exact": exact, "close": close}


def hook_class(tf, calls):
    class Hook(tf.compat.v1.train.SessionRunHook):
        def __init__(self, name):
            self.name = name

        def begin(self):
            calls.append([self.name, "begin"])

        def before_run(self, run_context):
            calls.append([self.name, "before_run"])

        def end(self, session):
            calls.append([self.name, "end"])

    return Hook


@program
def hooks_and_plain_spec(tf, workdir):
    calls = []
    hook = hook_class(tf, calls)

    def more(tf, mode, labels, logits, loss):
        return {"training_hooks": [hook("spec_train")], "evaluation_hooks": [hook("spec_eval")], "prediction_hooks": [hook("spec_predict")]}  # fmt: skip

    est = estimator(tf, os.path.join(workdir, "spec"), model_fn_of(tf, calls, more=more))
    est.train(input_fn_of(tf, calls, "train"), max_steps=3, hooks=[hook("call_train")])
    est.evaluate(input_fn_of(tf, calls, "eval"), hooks=[hook("call_eval")])
    list(est.predict(input_fn_of(tf, calls, "predict", n=6), hooks=[hook("call_predict")]))
    seen = []
    plain = estimator(tf, os.path.join(workdir, "plain"), model_fn_of(tf, seen, plain=True))
    with info_lines(LOGGED) as lines:
        exact, close = trained(tf, plain, seen)
        path = plain.export_saved_model(os.path.join(workdir, "export"), serving_input_fn(tf))
    graphs = meta_graphs(path)
    return {
        "exact": {"calls": calls, "plain": exact, "seen": seen, "lines": lines, "graphs": graphs},
        "close": close,
    }
