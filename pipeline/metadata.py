"""The one reader of a pipeline's ML Metadata store: the store itself, a pipeline's runs, what a
run output, and the metrics of an evaluation; and the few records the kit writes there itself
(a run's provenance, an interrupted execution canceled, a rollback). Every module reaches ML
Metadata through here (tests/test_layering.py checks it).

What a run is made of, in the store TFX's local runner writes: a `pipeline` context named
after the pipeline; one `pipeline_run` context per run (named by the run id, the time the run
began), its child; per node a `node` context `<pipeline>.<node id>`. Each run's executions
belong to all three, cached ones included (they point at the artifacts they reuse). Several
pipelines may share one store: every reader here takes the pipeline's name.

No TensorFlow import, and nothing from the rest of `pipeline`: `runs`, `models` and
`rollback` list rows of a SQLite store, metrics included, in about a second.
"""

import ast
import functools
import glob
import importlib
import importlib.util
import os
import struct
import sys

_TFMA = "tensorflow_model_analysis"
_METRICS_MODULE = f"{_TFMA}.proto.metrics_for_slice_pb2"
# A TFRecord: the data's length, the length's CRC, the data, the data's CRC.
_LENGTH = struct.Struct("<Q")
_CRC_SIZE = 4


def open_store(metadata_path, writable=False):
    """The SQLite ML Metadata store at `metadata_path`, which must exist; read-only unless
    `writable`, so a reader can never change it.

    Connects through ml_metadata alone: TFX's config helper would import TensorFlow.
    """
    from ml_metadata.metadata_store import metadata_store
    from ml_metadata.proto import metadata_store_pb2

    if not os.path.exists(metadata_path):
        raise RuntimeError(f"No ML Metadata store at {metadata_path}: run the pipeline first.")
    modes = metadata_store_pb2.SqliteMetadataSourceConfig
    config = metadata_store_pb2.ConnectionConfig()
    config.sqlite.filename_uri = metadata_path
    config.sqlite.connection_mode = modes.READWRITE if writable else modes.READONLY
    return metadata_store.MetadataStore(config)


def run_contexts(store, pipeline_name):
    """The `pipeline_run` contexts of `pipeline_name`'s runs, newest first."""
    pipeline = store.get_context_by_type_and_name("pipeline", pipeline_name)
    if pipeline is None:
        return []
    runs = [
        c for c in store.get_children_contexts_by_context(pipeline.id) if c.type == "pipeline_run"
    ]
    return sorted(runs, key=lambda c: (c.create_time_since_epoch, c.id), reverse=True)


def latest_run(store, pipeline_name):
    """The `pipeline_run` context of `pipeline_name`'s newest run; RuntimeError if it has none."""
    runs = run_contexts(store, pipeline_name)
    if not runs:
        raise RuntimeError(f"No run of pipeline {pipeline_name!r} is recorded in ML Metadata.")
    return runs[0]


def _run_events(store, run, event_type):
    executions = store.get_executions_by_context(run.id)
    return [
        event
        for event in store.get_events_by_execution_ids([e.id for e in executions])
        if event.type == event_type
    ]


def output(store, run, type_name):
    """The newest artifact of `type_name` that `run`'s executions output (or, cached,
    reused), or None."""
    from ml_metadata.proto import metadata_store_pb2

    ids = {e.artifact_id for e in _run_events(store, run, metadata_store_pb2.Event.OUTPUT)}
    artifacts = store.get_artifacts_by_id(list(ids))
    types = {
        t.id: t.name for t in store.get_artifact_types_by_id(list({a.type_id for a in artifacts}))
    }
    found = [a for a in artifacts if types[a.type_id] == type_name]
    return max(found, key=lambda a: a.id) if found else None


def inputs(store, run, key):
    """The artifacts `run`'s executions took as their input `key`, newest first."""
    from ml_metadata.proto import metadata_store_pb2

    ids = {
        event.artifact_id
        for event in _run_events(store, run, metadata_store_pb2.Event.INPUT)
        if event.path.steps and event.path.steps[0].key == key
    }
    return sorted(store.get_artifacts_by_id(list(ids)), key=lambda a: -a.id)


def execution_state(execution):
    """An execution's state as ML Metadata names it, in lower case: `new`, `running`,
    `complete`, `failed`, `cached`, `canceled` (or `unknown`)."""
    from ml_metadata.proto import metadata_store_pb2

    return metadata_store_pb2.Execution.State.Name(execution.last_known_state).lower()


def _node_id(context_name, pipeline_name):
    """`Trainer` for the node context `<pipeline>.Trainer`; None for another pipeline's."""
    prefix = f"{pipeline_name}."
    return context_name[len(prefix) :] if context_name.startswith(prefix) else None


def run_nodes(store, pipeline_name, run):
    """[(execution, the id of its node, or None)] of `run`'s executions, oldest first."""
    executions = sorted(store.get_executions_by_context(run.id), key=lambda e: e.id)
    found = []
    for execution in executions:
        nodes = [
            _node_id(c.name, pipeline_name)
            for c in store.get_contexts_by_execution(execution.id)
            if c.type == "node"
        ]
        found.append((execution, next((n for n in nodes if n), None)))
    return found


def newest_output(store, executions, key):
    """The newest artifact that one of `executions` output (or, cached, reused) under `key`,
    or None."""
    from ml_metadata.proto import metadata_store_pb2

    events = store.get_events_by_execution_ids([e.id for e in executions]) if executions else []
    ids = {
        e.artifact_id
        for e in events
        if e.type == metadata_store_pb2.Event.OUTPUT and e.path.steps and e.path.steps[0].key == key
    }
    return max(store.get_artifacts_by_id(list(ids)), key=lambda a: a.id) if ids else None


def latest_output(metadata_path, pipeline_name, type_name):
    """The artifact of `type_name` that the newest run of `pipeline_name` recorded at
    `metadata_path` output, or None; RuntimeError without a store or a run."""
    store = open_store(metadata_path)
    return output(store, latest_run(store, pipeline_name), type_name)


def _set_properties(item, values):
    """Puts `values` ({name: str or int}) on an artifact, execution or context proto."""
    for name, value in values.items():
        field = "int_value" if isinstance(value, int) else "string_value"
        setattr(item.custom_properties[name], field, value)


def put_context_properties(store, contexts, values):
    """Puts `values` ({name: str or int}) on `contexts` (of `run_contexts`) and writes them to
    `store`, opened writable."""
    for context in contexts:
        _set_properties(context, values)
    store.put_contexts(contexts)


def unfinished_executions(store, pipeline_name):
    """[(execution, the id of its node or None, its run's id or None)] of each execution of
    `pipeline_name` left NEW or RUNNING: going on, or its process gone."""
    pipeline = store.get_context_by_type_and_name("pipeline", pipeline_name)
    if pipeline is None:
        return []
    found = []
    for execution in store.get_executions_by_context(pipeline.id):
        if execution_state(execution) not in ("new", "running"):
            continue
        contexts = {c.type: c.name for c in store.get_contexts_by_execution(execution.id)}
        node = _node_id(contexts.get("node", ""), pipeline_name) or None
        found.append((execution, node, contexts.get("pipeline_run")))
    return found


def has_artifact_at(store, uri):
    """Whether `store` records an artifact at `uri`."""
    return bool(store.get_artifacts_by_uri(uri))


def cancel_execution(store, execution, values):
    """Marks `execution` CANCELED in `store` (opened writable), with `values` ({name: str or
    int}) among its properties."""
    from ml_metadata.proto import metadata_store_pb2

    execution.last_known_state = metadata_store_pb2.Execution.CANCELED
    _set_properties(execution, values)
    store.put_executions([execution])


class PipelineRecords:
    """Everything a store holds about one pipeline, read at once: its runs (newest first),
    their executions with their node and type, and what each execution took and output.

    Several pipelines may share the store: only `pipeline_name`'s records are read.
    """

    def __init__(self, store, pipeline_name):
        self._store = store
        self.pipeline_name = pipeline_name
        self.pipeline_context = store.get_context_by_type_and_name("pipeline", pipeline_name)
        self.run_contexts = run_contexts(store, pipeline_name)  # newest first
        executions = (
            store.get_executions_by_context(self.pipeline_context.id)
            if self.pipeline_context is not None
            else []
        )
        self.executions = {e.id: e for e in executions}
        type_ids = list({e.type_id for e in executions})
        execution_types = {t.id: t.name for t in store.get_execution_types_by_id(type_ids)}
        self.execution_type = {e.id: execution_types[e.type_id] for e in executions}
        self.node_of = {}  # execution id -> node id
        for context in store.get_contexts_by_type("node"):
            node = _node_id(context.name, pipeline_name)
            if node is not None:
                for execution in store.get_executions_by_context(context.id):
                    self.node_of[execution.id] = node
        self.run_executions = {
            run.id: sorted(
                (e for e in store.get_executions_by_context(run.id) if e.id in self.executions),
                key=lambda e: e.id,
            )
            for run in self.run_contexts
        }
        self.run_of = {e.id: run for run in self.run_contexts for e in self.run_executions[run.id]}
        self._read_events(list(self.executions))

    def _read_events(self, execution_ids):
        """The artifacts the executions took (`inputs`) and output (`outputs`): {execution id:
        {key: [artifact, ...]}}; `artifacts` by id, `artifact_type` names, and `producer`: the
        execution that first output each artifact."""
        from ml_metadata.proto import metadata_store_pb2

        store = self._store
        events = store.get_events_by_execution_ids(execution_ids) if execution_ids else []
        artifacts = store.get_artifacts_by_id(list({e.artifact_id for e in events}))
        self.artifacts = {a.id: a for a in artifacts}
        artifact_types = {
            t.id: t.name
            for t in store.get_artifact_types_by_id(list({a.type_id for a in artifacts}))
        }
        self.artifact_type = {a.id: artifact_types[a.type_id] for a in artifacts}
        self.inputs, self.outputs = {}, {}
        sides = {
            metadata_store_pb2.Event.OUTPUT: self.outputs,
            metadata_store_pb2.Event.INPUT: self.inputs,
        }
        for event in events:
            if event.type not in sides:
                continue
            key = event.path.steps[0].key if event.path.steps else ""
            sides[event.type].setdefault(event.execution_id, {}).setdefault(key, []).append(
                self.artifacts[event.artifact_id]
            )
        self.producer = {  # artifact id -> the execution that output it first
            a.id: execution_id
            for execution_id in sorted(self.outputs, reverse=True)
            for group in self.outputs[execution_id].values()
            for a in group
        }

    def node_output(self, run, node, key):
        """The newest artifact `node` output (or, cached, reused) under `key` in `run`, or
        None."""
        found = [
            artifact
            for execution in self.run_executions[run.id]
            if self.node_of.get(execution.id) == node
            for artifact in self.outputs.get(execution.id, {}).get(key, [])
        ]
        return max(found, key=lambda a: a.id) if found else None

    def record_execution(self, type_name, values, inputs, outputs):
        """Writes a complete execution of `type_name` (a type registered if new) into the
        pipeline's context, the store opened writable: `values` ({name: str or int}) its
        properties, `inputs` {key: an artifact of the store}, `outputs` {key: (artifact type
        name, uri, its properties)}: new artifacts."""
        from ml_metadata.proto import metadata_store_pb2 as pb

        store = self._store
        execution = pb.Execution(
            type_id=store.put_execution_type(pb.ExecutionType(name=type_name)),
            last_known_state=pb.Execution.COMPLETE,
        )
        _set_properties(execution, values)

        def event(kind, key):
            step = pb.Event.Path.Step
            return pb.Event(type=kind, path=pb.Event.Path(steps=[step(key=key), step(index=0)]))

        pairs = [(artifact, event(pb.Event.INPUT, key)) for key, artifact in inputs.items()]
        for key, (artifact_type, uri, properties) in outputs.items():
            artifact = pb.Artifact(
                type_id=store.get_artifact_type(artifact_type).id, uri=uri, state=pb.Artifact.LIVE
            )
            _set_properties(artifact, properties)
            pairs.append((artifact, event(pb.Event.OUTPUT, key)))
        contexts = [self.pipeline_context] if self.pipeline_context is not None else []
        store.put_execution(execution, pairs, contexts)


def custom_property(item, key):
    """A custom property's value (string or int), None when absent."""
    if item is None or key not in item.custom_properties:
        return None
    value = item.custom_properties[key]
    which = value.WhichOneof("value")
    return getattr(value, which) if which else None


def metric_name(key):
    """A TFMA `MetricKey`'s name, per-class ones as `precision/class_2`."""
    if key.sub_key.HasField("class_id"):
        return f"{key.name}/class_{key.sub_key.class_id.value}"
    return key.name


@functools.cache
def _metrics_for_slice_type():
    """TFMA's `MetricsForSlice` message class. Built, unless TFMA is loaded already, from the
    descriptor its generated module holds, in a pool of its own: importing that module runs
    tensorflow_model_analysis/__init__.py, which imports TensorFlow (8 s of CPU)."""
    if _METRICS_MODULE in sys.modules:
        return sys.modules[_METRICS_MODULE].MetricsForSlice
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    package = importlib.util.find_spec(_TFMA)  # finds the package without running it
    path = os.path.join(package.submodule_search_locations[0], "proto", "metrics_for_slice_pb2.py")
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    serialized = next(
        ast.literal_eval(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "AddSerializedFile"
    )
    pool = descriptor_pool.DescriptorPool()
    for dependency in descriptor_pb2.FileDescriptorProto.FromString(serialized).dependency:
        # Protobuf's own (wrappers.proto), as the generated module would import them.
        module = importlib.import_module(
            dependency.removesuffix(".proto").replace("/", ".") + "_pb2"
        )
        pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(serialized)
    message = pool.FindMessageTypeByName(f"{_TFMA}.MetricsForSlice")
    return message_factory.GetMessageClass(message)


def _records(path):
    """The records of an uncompressed TFRecord file, as TFMA and the kit's Evaluator write
    metrics; ValueError naming the file when it is cut short. CRCs are not checked."""
    with open(path, "rb") as f:
        data = f.read()
    offset = 0
    while offset < len(data):
        if offset + _LENGTH.size > len(data):
            raise ValueError(f"{path}: truncated TFRecord file at byte {offset}.")
        (length,) = _LENGTH.unpack_from(data, offset)
        start = offset + _LENGTH.size + _CRC_SIZE
        offset = start + length + _CRC_SIZE
        if offset > len(data):
            raise ValueError(f"{path}: truncated TFRecord file: its last record is cut off.")
        yield data[start : start + length]


def load_metrics(evaluation_uri):
    """The `MetricsForSlice` protos of an evaluation, as `tfma.load_metrics` reads them: from
    `metrics*.tfrecord` files (else `metrics*`). Read without TensorFlow where the folder is
    local; a remote one (`gs://`) goes through TFMA."""
    if "://" in evaluation_uri:
        import tensorflow_model_analysis as tfma

        yield from tfma.load_metrics(evaluation_uri)
        return
    prefix = os.path.join(evaluation_uri, "metrics")
    message = _metrics_for_slice_type()
    for path in sorted(glob.glob(prefix + "*.tfrecord") or glob.glob(prefix + "*")):
        for record in _records(path):
            yield message.FromString(record)


def overall_metrics(evaluation_uri):
    """{name: value} of the evaluated model on the overall slice; per-class ones as
    `precision/class_2`."""
    for metrics_for_slice in load_metrics(evaluation_uri):
        if metrics_for_slice.slice_key.single_slice_keys:
            continue
        values = {}
        for entry in metrics_for_slice.metric_keys_and_values:
            # With a baseline, TFMA reports both models and their difference: keep the candidate.
            if (
                entry.key.is_diff
                or entry.key.model_name not in ("", "candidate")
                or not entry.value.HasField("double_value")
            ):
                continue
            values[metric_name(entry.key)] = entry.value.double_value.value
        return values
    return {}
