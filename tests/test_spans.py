"""Span patterns in the data path (components/example_gen/spans.py): which spans a run reads,
what ExampleGen records of them, and the refusals; no pipeline run here (the slow test at the
end runs three days of landing data end to end)."""

import dataclasses
import datetime
import json
import os
import re

import pytest

from components.example_gen import spans
from pipeline.cli import main
from pipeline.config import PipelineConfig
from pipeline.config_values import name_of
from pipeline.definition import build_config
from pipeline.init import definition_text


def _land(root, name, rows, header="a,b,y"):
    """A CSV file at root/name with `header` and `rows` (lists of values)."""
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(header + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows))
    return path


def _rows(n, seed):
    """`n` rows of a,b,y where y is whether a + b > 1 (a learnable binary label)."""
    import random

    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        a, b = round(rng.random(), 3), round(rng.random(), 3)
        rows.append([a, b, int(a + b > 1)])
    return rows


def test_the_latest_span_by_default_a_rolling_window_and_a_fixed_range(tmp_path):
    for span in (1, 2, 10):  # 10 after 2: spans are numbers, not text
        _land(tmp_path, f"span-{span}/part-0.csv", _rows(3, span))
    pattern = str(tmp_path / "span-{SPAN}" / "*.csv")
    latest = spans.resolve(pattern)
    assert [s.number for s in latest.spans] == [10]
    assert latest.files() == [str(tmp_path / "span-10" / "part-0.csv")]
    assert [s.number for s in spans.resolve(pattern, "2").spans] == [2, 10]
    assert [s.number for s in spans.resolve(pattern, "5").spans] == [1, 2, 10]
    assert [s.number for s in spans.resolve(pattern, "1..2").spans] == [1, 2]
    # A folder pattern reads the folder's *.csv files.
    folders = spans.resolve(str(tmp_path / "span-{SPAN}"), "1..1")
    assert folders.files() == [str(tmp_path / "span-1" / "part-0.csv")]
    assert folders.record() == [[1, None]] and folders.describe() == "span 1"


def test_the_highest_version_of_a_span_and_spans_from_dates(tmp_path):
    for version in (1, 2, 10):
        _land(tmp_path, f"day-2026-12-04/v{version}/data.csv", _rows(2, version))
    _land(tmp_path, "day-2026-12-03/v7/data.csv", _rows(2, 7))
    window = spans.resolve(str(tmp_path / "day-{YYYY}-{MM}-{DD}" / "v{VERSION}"), "2")
    day = spans.span_of_date(datetime.date(2026, 12, 4))
    assert day == (datetime.date(2026, 12, 4) - datetime.date(1970, 1, 1)).days
    assert window.record() == [[day - 1, 7], [day, 10]]
    assert window.newest.describe() == "span 20791 (2026-12-04) version 10"
    fixed = spans.resolve(
        str(tmp_path / "day-{YYYY}-{MM}-{DD}" / "v{VERSION}"), "2026-12-03..2026-12-03"
    )
    assert fixed.record() == [[day - 1, 7]]


def test_a_url_pattern_is_listed_through_tensorflow_s_file_systems(tmp_path):
    """As gs:// is on Vertex: file:// here, the same code path (tf.io.gfile)."""
    _land(tmp_path, "span-1/a.csv", _rows(2, 1))
    _land(tmp_path, "span-2/a.csv", _rows(2, 2))
    window = spans.resolve(f"file://{tmp_path}/span-{{SPAN}}", "2")
    assert window.files() == [f"file://{tmp_path}/span-{n}/a.csv" for n in (1, 2)]
    # The pre-check does not read data off this machine: ExampleGen resolves it when it runs.
    assert spans.resolved_files(f"file://{tmp_path}/span-{{SPAN}}") == (
        f"file://{tmp_path}/span-{{SPAN}}"
    )


def test_a_width_modifier_reads_zero_padded_spans(tmp_path):
    _land(tmp_path, "export-007.csv", _rows(2, 1))
    _land(tmp_path, "export-012.csv", _rows(2, 2))
    window = spans.resolve(str(tmp_path / "export-{SPAN:3}.csv"), "2")
    assert window.record() == [[7, None], [12, None]]


@pytest.mark.parametrize(
    "pattern, message",
    [
        ("d/{SPAN}/{YYYY}{MM}{DD}.csv", "a date spec ({YYYY}, {MM}, {DD}) cannot go with {SPAN}"),
        ("d/v{VERSION}.csv", "{VERSION} needs {SPAN} or a date beside it"),
        ("d/{YYYY}{MM}.csv", "a date needs {YYYY}, {MM} and {DD} once each"),
        ("d/{SPAN:0}.csv", "width '0' is not a positive integer"),
        ("nothing-{SPAN}/*.csv", "matches nothing: no span found"),
    ],
)
def test_patterns_that_cannot_work_are_refused_naming_them(tmp_path, pattern, message):
    with pytest.raises(ValueError) as refused:
        spans.resolve(str(tmp_path / pattern))
    assert str(refused.value).startswith(f"data path {str(tmp_path / pattern)!r}")
    assert message in str(refused.value)


def test_window_settings_that_are_not_one_are_refused():
    assert spans.parse_window("7") == (7, None)
    assert spans.parse_window("3..9") == (None, (3, 9))
    for bad in ("0", "last", "9..3", "a..b"):
        with pytest.raises(ValueError, match="data_spans"):
            spans.parse_window(bad)


def test_a_span_whose_columns_changed_is_refused_naming_both(tmp_path):
    _land(tmp_path, "span-1/a.csv", _rows(2, 1))
    _land(tmp_path, "span-2/a.csv", [[1, 2, 0]], header="a,c,y")
    pattern = str(tmp_path / "span-{SPAN}" / "*.csv")
    with pytest.raises(ValueError) as refused:
        spans.resolve(pattern)  # the latest span, checked against the one before it
    message = str(refused.value)
    assert message.startswith(f"span 2 ({tmp_path}/span-2/a.csv) has other columns than span 1")
    assert "without b; with new c" in message and "data_spans 2..2" in message
    assert spans.resolve(pattern, "2..2").record() == [[2, None]]  # the change, said meant


def test_run_refuses_a_changed_span_in_one_line_before_any_component(tmp_path, capsys):
    _land(tmp_path, "span-1/a.csv", _rows(2, 1))
    _land(tmp_path, "span-2/a.csv", [[1, 2, 0]], header="a,c,y")
    data = str(tmp_path / "span-{SPAN}" / "*.csv")
    with pytest.raises(SystemExit) as exited:
        main(["run", "--data", data, "--label", "y", "--output-dir", str(tmp_path / "out")])
    assert exited.value.code == 2
    error = [
        line for line in capsys.readouterr().err.splitlines() if line.lower().startswith("error")
    ]
    assert len(error) == 1 and "span 2" in error[0] and "than span 1" in error[0], error
    assert not (tmp_path / "out").exists()


def test_a_pattern_names_its_pipeline_after_the_folder_above_its_first_spec():
    assert name_of("landing/span-{SPAN}/*.csv") == "landing"
    assert name_of("/data/sales/{YYYY}-{MM}-{DD}.csv") == "sales"
    assert name_of("data/taxi.csv") == "taxi"
    # A brace that is no span spec is part of the name, not a cut.
    assert name_of("exports/{a}/sales-{SPAN}.csv") == "a"
    assert name_of("exports/v{2}.csv") == "v_2"


def test_the_vertex_spec_carries_the_pattern_resolved_when_the_task_runs(tmp_path):
    from pipeline.vertex import compile_pipeline
    from tests.conftest import small_pipeline_config

    pattern = "gs://bucket/landing/span-{SPAN}/*.csv"
    config = small_pipeline_config(
        tmp_path,
        pattern,
        data_spans="2",
        pipeline_root="gs://bucket/root",
        serving_model_dir="/gcs/bucket/serving/taxi",
        image="europe-west4-docker.pkg.dev/proj/kit/taxi:test",
        warm_start=True,
    )
    job = compile_pipeline(config, str(tmp_path / "pipeline.json"))
    task = job["pipelineSpec"]["root"]["dag"]["tasks"]["ExampleGen"]
    parameters = {k: v["runtimeValue"]["constant"] for k, v in task["inputs"]["parameters"].items()}
    assert parameters["input_base"] == pattern and parameters["data_spans"] == "2"
    assert "span-1" not in json.dumps(job) and spans.RESOLVED_KEY not in parameters
    # The Pusher reads the spans the run read: nothing newer than the served model's, no push.
    pusher = job["pipelineSpec"]["root"]["dag"]["tasks"]["Pusher"]["inputs"]["artifacts"]
    assert pusher["examples"]["taskOutputArtifact"]["producerTask"] == "ExampleGen"


def test_example_gen_reads_the_window_and_records_span_and_version_as_tfx(tmp_path):
    import apache_beam as beam
    from tfx.dsl.components.base import base_beam_executor
    from tfx.types import standard_artifacts

    from components.example_gen import executor

    for span, version in ((1, 1), (2, 1), (2, 3)):
        _land(tmp_path, f"span-{span}/v{version}.csv", _rows(5, span * 10 + version))
    examples = standard_artifacts.Examples()
    examples.uri = str(tmp_path / "examples")
    context = base_beam_executor.BaseBeamExecutor.Context(
        tmp_dir=str(tmp_path / "tmp"),
        unique_id="x",
        make_beam_pipeline_fn=lambda: beam.Pipeline(argv=["--runner=FnApiRunner"]),
    )
    pattern = str(tmp_path / "span-{SPAN}" / "v{VERSION}.csv")
    executor.Executor(context).Do(
        {}, {"examples": [examples]}, {"input_base": pattern, "data_spans": "2"}
    )
    assert examples.span == 2 and examples.version == 3  # the newest span's, at its highest
    assert examples.get_int_custom_property("span") == 2
    assert examples.get_int_custom_property("version") == 3
    assert json.loads(examples.get_string_custom_property("spans")) == [[1, 1], [2, 3]]
    assert examples.get_int_custom_property("num_rows") == 10  # span 1 v1 and span 2 v3
    assert "v3.csv" in examples.get_string_custom_property("input_fingerprint")

    # StatisticsGen passes the spans on, and the ExampleValidator names them when it fails.
    from components.example_validator.executor import DataValidationError
    from components.example_validator.executor import Executor as Validator
    from tests.conftest import run_statistics_gen, schema_artifact

    statistics = run_statistics_gen(tmp_path, examples)
    assert (
        statistics.span == 2
        and statistics.get_string_custom_property("spans") == "[[1, 1], [2, 3]]"
    )
    schema = schema_artifact(
        tmp_path / "schema",
        'feature { name: "a" type: FLOAT } feature { name: "b" type: FLOAT }\n'
        'feature { name: "y" type: INT int_domain { min: 5 max: 9 } }',
    )
    anomalies = standard_artifacts.ExampleAnomalies()
    anomalies.uri = str(tmp_path / "anomalies")
    with pytest.raises(
        DataValidationError, match=re.escape("Data validation failed on spans 1-2 (version 3); ")
    ):
        Validator().Do(
            {"statistics": [statistics], "schema": [schema]},
            {"anomalies": [anomalies]},
            {"raw_label_key": "y", "warn_only": "[]"},
        )


def _cli(*argv):
    """`python -m pipeline ARGV`'s exit status, run in this process."""
    try:
        return main(list(argv))
    except SystemExit as e:
        return e.code


@pytest.mark.slow
def test_three_days_of_landing_data_retrain_on_the_newest_and_skip_a_rerun(tmp_path, capsys):
    """Day 1 trains on span 1; a rerun with nothing new pushes nothing; day 2 trains on span
    2 from day 1's blessed model; day 3 reads the last two spans; a bad day 4 is refused."""
    landing = tmp_path / "landing"
    data = str(landing / "span-{SPAN}" / "*.csv")
    out = ["--output-dir", str(tmp_path / "out")]
    run = ["run", "--data", data, "--label", "y", "--warm-start", "--candidate", "linear"]
    run += ["--train-steps", "20", "--eval-steps", "2", *out]

    def runs():
        capsys.readouterr()  # what the run printed
        assert _cli("runs", "--data", data, "--json", *out) == 0
        return json.loads(capsys.readouterr().out)

    _land(landing, "span-1/part.csv", _rows(240, 1))
    assert _cli(*run) == 0, capsys.readouterr().err[-3000:]
    (day1,) = runs()
    assert day1["spans"] == [{"span": 1, "version": None}] and day1["outcome"] == "pushed"
    assert day1["warm_started_from"] is None

    assert _cli(*run) == 3  # no new span: nothing trained, nothing pushed, and it says so
    assert "nothing new: the newest of" in capsys.readouterr().out
    assert len(runs()) == 1

    _land(landing, "span-2/part.csv", _rows(240, 2))
    assert _cli(*run) == 0, capsys.readouterr().err[-3000:]
    day2 = runs()[0]
    assert day2["spans"] == [{"span": 2, "version": None}]
    assert day2["warm_started_from"] == day1["run_id"]
    assert "landing/span-2/part.csv" in day2["input_fingerprint"]

    _land(landing, "span-3/part.csv", _rows(240, 3))
    assert _cli(*run, "--spans", "2") == 0, capsys.readouterr().err[-3000:]
    day3 = runs()[0]
    assert [s["span"] for s in day3["spans"]] == [2, 3] and day3["input_rows"] == 480
    assert day3["warm_started_from"] == day2["run_id"]
    report = (tmp_path / "out" / "pipelines" / "landing" / "reports").glob("*.html")
    page = max(report, key=os.path.getmtime).read_text()
    assert "<dt>spans read</dt><dd>2-3</dd>" in page and day2["run_id"] in page
    capsys.readouterr()
    assert _cli("models", "--data", data, *out) == 0
    assert "2-3" in capsys.readouterr().out.splitlines()[1]  # the served version's spans

    _land(landing, "span-4/part.csv", [[1, 2, 0]], header="a,c,y")
    assert _cli(*run) == 2
    err = capsys.readouterr().err.splitlines()
    (error,) = [line for line in err if line.lower().startswith("error")]
    assert "span 4" in error and "than span 3" in error


def test_the_pusher_of_a_scheduled_run_pushes_nothing_without_a_newer_span(tmp_path):
    """What a compiled pipeline's Pusher does (a local run stops before training instead):
    each pushed version records its spans, and a rolling window with nothing newer than the
    served version's is not pushed; a fixed range is."""
    from tfx.types import standard_artifacts

    from components.pusher.executor import Executor

    destination = tmp_path / "serving"

    def push(name, read, window="1"):
        model = standard_artifacts.Model()
        model.uri = str(tmp_path / name)
        os.makedirs(os.path.join(model.uri, "Format-Serving"))
        with open(os.path.join(model.uri, "Format-Serving", "fingerprint.pb"), "w") as f:
            f.write(name)  # each model a different SavedModel
        blessing = standard_artifacts.ModelBlessing()
        blessing.set_int_custom_property("blessed", 1)
        examples = standard_artifacts.Examples()
        examples.set_string_custom_property(spans.SPANS_PROPERTY, json.dumps(read))
        examples.set_string_custom_property(spans.WINDOW_PROPERTY, window)
        pushed = standard_artifacts.PushedModel()
        inputs = {"model": [model], "model_blessing": [blessing], "examples": [examples]}
        Executor().Do(inputs, {"pushed_model": [pushed]}, {"push_destination": str(destination)})
        return pushed

    first = push("day1", [[1, None]])
    version = first.get_string_custom_property("pushed_destination")
    with open(os.path.join(version, spans.SERVED_SPANS_FILE)) as f:
        assert json.load(f) == {"spans": [[1, None]]}
    again = push("day1-again", [[1, None]])
    assert again.get_int_custom_property("pushed") == 0
    reason = again.get_string_custom_property("reason")
    assert reason.startswith("nothing new: the newest span read, 1, is no newer than span 1")
    assert os.listdir(destination) == [os.path.basename(version)]
    assert push("day1-range", [[1, None]], "1..1").get_int_custom_property("pushed") == 1
    assert push("day1-v2", [[1, 2]]).get_int_custom_property("pushed") == 1  # a new version
    assert push("day2", [[1, 2], [2, None]], "2").get_int_custom_property("pushed") == 1
    assert len(os.listdir(destination)) == 4


def test_init_writes_a_span_pattern_s_window_which_the_definition_reads_back(tmp_path):
    data = tmp_path / "landing" / "span-{SPAN}" / "*.csv"
    config = PipelineConfig(data_path=str(data), data_spans="3", raw_label_key="y", task="binary")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pipeline.toml").write_text(definition_text(config, str(folder), "y", "binary"))
    read = build_config(folder / "pipeline.toml")
    assert (read.data_path, read.data_spans) == (str(data), "3")
    # A plain file's definition has no window to edit.
    plain = dataclasses.replace(config, data_path=str(tmp_path / "a.csv"), data_spans="1")
    assert "spans" not in definition_text(plain, str(folder), "y", "binary")
