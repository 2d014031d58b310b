"""The run report (`python -m pipeline report`), opened in headless Chromium as a reader would.

One module fixture makes three runs of the taxi pipeline: the shared first run (blessed and
pushed, no baseline), then, on a copy of its store, `python -m pipeline run` with an AUC floor
no model reaches (not blessed, compared with the first model), then one that fails in the
Transform (a preprocessing_fn that raises). `run` writes the report of the last two itself;
`report RUN` writes the first's. Each page is loaded from its file in Chromium (Debian's
package, which bootstrap.py test installs) with the network cut off, and checked for script
errors and for charts and tables with the run's own figures.
"""

import contextlib
import io
import os
import pathlib
import re

import pytest

from tests.browser import Page, chromium
from tests.conftest import TAXI_DEFINITION, copy_of_run

pytestmark = pytest.mark.slow

_IMPOSSIBLE_AUC = 1.01
BROKEN = "broken on purpose: the report test's failing Transform"


def _main(*args, output_dir):
    """`python -m pipeline ARGS` for the copy's pipeline, in this process: (exit status,
    stdout, stderr)."""
    from pipeline.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(
                [*map(str, args), "--definition", TAXI_DEFINITION, "--output-dir", str(output_dir)]
            )
        except SystemExit as e:  # refused: one line on stderr, exit status 2
            code = e.code
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="module")
def runs(pipeline_run, tmp_path_factory):
    from pipeline import history

    first_config, first = pipeline_run
    out = tmp_path_factory.mktemp("report")
    config = copy_of_run(first_config, out)
    strict = ["--train-steps", "200", "--eval-steps", "10"]
    strict += ["--blessing-threshold", str(_IMPOSSIBLE_AUC)]
    code, stdout, stderr = _main("run", "--data", config.data_path, *strict, output_dir=out)
    # A run that fails in the Transform: its preprocessing_fn raises (bad data would be
    # refused before anything runs, with no run to report).
    broken = out / "broken_preprocessing.py"
    broken.write_text(f"def preprocessing_fn(inputs):\n    raise RuntimeError({BROKEN!r})\n")
    error, _, failed_stderr = _main(
        "run", "--data", config.data_path, *strict, "--preprocessing-fn",
        f"{broken}:preprocessing_fn", output_dir=out,
    )  # fmt: skip
    first_id = history.load(config).run_contexts[-1].name
    first_page = out / "first.html"
    return {
        "config": config,
        "first": first,
        "first_id": first_id,
        "first_page": first_page,
        "report": _main("report", first_id, "--out", first_page, output_dir=out),
        "unknown": _main("report", "no-such-run", output_dir=out),
        "strict_code": code,
        "strict_stdout": stdout,
        "strict_stderr": stderr,
        "failed_error": error,
        "failed_stderr": failed_stderr,
        "records": history.load(config).runs(),
    }


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


def _fmt(value):
    return f"{value:.4g}"


def _report_path(text):
    """The report path the run summary's `  report: PATH (...)` line names, or, for a failed
    run, its `Run report: PATH` line."""
    found = re.search(r"^(?:  report|Run report): (\S+)", text, re.MULTILINE)
    assert found, f"no report line in: {text}"
    return found.group(1)


def test_run_prints_where_its_report_is_and_keeps_its_exit_status(runs):
    from pipeline.report import default_path

    assert runs["strict_code"] == 3  # ran, not blessed: what it was without a report
    assert "warning" not in runs["strict_stderr"]
    strict, failed = runs["records"][1], runs["records"][0]
    assert (strict["outcome"], failed["outcome"]) == ("not_blessed", "failed")
    path = _report_path(runs["strict_stdout"])
    assert path == default_path(runs["config"], strict["run_id"])
    assert path.startswith(os.path.join(runs["config"].output_dir, "pipelines", "taxi", "reports"))
    assert os.path.isfile(path)
    # A failed run has its report too, named before its error, which still ends the run.
    assert runs["failed_error"] == 1 and BROKEN in runs["failed_stderr"]
    failed_path = _report_path(runs["failed_stderr"])
    assert failed_path == default_path(runs["config"], failed["run_id"])
    assert os.path.isfile(failed_path)


def test_report_command_writes_the_run_asked_for_and_names_the_runs_there_are(runs):
    code, stdout, _ = runs["report"]
    assert code == 0 and stdout.strip() == str(runs["first_page"])
    code, stdout, stderr = runs["unknown"]
    assert code == 2 and stdout == ""
    assert "No run 'no-such-run' of pipeline 'taxi'" in stderr
    for record in runs["records"]:
        assert record["run_id"] in stderr


def test_first_run_report_shows_data_training_evaluation_and_push(runs, browser, tmp_path):
    from components.statistics_gen.layout import load_statistics
    from pipeline.history import code_version
    from pipeline.metadata import overall_metrics

    first = runs["first"]
    page = Page(browser, runs["first_page"])
    page.check_renders_alone()
    assert page.texts("header h1")[0].startswith("taxi")
    assert page.texts("header .badge") == ["pushed"]

    # Data: a card per feature with a chart that has bars, the anomalies' verdict.
    features = load_statistics(first.statistics_uri)["train"].datasets[0].features
    assert page.count("#data .card.feature") == len(features)
    assert page.count("#data svg[data-chart=histogram] rect.bar") > len(features)
    assert page.count("#data svg[data-chart=values] rect.bar") > 0
    assert page.texts("#data .legend span") == ["train", "eval"]
    assert "no anomalies" in page.texts("#data")[0]

    # Training: curves from the event files, loss first, with points.
    assert page.texts("#training .card h4")[0] == "loss"
    assert page.count("#training svg[data-chart=line] circle.point") >= 3
    assert page.count("#training svg[data-chart=line] polyline") > 0

    # Evaluation: TFMA's own figures, no baseline for a first model.
    metrics = overall_metrics(first.evaluation_uri)
    assert page.row("#evaluation table.overall", "auc") == ["auc", _fmt(metrics["auc"])]
    assert "No baseline" in page.texts("#evaluation")[0]
    assert page.count("#evaluation svg[data-chart=slices] rect.bar[data-model=candidate]") > 0
    assert page.count("#evaluation svg[data-chart=slices] rect.bar[data-model=baseline]") == 0

    # Blessing against the gate, and where the model went.
    assert page.texts("#blessing .verdict .badge") == ["blessed"]
    assert "auc >= 0.6" in page.texts("#blessing .verdict")[0]
    assert page.row("#blessing table.checks", "auc >= 0.6")[-1] == "passed"
    assert page.row("#blessing table.checks", "at most 0.01 below the baseline")[-1] == (
        "not checked: no baseline"
    )
    push = page.texts("#push")[0]
    assert os.path.basename(first.pushed_to) in push and first.pushed_to in push

    # Lineage: the run, its input, definition and code.
    lineage = page.texts("#lineage")[0]
    assert runs["first_id"] in lineage
    assert str(runs["config"].data_path) in lineage  # the input fingerprint's file
    assert os.path.realpath(TAXI_DEFINITION) in lineage
    assert code_version() in lineage
    assert page.row("#lineage table.components", "Trainer")[1] == "complete"

    shot = tmp_path / "report.png"
    page.page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000  # a page of charts, not a blank one


def test_unblessed_run_report_compares_with_the_baseline_and_shows_the_failed_check(runs, browser):
    from pipeline.metadata import overall_metrics

    strict = runs["records"][1]
    page = Page(browser, _report_path(runs["strict_stdout"]))
    page.check_renders_alone()
    assert page.texts("header .badge") == ["not blessed"]

    # The evaluation beside the baseline: the first run's model, with TFMA's figures for both.
    history_evaluation = _evaluation_uri(runs["config"], strict["run_id"])
    metrics = overall_metrics(history_evaluation)
    first_metrics = overall_metrics(runs["first"].evaluation_uri)
    auc = page.row("#evaluation table.overall", "auc")
    assert auc[:3] == ["auc", _fmt(metrics["auc"]), _fmt(first_metrics["auc"])]
    assert f"trained in run {runs['first_id']}" in page.texts("#evaluation")[0]
    candidates = page.count("#evaluation svg[data-chart=slices] rect.bar[data-model=candidate]")
    baselines = page.count("#evaluation svg[data-chart=slices] rect.bar[data-model=baseline]")
    assert candidates > 0 and baselines > 0

    # The per-slice table sorts by a column when its header is clicked (the page's script).
    page.page.locator("#evaluation details summary").click()
    page.page.locator("#evaluation table.slices th", has_text="example_count").click()
    counts = [
        int(cells.split("\n")[0].replace(",", ""))
        for cells in page.page.locator(
            "#evaluation table.slices tbody td:nth-child(2)"
        ).all_inner_texts()
    ]
    assert len(counts) > 1 and counts == sorted(counts)
    page.check_renders_alone()

    # Not blessed: the floor it missed, TFMA's verdict, nothing pushed.
    assert page.texts("#blessing .verdict .badge") == ["not blessed"]
    floor = page.row("#blessing table.checks", f"auc >= {_IMPOSSIBLE_AUC:g}")
    assert floor[1] == _fmt(metrics["auc"]) and floor[-1] == "failed"
    assert re.search(r"TFMA validation\s+failed", page.texts("#blessing")[0])
    assert "not pushed" in page.texts("#push")[0]


def test_failed_run_report_names_the_failing_component(runs, browser):
    page = Page(browser, _report_path(runs["failed_stderr"]))
    page.check_renders_alone()
    assert page.texts("header .badge") == ["failed in Transform"]
    row = page.row("#lineage table.components", "Transform")
    assert row[1] == "failed"
    for section in ("#training", "#evaluation", "#push"):
        assert "did not run in this run" in page.texts(section)[0]


def test_report_out_writes_over_its_own_report_and_refuses_any_other_path(runs):
    config, first_page = runs["config"], runs["first_page"]
    earlier = first_page.read_bytes()
    code, stdout, _ = _main(
        "report", runs["first_id"], "--out", first_page, output_dir=config.output_dir
    )
    assert code == 0 and stdout.strip() == str(first_page)
    assert first_page.read_bytes() != earlier  # written again (its time in the footer)
    folder = os.path.dirname(config.resolved_metadata_path)
    for path, why in (
        (config.resolved_metadata_path, "is the pipeline's ML Metadata store"),
        (config.data_path, "is the pipeline's input data"),
        (folder, "is a folder"),
    ):
        around = (folder, os.path.dirname(os.path.abspath(path)))
        before = [_files_in(f) for f in around]
        code, stdout, stderr = _main(
            "report", "--data", config.data_path, "--out", path, output_dir=config.output_dir
        )
        assert (code, stdout) == (2, "")
        assert f"--out {os.path.abspath(path)}: {why}" in stderr and "Nothing was written" in stderr
        assert [_files_in(f) for f in around] == before  # nothing written, nothing left behind


def _files_in(folder):
    """{name: bytes} of the files in `folder`, None for its folders."""
    return {
        entry.name: entry.read_bytes() if entry.is_file() else None
        for entry in pathlib.Path(folder).iterdir()
    }


HOSTILE = "<script>alert(1)</script>"
QUOTES = "\"&'<>"


def _hostile_data():
    """What `collect` reads, with a script and every character HTML treats specially wherever
    the run puts text of its own: names of features, slices, splits, nodes, messages."""
    from components.evaluator.tasks import BlessingGate

    statistics_row = {"count": 10, "missing_pct": 0.0, "unique": 2}
    numeric_row = {"count": 10, "missing_pct": 10.0, "mean": 1.5, "std_dev": 0.5}
    metrics = {"auc": 0.7, "example_count": 10}
    return {
        "pipeline": HOSTILE,
        "record": {
            "run_id": QUOTES,
            "started": "2026-12-01T03:13:24Z",
            "duration_s": 12.5,
            "outcome": "not_blessed",
            "failed_component": None,
            "input_rows": 10,
            "input_fingerprint": HOSTILE,
            "definition": QUOTES,
            "definition_sha256": HOSTILE,
            "code_version": QUOTES,
            "spans": [{"span": HOSTILE, "version": QUOTES}],
            "warm_started_from": HOSTILE,
        },
        "generated": HOSTILE,
        "components": [
            {
                "node": HOSTILE,
                "state": "complete",
                "start_s": 0.0,
                "duration_s": 1.0,
                "error": QUOTES,
            }
        ],
        "artifacts": [(HOSTILE, QUOTES, HOSTILE, "/tmp/" + QUOTES)],
        "baseline_model": {"uri": HOSTILE, "run_id": QUOTES},
        "statistics": {
            "uri": HOSTILE,
            "baseline": QUOTES,
            "splits": {HOSTILE: 10},
            "features": {
                HOSTILE: {
                    "type": QUOTES,
                    "splits": {
                        HOSTILE: {
                            "row": statistics_row,
                            "chart": {"kind": "values", "shares": {HOSTILE: 60.0, QUOTES: 40.0}},
                        }
                    },
                },
                QUOTES: {
                    "type": "FLOAT",
                    "splits": {
                        HOSTILE: {
                            "row": numeric_row,
                            "chart": {
                                "kind": "histogram",
                                "buckets": [(0.0, 1.0, 40.0), (1.0, 2.0, 60.0)],
                            },
                        }
                    },
                },
            },
        },
        "input": {
            "unlabeled": 1,
            "bad": 1,
            "rejected_dir": HOSTILE,
            "left_out": [(QUOTES, HOSTILE)],
        },
        "anomalies": {
            "uri": HOSTILE,
            "found": [
                {
                    "split": HOSTILE,
                    "column": QUOTES,
                    "kind": HOSTILE,
                    "severity": "error",
                    "description": QUOTES,
                }
            ],
        },
        "training": {
            "uri": HOSTILE,
            "strategy": HOSTILE,
            "strategy_reason": QUOTES,
            "training_length": HOSTILE,
            "stop_reason": QUOTES,
            "model_choice": {
                "reason": HOSTILE,
                "candidates": [
                    {
                        "name": HOSTILE,
                        "chosen": True,
                        "validation_loss": 0.4,
                        "validation_metrics": {QUOTES: 0.9},
                        "seconds": 1.5,
                        "steps": 100,
                        "best_step": 60,
                        "stop_reason": QUOTES,
                        "strategy": HOSTILE,
                        "loss_spread": 0.05,
                        "weight": 1.0,
                    },
                    {
                        "name": QUOTES,
                        "chosen": False,
                        "validation_loss": 0.5,
                        "validation_metrics": {HOSTILE: 0.8},
                        "seconds": 1.0,
                        "steps": 80,
                        "best_step": 40,
                        "stop_reason": HOSTILE,
                    },
                ],
                "rows": 500,
                "folds": 5,
                "temperature": 1.25,
                "trivial": {
                    "model": QUOTES,
                    "validation_loss": 0.69,
                    "validation_metrics": {HOSTILE: 0.5},
                },
            },
            "curves": {HOSTILE: {QUOTES: [(1, 0.5), (2, 0.4)]}, QUOTES: {QUOTES: [(2, 0.9)]}},
        },
        "evaluation": {
            "uri": HOSTILE,
            "slices": [
                {
                    "keys": [],
                    "candidate": metrics,
                    "baseline": {"auc": 0.8},
                    "change": {"auc": -0.1},
                },
                {"keys": [(HOSTILE, QUOTES)], "candidate": metrics, "baseline": {}, "change": {}},
                {"keys": [(HOSTILE, HOSTILE)], "candidate": metrics, "baseline": {}, "change": {}},
            ],
            "gates": [BlessingGate("auc", threshold=0.6, max_change=0.01)],
            "validation_ok": False,
            "failures": [
                {"metric": "auc", "change": True, "kind": "change_threshold", "message": HOSTILE}
            ],
        },
        "blessing": {
            "blessed": False,
            "uri": HOSTILE,
            "current_model": QUOTES,
            "baseline_model": HOSTILE,
        },
        "push": {"pushed": False, "version": None, "destination": None, "reason": HOSTILE},
    }


def test_the_runs_own_text_is_shown_as_text_and_never_run(browser, tmp_path):
    from pipeline.report.render import render

    page_html = render(_hostile_data())
    assert HOSTILE not in page_html and QUOTES not in page_html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page_html
    assert "&#34;&amp;&#39;&lt;&gt;" in page_html
    path = tmp_path / "hostile.html"
    path.write_text(page_html)
    page = Page(browser, path)
    page.check_renders_alone()
    assert page.count("script") == 1  # the page's own sorting script
    assert page.texts("header h1")[0].startswith(HOSTILE)
    assert page.page.title() == f"{HOSTILE}: run {QUOTES}"
    assert page.page.locator("#data .card.feature").first.get_attribute("data-feature") == HOSTILE
    assert page.texts("#data .card.feature h4") == [f"{HOSTILE} {QUOTES}", f"{QUOTES} FLOAT"]
    assert page.row("#data table.anomalies", HOSTILE)[1:] == [QUOTES, HOSTILE, "error", QUOTES]
    assert page.row("#data table.left-out", QUOTES)[1:] == [HOSTILE]
    assert HOSTILE in page.svg_texts("#data svg[data-chart=values] text.tick title")
    assert page.texts("#training .card h4") == [HOSTILE]
    assert page.row("#training table.candidates", HOSTILE) == [
        HOSTILE, "chosen", "0.4 ± 0.05", f"{QUOTES} 0.9", "1", "1.5", "100", "60", HOSTILE, QUOTES,
    ]  # fmt: skip
    # A record from before candidates named their strategy (and weight): empty cells.
    assert page.row("#training table.candidates", QUOTES)[1] == ""
    assert page.row("#training table.candidates", QUOTES)[4] == ""
    assert page.row("#training table.candidates", QUOTES)[8] == ""
    # The trivial model on the same rows, beside the candidates; the folds and temperature
    assert page.row("#training table.candidates", f"trivial ({QUOTES})")[2:4] == [
        "0.69",
        f"{HOSTILE} 0.5",
    ]
    assert "5-fold cross-validation" in page.texts("#training p")[0]
    assert "temperature of 1.25" in page.texts("#training p")[0]
    assert HOSTILE in page.texts("#training p")[0] and QUOTES in page.texts("#training dd")
    page.page.locator("#evaluation details summary").click()
    assert page.texts("#evaluation table.slices tbody td:first-child") == [QUOTES, HOSTILE]
    assert page.svg_texts("#evaluation svg[data-chart=slices] text.tick")[-2:] == [QUOTES, HOSTILE]
    assert page.row("#blessing table.checks", "at most 0.01 below the baseline")[-1] == "failed"
    assert HOSTILE in page.texts("#blessing dl.facts dd")
    assert HOSTILE in page.texts("#push")[0]
    assert page.row("#lineage table.components", HOSTILE)[-1] == QUOTES


def _evaluation_uri(config, run_id):
    from pipeline import history

    past = history.load(config)
    run = next(r for r in past.run_contexts if r.name == run_id)
    return past.node_output(run, "Evaluator", "evaluation").uri
