"""Runs the pipeline on `LocalDagRunner`, shows progress, and summarizes the outcome."""

import contextlib
import dataclasses
import json
import logging
import math
import os
import re
import sys
import tempfile
import time

from pipeline import exit_codes, hints, history, metadata, recovery


class ProgressReporter:
    """Prints one line when each component starts and finishes, with elapsed time, and
    between them the component's own progress lines (components/progress.py)."""

    def __init__(self, stream):
        self._stream = stream
        self._start = time.monotonic()
        self.windows = {}  # node -> (start, end), time.monotonic() seconds
        self._node = None  # the component running now

    def _print(self, text):
        print(f"[{time.monotonic() - self._start:7.1f}s] {text}", file=self._stream, flush=True)

    @contextlib.contextmanager
    def watching(self):
        """Wraps TFX's node launcher for the duration of one pipeline run."""
        from tfx.orchestration.portable import launcher

        from components import progress

        original = launcher.Launcher.launch
        reporter = self

        def launch(launcher_self, *args, **kwargs):
            node = launcher_self._pipeline_node.node_info.id
            reporter._print(f"{node} ...")
            reporter._node = node
            began = time.monotonic()
            try:
                result = original(launcher_self, *args, **kwargs)
            except BaseException:
                reporter._print(f"{node} FAILED after {time.monotonic() - began:.1f}s")
                raise
            finally:
                reporter._node = None
            reporter.windows[node] = (began, time.monotonic())
            reporter._print(f"{node} done in {time.monotonic() - began:.1f}s")
            return result

        class Lines(logging.Handler):
            def emit(self, record):
                reporter._print(f"  {reporter._node or 'pipeline'}: {record.getMessage()}")

        progress_log = logging.getLogger(progress.LOGGER)
        handler, saved = Lines(), (progress_log.level, progress_log.propagate)
        progress_log.addHandler(handler)
        progress_log.setLevel(logging.INFO)
        progress_log.propagate = False  # printed here, not again by the root logger
        launcher.Launcher.launch = launch
        try:
            yield self
        finally:
            launcher.Launcher.launch = original
            progress_log.removeHandler(handler)
            progress_log.level, progress_log.propagate = saved


EMPTY_NAME = '""'  # how the summary shows a column with an empty header (R's row names)


def _choice_lines(choice):
    """Beside the candidates: the trivial model's scores on the same rows, and the
    temperature the served probabilities were calibrated with (records since 2026-12-04)."""
    lines = []
    trivial = choice.get("trivial")
    if trivial:
        scores = ", ".join(
            f"{k} {history.format_metric(v)}" for k, v in trivial["validation_metrics"].items()
        )
        lines.append(
            f"      trivial ({trivial['model']}): validation loss "
            f"{trivial['validation_loss']:.4g} ({scores}), on the same {choice['rows']:,} rows"
        )
    if choice.get("temperature") is not None:
        fitted = "fitted on those rows"
        folds_temperature = choice.get("folds_temperature")  # records since 2026-12-05
        if folds_temperature is not None and folds_temperature != choice["temperature"]:
            fitted = f"(the folds' {folds_temperature:.3g}; at least 1 for models refit)"
        lines.append(
            f"  probabilities: temperature {choice['temperature']:.3g} {fitted} "
            f"(log loss {choice['uncalibrated_loss']:.4g} to {choice['served_loss']:.4g}), "
            "clipped to [1e-7, 1 - 1e-7]"
        )
    return lines


@dataclasses.dataclass
class RunSummary:
    metrics: dict[str, float]
    blessed: bool | None
    pushed_to: str | None
    not_pushed_reason: str | None
    cached_components: list[str]
    evaluation_uri: str | None
    statistics_uri: str | None = None
    strategy: str | None = None
    training_length: str | None = None  # "2,000 steps", or steps from epochs
    blessing_gate: str | None = None
    anomalies: list[str] = dataclasses.field(default_factory=list)  # warn-only, one a line
    schema_path: str | None = None  # the Schema artifact's schema.pbtxt
    schema_inferred: bool = False  # by SchemaGen, from the train statistics
    report_path: str | None = None  # the run report (`python -m pipeline run` writes it)
    training_uri: str | None = None  # the Trainer's event files (`tensorboard --logdir`)
    # The options that find this pipeline again (pipeline/hints.py), for the commands the
    # summary suggests: with --data (or --definition), and for `predict` without --data.
    finding: tuple[tuple[str, str], ...] = ()
    predict_finding: tuple[tuple[str, str], ...] = ()
    data_path: str | None = None  # what the run read: `predict --data` on it runs as printed
    # ExampleGen's rows: written to the splits, set aside without a label, set aside as bad.
    input_rows: int | None = None
    unlabeled_rows: int = 0
    bad_rows: int = 0
    rejected_dir: str | None = None  # where the rows set aside are listed
    # Columns the auto preprocessing left out as carrying no signal: (column, why).
    left_out: tuple[tuple[str, str], ...] = ()
    stop_reason: str | None = None  # why the Trainer stopped training
    model_choice: dict | None = None  # components/trainer/candidates.py `record`
    spans: str | None = None  # the spans of a span pattern read, e.g. "spans 2-3"
    # Why nothing ran: the window holds nothing newer than the served model's (`nothing_new`).
    nothing_new: str | None = None

    @property
    def exit_code(self):
        """`python -m pipeline run`'s exit status, for cron and CI: exit_codes.OK when a model
        was pushed, exit_codes.NOT_PUSHED when the run completed without one (not blessed). A
        failed run exits 1 (the component's error), bad options 2 (argparse)."""
        return exit_codes.OK if self.pushed_to else exit_codes.NOT_PUSHED

    def format(self):
        lines = ["", "Summary"]
        if self.nothing_new:
            return "\n".join([*lines, f"  nothing new: {self.nothing_new}"])
        if self.metrics:
            lines.append(
                "  eval metrics (overall slice): "
                + ", ".join(
                    f"{k} = {history.format_metric(v)}" for k, v in sorted(self.metrics.items())
                )
            )
            if any(math.isnan(v) for v in self.metrics.values()):
                lines.append(
                    "    (undefined: a ratio with nothing to divide by on this data, such as "
                    "precision when no example is predicted positive)"
                )
        lines += self._data_lines()
        if self.statistics_uri:
            lines.append(f"  data statistics: {self.statistics_uri} (`{self._command('stats')}`)")
        if self.schema_path:
            how = (
                "inferred from the train statistics "
                f"(`{self._command('schema', '--out', 'schema.pbtxt')}` saves it to edit and "
                "pass as --schema)"
                if self.schema_inferred
                else "imported"
            )
            lines.append(f"  schema: {self.schema_path} ({how})")
        if self.anomalies:
            lines.append("  data anomalies (warn-only, the run went on):")
            lines += [f"    {line}" for line in self.anomalies]
        lines += self._model_lines()
        if self.strategy:
            length = f"{self.training_length}; " if self.training_length else ""
            lines.append(f"  trained: {length}strategy: {self.strategy}")
        if self.stop_reason:
            lines.append(f"  stopped: {self.stop_reason}")
        gate = f" (gate: {self.blessing_gate})" if self.blessing_gate else ""
        lines.append(f"  blessed: {'yes' if self.blessed else 'no'}{gate}")
        if self.pushed_to:
            lines.append(f"  pushed model: {self.pushed_to}")
            if self.data_path:
                predict = hints.command(
                    "predict", self.predict_finding, "--data", hints.shown_path(self.data_path)
                )
                lines.append(f"  predictions: `{predict}` (or --data any CSV of new rows)")
        else:
            lines.append(f"  not pushed: {self.not_pushed_reason or 'no push recorded'}")
        if self.cached_components:
            lines.append("  reused from cache: " + ", ".join(self.cached_components))
        if self.training_uri:
            lines.append(f"  training curves: `tensorboard --logdir {self.training_uri}`")
        if self.report_path:
            lines.append(f"  report: {self.report_path} (`{self._command('report')}`)")
        return "\n".join(lines)

    def _command(self, name, *rest):
        """A command this summary suggests, with what finds the same pipeline."""
        return hints.command(name, self.finding, *rest)

    def _model_lines(self):
        """The model choice: every candidate's validation score and cost, the winner first."""
        candidates = (self.model_choice or {}).get("candidates", [])
        if len(candidates) < 2:
            return []
        lines = [f"  model: {candidates[0]['name']} ({self.model_choice['reason']})"]
        # Named where candidates trained under different strategies (boosted trees grow on
        # one device where the others are mirrored); records before 2026-12-03 have none.
        # (An ensemble's line has none of its own.)
        strategies = {line.get("strategy") for line in candidates if line.get("strategy")}
        for line in candidates:
            scores = ", ".join(
                f"{k} {history.format_metric(v)}" for k, v in line["validation_metrics"].items()
            )
            shown = len(strategies) > 1 and line.get("strategy")
            strategy = f", {line['strategy']} strategy" if shown else ""
            spread = line.get("loss_spread")
            spread = f" ± {spread:.2g} over the folds" if spread is not None else ""
            lines.append(
                f"    {'*' if line['chosen'] else ' '} {line['name']}: validation loss "
                f"{line['validation_loss']:.4g}{spread} ({scores}); {line['seconds']:.1f}s, "
                f"{line['steps']:,} steps{strategy}; {line['stop_reason']}"
            )
        return lines + _choice_lines(self.model_choice)

    def _data_lines(self):
        """The spans read, the rows set aside and the columns left out, when there are any."""
        lines = [f"  data: {self.spans}"] if self.spans else []
        set_aside = [
            (n, what)
            for n, what in [(self.unlabeled_rows, "without a label"), (self.bad_rows, "malformed")]
            if n
        ]
        if set_aside and self.input_rows is not None:
            total = self.input_rows + self.unlabeled_rows + self.bad_rows
            counts = "; ".join(f"{n:,} of {total:,} rows {what}" for n, what in set_aside)
            lines.append(
                f"  set aside: {counts}: never trained or evaluated on; listed with file, line "
                f"and reason in {self.rejected_dir}"
            )
        if self.left_out:
            lines.append(
                "  left out (no signal): "
                + ", ".join(f"{name or EMPTY_NAME} ({why})" for name, why in self.left_out)
            )
        return lines


def summarize(config):
    """What the latest run produced, read back from ML Metadata."""
    from components.example_gen.layout import REJECTED_DIR
    from components.example_validator.layout import load_anomaly_lines
    from components.schema_file import SCHEMA_FILE_NAME

    store = metadata.open_store(config.resolved_metadata_path)
    run = metadata.latest_run(store, config.pipeline_name)
    nodes = metadata.run_nodes(store, config.pipeline_name, run)
    cached = sorted(node for e, node in nodes if node and metadata.execution_state(e) == "cached")
    # The Examples of the run's ExampleGen (written or reused): the Transform outputs some too.
    example_gen = [e for e, node in nodes if node == "ExampleGen"]
    examples = metadata.newest_output(store, example_gen, "examples")

    evaluation, blessing, pushed, model_run, statistics, anomalies, schema = (
        metadata.output(store, run, name)
        for name in (
            "ModelEvaluation",
            "ModelBlessing",
            "PushedModel",
            "ModelRun",
            "ExampleStatistics",
            "ExampleAnomalies",
            "Schema",
        )
    )

    custom = metadata.custom_property
    return RunSummary(
        metrics=metadata.overall_metrics(evaluation.uri) if evaluation is not None else {},
        blessed=bool(custom(blessing, "blessed")) if blessing is not None else None,
        pushed_to=custom(pushed, "pushed_destination") if custom(pushed, "pushed") else None,
        not_pushed_reason=custom(pushed, "reason"),
        cached_components=cached,
        evaluation_uri=evaluation.uri if evaluation is not None else None,
        statistics_uri=statistics.uri if statistics is not None else None,
        blessing_gate=config.blessing_gate.describe(),
        strategy=(
            f"{custom(model_run, 'strategy')} ({custom(model_run, 'strategy_reason')})"
            if custom(model_run, "strategy")
            else None
        ),
        training_length=custom(model_run, "training_length") or None,
        stop_reason=custom(model_run, "stop_reason") or None,
        model_choice=json.loads(custom(model_run, "model_choice") or "null"),
        training_uri=model_run.uri if model_run is not None else None,
        schema_path=os.path.join(schema.uri, SCHEMA_FILE_NAME) if schema is not None else None,
        schema_inferred=any(node == "SchemaGen" for _, node in nodes),
        anomalies=(
            load_anomaly_lines(
                anomalies.uri, json.loads(anomalies.properties["split_names"].string_value)
            )
            if anomalies is not None
            else []
        ),
        input_rows=custom(examples, "num_rows"),
        unlabeled_rows=custom(examples, "num_unlabeled") or 0,
        bad_rows=custom(examples, "num_rejected") or 0,
        rejected_dir=os.path.join(examples.uri, REJECTED_DIR) if examples is not None else None,
        left_out=config.left_out or (),
        finding=hints.finding_options(config),
        predict_finding=hints.finding_options(config, by_data=False),
        data_path=os.path.abspath(config.data_path) if os.path.exists(config.data_path) else None,
        spans=_spans_line(examples),
    )


def _spans_line(examples):
    """The spans `examples` was read from, as the summary shows them; None without any."""
    read = history.spans_read(examples)
    if not read:
        return None
    return f"span{'s' if len(read) > 1 else ''} {history.format_spans(read)}"


def nothing_new(config):
    """Why a run of `config` would train on nothing newer than the served model was trained
    on, or None: its data is a span pattern read through a rolling window (a fixed range is
    read as asked), and the window's newest span (and version) is not above the served
    model's (`python -m pipeline models`)."""
    from components.example_gen import spans

    if not spans.is_pattern(config.data_path):
        return None
    if spans.parse_window(config.data_spans)[1] is not None:
        return None
    if not os.path.exists(config.resolved_metadata_path):
        return None
    window = spans.resolve(config.data_path, config.data_spans)
    served = history.load(config).models(config.resolved_serving_model_dir, with_metrics=False)
    served = next((record for record in served if record["serving"]), None)
    if served is None or not served["spans"]:
        return None

    def order(number, version):
        return number, -1 if version is None else version

    trained = served["spans"][-1]
    newest = window.newest
    if order(newest.number, newest.version) > order(trained["span"], trained["version"]):
        return None
    return (
        f"the newest of {config.data_path} is {newest.describe()}, which the served model "
        f"(version {served['version']}) was trained on already; nothing was trained or pushed. "
        "A new span runs again; data_spans FIRST..LAST retrains on spans already read."
    )


# Warnings TFX 1.21 prints on every run with ml-metadata 1.17 (STACK.md) that
# ask nothing of the user.
_KNOWN_NOISE = (
    "ArtifactQuery.property_predicate is not supported",
    "node's cache key varies on repeated tracing",
)


# TFX's launcher logs this before the component's own error, which the command prints.
_FAILED_EXECUTION = re.compile(r"Execution \d+ failed\.")


def _drop_known_noise(record):
    message = record.getMessage()
    if _FAILED_EXECUTION.fullmatch(message):
        return False
    return not any(text in message for text in _KNOWN_NOISE)


@contextlib.contextmanager
def run_temp_dir():
    """Points temporary files of the run at one folder, removed when the run ends.

    TFX's Beam executors copy TFX into a fresh temp folder to stage it for
    remote Beam workers, even for the in-memory runner, and never remove it
    (about 40 MB per Beam component per run). A run killed before it could remove
    its folder leaves it; the next run removes it (pipeline/recovery.py).
    """
    saved = tempfile.tempdir, os.environ.get("TMPDIR")
    with recovery.owned_temp_dir() as folder:
        tempfile.tempdir = os.environ["TMPDIR"] = folder
        try:
            yield folder
        finally:
            tempfile.tempdir = saved[0]
            if saved[1] is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = saved[1]


def run_locally(config, stream=sys.stderr, verbose=False, reporter=None):
    """Runs the pipeline in this process; returns its `RunSummary`.

    Unless `verbose`, TFX's and TensorFlow's INFO chatter is held back:
    `stream` gets the per-component progress lines and warnings.
    """
    config = config.resolve_from_data()  # the summary names the resolved task's gate
    reason = nothing_new(config)
    if reason:
        return RunSummary({}, None, None, reason, [], None, nothing_new=reason)
    run_pipeline(config, None, stream, verbose, reporter)
    return summarize(config)


def run_pipeline(config, components=None, stream=sys.stderr, verbose=False, reporter=None):
    """Runs `config`'s pipeline, or only `components` of it, on LocalDagRunner."""
    from tfx.orchestration.local.local_dag_runner import LocalDagRunner

    from pipeline.pipeline import create_pipeline

    os.makedirs(os.path.dirname(config.resolved_metadata_path), exist_ok=True)
    with _run_logging(verbose):
        for line in recovery.recover_interrupted(config):
            print(line, file=stream, flush=True)
        known_runs = history.run_ids(config)
        try:
            with (reporter or ProgressReporter(stream)).watching(), run_temp_dir():
                LocalDagRunner().run(create_pipeline(config, components=components))
        finally:
            _record_provenance(config, known_runs, stream)


@contextlib.contextmanager
def _run_logging(verbose):
    """absl's and TensorFlow's verbosity for one run (their INFO chatter held back unless
    `verbose`), put back as they were when it ends: a notebook that runs the pipeline and
    then trains an Estimator still sees the Estimator's lines."""
    from absl import logging as absl_logging

    tensorflow_logger, absl_logger = logging.getLogger("tensorflow"), logging.getLogger("absl")
    saved = absl_logging.get_verbosity(), tensorflow_logger.level
    absl_logging.set_verbosity(absl_logging.INFO if verbose else absl_logging.WARNING)
    if not verbose:
        tensorflow_logger.setLevel(logging.ERROR)
        absl_logger.addFilter(_drop_known_noise)
    try:
        yield
    finally:
        absl_logger.removeFilter(_drop_known_noise)
        absl_logging.set_verbosity(saved[0])
        tensorflow_logger.setLevel(saved[1])


def _record_provenance(config, known_runs, stream):
    """The definition and code version on the run's context, whether it finished or failed
    (`python -m pipeline runs`, `models`); a failure here never hides the run's own."""
    try:
        history.record_provenance(config, known_runs)
    except Exception as e:  # the run's outcome matters more than this record
        print(f"warning: could not record the run's definition and code version: {e}", file=stream)
