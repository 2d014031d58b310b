"""A pipeline's history, read back from its ML Metadata store: `python -m pipeline runs` and
`models`; and what a local run records for them (`record_provenance`).

Reads ML Metadata through pipeline/metadata.py (which describes what a run is made of
there), metrics included: no TensorFlow import.
"""

import datetime
import json
import math
import os
import subprocess

from components.example_gen.spans import NOTHING_NEW
from components.model_registry import fingerprint_digest
from components.user_code import file_sha256
from pipeline import metadata
from pipeline.config import REPO_ROOT
from pipeline.metadata import custom_property

# Custom properties a local run puts on its `pipeline_run` context (record_provenance).
DEFINITION_PROPERTY = "definition"
DEFINITION_SHA256_PROPERTY = "definition_sha256"
CODE_VERSION_PROPERTY = "code_version"
# JSON [[column, why], ...]: the columns the auto preprocessing left out as carrying no signal.
LEFT_OUT_PROPERTY = "left_out"

# Where a Model artifact holds its serving SavedModel (tfx.utils.path_utils.serving_model_path,
# which would import TensorFlow).
SERVING_SUBDIR = "Format-Serving"
# The execution type of `python -m pipeline rollback` (pipeline/rollback.py).
ROLLBACK_TYPE = "Rollback"

# `runs --json`: one object per run, newest first, with these keys (docs/guide/operating.md;
# its table).
RUN_KEYS = (
    "run_id",
    "started",
    "duration_s",
    "outcome",
    "failed_component",
    "input_rows",
    "input_fingerprint",
    "spans",
    "warm_started_from",
    "metrics",
    "blessed",
    "pushed_version",
    "definition",
    "definition_sha256",
    "code_version",
)
# `models --json`: one object per version, highest first.
MODEL_KEYS = (
    "version",
    "serving",
    "present",
    "path",
    "pushed_at",
    "source",
    "rollback_of",
    "reason",
    "run_id",
    "blessed",
    "metrics",
    "input_rows",
    "input_fingerprint",
    "spans",
    "definition",
    "definition_sha256",
    "code_version",
)
OUTCOMES = ("pushed", "not_blessed", "nothing_new", "failed", "incomplete")
# Canceled: found RUNNING by a later run, its process killed (pipeline/recovery.py).
_FAILED_STATES = ("failed", "canceled")


def code_version(folder=REPO_ROOT):
    """The git commit `folder` is checked out at, `-dirty` appended when tracked files
    differ from it; None outside a git checkout (or without git)."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if commit.returncode != 0:
            return None
        changes = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = "-dirty" if changes.returncode != 0 or changes.stdout.strip() else ""
    return commit.stdout.strip() + dirty


def spans_read(examples):
    """[{"span": N, "version": V or None}, ...] the Examples artifact was read from (a span
    pattern, components/example_gen/spans.py), oldest first; None for a file or folder."""
    recorded = custom_property(examples, "spans")
    if not recorded:
        return None
    return [{"span": span, "version": version} for span, version in json.loads(recorded)]


def format_spans(spans):
    """Spans for a table: "3", "2-3", "3 v2" (the newest span's version)."""
    if not spans:
        return ""
    first, last = spans[0], spans[-1]
    text = str(last["span"]) if len(spans) == 1 else f"{first['span']}-{last['span']}"
    return text + ("" if last["version"] is None else f" v{last['version']}")


def _store_or_none(metadata_path, writable=False):
    return metadata.open_store(metadata_path, writable) if os.path.exists(metadata_path) else None


def run_ids(config):
    """The ids of the `pipeline_run` contexts of `config`'s pipeline recorded so far."""
    store = _store_or_none(config.resolved_metadata_path)
    return (
        set()
        if store is None
        else {c.id for c in metadata.run_contexts(store, config.pipeline_name)}
    )


def record_provenance(config, known_run_ids):
    """Puts the definition (path and sha256), the code version (git commit) and the columns
    left out (`left_out`) on the run contexts of `config`'s pipeline that are not among `known_run_ids`: the run that just
    ended, finished or failed. Returns the contexts updated."""
    store = _store_or_none(config.resolved_metadata_path, writable=True)
    if store is None:
        return []
    new = [
        c for c in metadata.run_contexts(store, config.pipeline_name) if c.id not in known_run_ids
    ]
    if not new:
        return []
    values = {CODE_VERSION_PROPERTY: code_version()}
    if config.left_out:
        values[LEFT_OUT_PROPERTY] = json.dumps([list(pair) for pair in config.left_out])
    if config.definition_path:
        path = os.path.realpath(config.definition_path)
        values[DEFINITION_PROPERTY] = path
        values[DEFINITION_SHA256_PROPERTY] = file_sha256(path) if os.path.isfile(path) else None
    metadata.put_context_properties(store, new, {k: v for k, v in values.items() if v})
    return new


def _iso(milliseconds):
    moment = datetime.datetime.fromtimestamp(milliseconds / 1000, tz=datetime.UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _finite(metrics):
    """JSON has no NaN or infinity: such a value becomes None."""
    return {k: (v if math.isfinite(v) else None) for k, v in sorted(metrics.items())}


class History(metadata.PipelineRecords):
    """Everything ML Metadata holds about one pipeline's runs, pushes and rollbacks, and what
    it means: each run's outcome, each served version's lineage."""

    def __init__(self, store, pipeline_name):
        super().__init__(store, pipeline_name)
        self._metrics = {}

    def metrics(self, evaluation):
        """The overall metrics of a `ModelEvaluation` artifact."""
        if evaluation is None or not os.path.isdir(evaluation.uri):
            return {}
        if evaluation.id not in self._metrics:
            self._metrics[evaluation.id] = _finite(metadata.overall_metrics(evaluation.uri))
        return self._metrics[evaluation.id]

    def run_record(self, run, with_metrics=True):
        """One run as a dict of RUN_KEYS."""
        executions = self.run_executions[run.id]
        failed = [e for e in executions if metadata.execution_state(e) in _FAILED_STATES]
        examples = self.node_output(run, "ExampleGen", "examples")
        evaluation = self.node_output(run, "Evaluator", "evaluation")
        blessing = self.node_output(run, "Evaluator", "blessing")
        pushed = self.node_output(run, "Pusher", "pushed_model")
        blessed = (
            None
            if custom_property(blessing, "blessed") is None
            else custom_property(blessing, "blessed") == 1
        )
        pushed_version = (
            custom_property(pushed, "pushed_version") if custom_property(pushed, "pushed") else None
        )
        if failed:
            outcome = "failed"
        elif pushed_version is not None:
            outcome = "pushed"
        elif (custom_property(pushed, "reason") or "").startswith(NOTHING_NEW):
            outcome = "nothing_new"  # blessed, but trained on no newer span than the served
        elif blessed is False or custom_property(pushed, "pushed") == 0:
            outcome = "not_blessed"
        else:
            outcome = "incomplete"  # running, or killed and not yet found by a later run
        # A canceled execution was last updated by the run that found it: it ran from its start.
        ended = max(
            (
                e.create_time_since_epoch
                if metadata.execution_state(e) == "canceled"
                else e.last_update_time_since_epoch
                for e in executions
            ),
            default=None,
        )
        return {
            "run_id": run.name,
            "started": _iso(run.create_time_since_epoch),
            "duration_s": (
                round((ended - run.create_time_since_epoch) / 1000, 1) if ended else None
            ),
            "outcome": outcome,
            "failed_component": self.node_of.get(failed[0].id) if failed else None,
            "input_rows": custom_property(examples, "num_rows"),
            "input_fingerprint": custom_property(examples, "input_fingerprint"),
            "spans": spans_read(examples),
            "warm_started_from": self.warm_start_run(run),
            "metrics": self.metrics(evaluation) if with_metrics else {},
            "blessed": blessed,
            "pushed_version": int(pushed_version) if pushed_version else None,
            "definition": custom_property(run, DEFINITION_PROPERTY),
            "definition_sha256": custom_property(run, DEFINITION_SHA256_PROPERTY),
            "code_version": custom_property(run, CODE_VERSION_PROPERTY),
        }

    def warm_start_run(self, run):
        """The id of the run that trained the model `run`'s Trainer warm-started from, or
        None (no warm start, or a model from no run of this pipeline)."""
        for execution in self.run_executions[run.id]:
            if self.node_of.get(execution.id) != "Trainer":
                continue
            for model in self.inputs.get(execution.id, {}).get("base_model", []):
                origin = self.run_of.get(self.producer.get(model.id))
                return origin.name if origin is not None else None
        return None

    def runs(self, with_metrics=True):
        """Every run of the pipeline, newest first, as RUN_KEYS dicts."""
        return [self.run_record(run, with_metrics) for run in self.run_contexts]

    def pushes(self):
        """(PushedModel artifact, the execution that pushed it), oldest first, for every push
        that published a version: the Pusher's and rollbacks'."""
        found = []
        for execution_id, outputs in self.outputs.items():
            pusher = self.node_of.get(execution_id) == "Pusher"
            if not (pusher or self.execution_type[execution_id] == ROLLBACK_TYPE):
                continue
            for artifact in outputs.get("pushed_model", []):
                published = custom_property(artifact, "pushed") and custom_property(
                    artifact, "pushed_version"
                )
                # A cached Pusher execution points at the artifact an earlier one made.
                if published and self.producer.get(artifact.id) == execution_id:
                    found.append((artifact, self.executions[execution_id]))
        return sorted(found, key=lambda pair: pair[0].id)

    def _models_by_fingerprint(self):
        """{SavedModel fingerprint: (Model artifact, the run that trained it)} of every model
        the pipeline's Trainer made whose export is still there."""
        from components.serving_dir import fingerprint

        found = {}
        for execution_id in sorted(self.outputs):
            if self.node_of.get(execution_id) != "Trainer":
                continue
            for model in self.outputs[execution_id].get("model", []):
                exported = fingerprint(os.path.join(model.uri, SERVING_SUBDIR))
                if exported is not None:
                    found.setdefault(exported, (model, self.run_of.get(execution_id)))
        return found

    def _blessed(self, model):
        """Whether the Evaluator blessed `model` in any run; None if it never judged it."""
        verdicts = [
            custom_property(artifact, "blessed") == 1
            for artifact in self.artifacts.values()
            if self.artifact_type[artifact.id] == "ModelBlessing"
            and custom_property(artifact, "current_model_id") == model.id
        ]
        return any(verdicts) if verdicts else None

    def models(self, serving_dir, with_metrics=True):
        """Every version pushed to `serving_dir` (recorded in ML Metadata, or only found
        there), highest first, as dicts of MODEL_KEYS and, for rollback, `model` (the Model
        artifact behind the version) and `pushed_artifact` (its PushedModel artifact)."""
        from components.serving_dir import fingerprint, versions

        def blank():
            return dict.fromkeys(MODEL_KEYS) | {
                "metrics": {},
                "model": None,
                "pushed_artifact": None,
            }

        on_disk = set(versions(serving_dir))
        records = {}
        for artifact, execution in self.pushes():
            version = int(custom_property(artifact, "pushed_version"))
            if version in records:
                continue  # an identical model pushed again: the version is the first push's
            inputs = self.inputs.get(execution.id, {})
            if self.execution_type[execution.id] == ROLLBACK_TYPE:
                # The same model as the version it copies: that version's lineage.
                of = custom_property(artifact, "rollback_of")
                original = records.get(int(of)) if of else None
                record = dict(original) if original else blank()
                record.update(
                    source="rollback",
                    rollback_of=int(of) if of else None,
                    reason=custom_property(artifact, "reason") or None,
                )
            else:
                record = blank()
                run = self.run_of.get(execution.id)
                if run is not None:
                    shared = self.run_record(run, with_metrics=False)
                    record.update({k: v for k, v in shared.items() if k in MODEL_KEYS})
                    evaluation = self.node_output(run, "Evaluator", "evaluation")
                    record["metrics"] = self.metrics(evaluation) if with_metrics else {}
                blessing = (inputs.get("model_blessing") or [None])[0]
                record.update(
                    source="pipeline",
                    blessed=None if blessing is None else custom_property(blessing, "blessed") == 1,
                )
            record.update(
                pushed_at=_iso(artifact.create_time_since_epoch),
                model=(inputs.get("model") or [record["model"]])[0],
                pushed_artifact=artifact,
            )
            records[version] = record
        trained = self._models_by_fingerprint() if on_disk - set(records) else {}
        for version in on_disk - set(records):
            # Put there by hand: a model this pipeline trained, if its fingerprint says so.
            record = blank() | {"source": "folder"}
            model, run = trained.get(
                fingerprint(os.path.join(serving_dir, str(version))), (None, None)
            )
            if model is not None:
                if run is not None:
                    shared = self.run_record(run, with_metrics=False)
                    record.update({k: v for k, v in shared.items() if k in MODEL_KEYS})
                    evaluation = self.node_output(run, "Evaluator", "evaluation")
                    record["metrics"] = self.metrics(evaluation) if with_metrics else {}
                record.update(model=model, blessed=self._blessed(model))
            records[version] = record
        serving = max(on_disk, default=None)
        for version, record in records.items():
            record.update(
                version=version,
                serving=version == serving,
                present=version in on_disk,
                path=os.path.join(serving_dir, str(version)),
            )
        return [records[v] for v in sorted(records, reverse=True)]


def public(record, keys):
    """`record` with exactly `keys`, in that order (what --json prints)."""
    return {key: record.get(key) for key in keys}


def load(config, writable=False):
    """The `History` of `config`'s pipeline, its store read-only unless `writable`;
    RuntimeError when the store does not exist."""
    return History(
        metadata.open_store(config.resolved_metadata_path, writable), config.pipeline_name
    )


def _headline(metrics):
    """The first two metrics of the task they are of (components/evaluator/tasks.py)."""
    from components.evaluator.tasks import TASK_METRICS

    for entries in TASK_METRICS.values():
        names = [key for _, _, key in entries[:2] if key in metrics]
        if names and names[0] == entries[0][2]:
            return " ".join(f"{name}={format_metric(metrics[name])}" for name in names)
    return ""


def format_metric(value: float | None) -> str:
    """A metric for people: four significant digits, `undefined` for NaN (null in records)."""
    return "undefined" if value is None or math.isnan(value) else format(value, ".4g")


def _commit(version):
    """A code version shortened for a table: 12 digits of the commit, `-dirty` kept."""
    if not version:
        return ""
    commit, dirty, _ = version.partition("-dirty")
    return commit[:12] + dirty


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def format_table(header, rows):
    """An aligned text table of `header` and `rows` (lists of strings)."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    )


def format_runs(records):
    """`runs` as a table, newest first."""
    if not records:
        return "No runs recorded."

    def outcome(r):
        failed = r["outcome"] == "failed" and r["failed_component"]
        return f"failed ({r['failed_component']})" if failed else r["outcome"].replace("_", " ")

    header = [
        "RUN",
        "STARTED (UTC)",
        "DURATION",
        "OUTCOME",
        "ROWS",
        "INPUT",
        "SPANS",
        "METRICS",
        "BLESSED",
        "VERSION",
        "CODE",
    ]
    rows = [
        [
            r["run_id"],
            _cell(r["started"]).replace("T", " ").rstrip("Z"),
            "" if r["duration_s"] is None else f"{r['duration_s']:.1f}s",
            outcome(r),
            _cell(r["input_rows"]),
            fingerprint_digest(r["input_fingerprint"]),
            format_spans(r["spans"]),
            _headline(r["metrics"]),
            _cell(r["blessed"]),
            _cell(r["pushed_version"]),
            _commit(r["code_version"]),
        ]
        for r in records
    ]
    return format_table(header, rows)


def format_models(records):
    """`models` as a table, highest version first; `*` marks the one served."""
    if not records:
        return "No model pushed yet."

    def source(r):
        return f"rollback of {r['rollback_of']}" if r["source"] == "rollback" else r["source"]

    header = [
        "VERSION",
        "PUSHED (UTC)",
        "SOURCE",
        "RUN",
        "METRICS",
        "BLESSED",
        "INPUT",
        "SPANS",
        "DEFINITION",
        "CODE",
        "REASON",
    ]
    rows = [
        [
            f"{r['version']}{' *' if r['serving'] else ''}{'' if r['present'] else ' (gone)'}",
            _cell(r["pushed_at"]).replace("T", " ").rstrip("Z"),
            source(r),
            _cell(r["run_id"]),
            _headline(r["metrics"]),
            _cell(r["blessed"]),
            fingerprint_digest(r["input_fingerprint"]),
            format_spans(r["spans"]),
            os.path.relpath(r["definition"]) if r["definition"] else "",
            _commit(r["code_version"]),
            _cell(r["reason"]),
        ]
        for r in records
    ]
    return format_table(header, rows) + "\n* served now (the highest version in the folder)"
