"""The run report's page from plain data (no pipeline run): a huge text is cut to a stated
size, every candidate's curves get a color each with training and validation told apart,
flat series are left out and named, and the evaluation's plots become charts."""

import copy
import re

from pipeline.report.render import MAX_TEXT, render
from tests.test_report import _hostile_data

HUGE = "x" * 20_000_000  # one CSV cell of 20 MB


def _data():
    data = copy.deepcopy(_hostile_data())
    (split,) = data["statistics"]["splits"]
    data["statistics"]["features"]["big"] = {
        "type": "BYTES",
        "splits": {
            split: {
                "row": {"count": 2, "missing_pct": 0.0, "unique": 2},
                "chart": {"kind": "values", "shares": {HUGE: 50.0, "small": 50.0}},
            }
        },
    }
    data["anomalies"]["found"][0]["description"] = HUGE
    return data


def test_a_20_mb_cell_makes_a_page_of_kilobytes_that_says_it_was_cut():
    page = render(_data())
    assert len(page) < 200_000
    assert f"{'x' * MAX_TEXT}\N{HORIZONTAL ELLIPSIS} (cut: 20,000,000 characters)" in page
    assert f"longer than {MAX_TEXT} characters is shown cut" in page


def test_every_candidate_has_a_color_its_validation_is_dashed_and_flat_series_are_named():
    data = _data()
    rising, flat = [(1, 0.5), (2, 0.4), (3, 0.35)], [(1, 0.1), (2, 0.1), (3, 0.1)]
    data["training"]["curves"] = {
        "loss": {"linear train": rising, "linear validation": rising, "dnn train": rising},
        "learning_rate": {"linear train": flat, "dnn train": flat},
    }
    data["training"]["series"] = {
        "linear train": ("linear", "train"),
        "linear validation": ("linear", "validation"),
        "dnn train": ("dnn", "train"),
    }
    page = render(data)
    assert page.count('<polyline class="line"') == 3  # loss only: learning_rate is flat
    assert page.count('stroke-dasharray="6 3"') == 1  # the validation curve
    assert "Left out, as they never changed: learning_rate." in page
    assert ">dnn</span>" in page and ">linear</span>" in page  # a legend entry each


def test_charts_go_loss_then_held_out_metrics_then_what_training_alone_logged():
    """A canned model's layer summaries (2.15's, training only) come after the metrics."""
    data = _data()
    rising = [(1, 0.5), (2, 0.4), (3, 0.35)]
    data["training"]["curves"] = {
        tag: {"dnn train": rising, **({} if inner else {"dnn validation": rising})}
        for tag, inner in [
            ("bias", True),
            ("dnn/hiddenlayer_0/fraction_of_zero_values", True),
            ("recall", False),
            ("loss", False),
        ]
    }
    data["training"]["series"] = {
        "dnn train": ("dnn", "train"),
        "dnn validation": ("dnn", "validation"),
    }
    page = render(data)
    titles = ["loss", "recall", "bias", "dnn/hiddenlayer_0/fraction_of_zero_values"]
    at = [page.index(f">{title}<") for title in titles]
    assert at == sorted(at), at


def test_the_evaluation_plots_become_roc_precision_recall_confusion_and_calibration():
    data = _data()
    data["evaluation"]["plots"] = {
        "candidate": {
            "roc": [(1.0, 1.0), (0.3, 0.8), (0.0, 0.0)],
            "pr": [(1.0, 0.5), (0.8, 0.7), (0.1, 1.0)],
            "confusion": {"threshold": 0.5, "cells": [[40.0, 10.0], [5.0, 45.0]]},
            "calibration": [(0.05, 0.06, 30.0, 2.0, 1.6), (0.85, 0.86, 20.0, 17.0, 17.1)],
        }
    }
    page = render(data)
    for kind in ("roc", "pr", "confusion", "calibration"):
        assert f'data-chart="{kind}"' in page
    assert page.count('<rect class="bar"') >= 4 and ">45</text>" in page


def test_a_long_curve_is_drawn_whole():
    data = _data()
    steps = [(step, 1.0 / step) for step in range(1, 400)]  # a polyline of some 5,000 characters
    data["training"]["curves"] = {"loss": {"train": steps}}
    page = render(data)
    (points,) = re.findall(r'<polyline class="line" points="([^"]*)"', page)
    assert len(points) > 4 * MAX_TEXT and points.count(",") == len(steps)
