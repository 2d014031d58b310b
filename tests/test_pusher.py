"""Pusher executor: blessed models land atomically, others never do."""

import os
from pathlib import Path

import pytest
from tfx.types import standard_artifacts

from components.pusher.executor import NOT_BLESSED, Executor


def _model(tmp_path, files):
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "model")
    serving = tmp_path / "model" / "Format-Serving"
    serving.mkdir(parents=True)
    for name, content in files.items():
        (serving / name).write_bytes(content)
    return model


def _blessing(blessed):
    blessing = standard_artifacts.ModelBlessing()
    blessing.set_int_custom_property("blessed", int(blessed))
    return blessing


def _push(tmp_path, model, blessed, destination):
    pushed = standard_artifacts.PushedModel()
    pushed.uri = str(tmp_path / "pushed")
    Executor().Do(
        {"model": [model], "model_blessing": [_blessing(blessed)]},
        {"pushed_model": [pushed]},
        {"push_destination": str(destination)},
    )
    return pushed


def test_blessed_model_is_copied_to_a_numeric_version(tmp_path):
    model = _model(tmp_path, {"saved_model.pb": b"graph", "fingerprint.pb": b"one"})
    destination = tmp_path / "serving"
    pushed = _push(tmp_path, model, True, destination)
    target = pushed.get_string_custom_property("pushed_destination")
    assert pushed.get_int_custom_property("pushed") == 1
    assert os.path.dirname(target) == str(destination)
    assert os.path.basename(target).isdigit()
    assert Path(target, "saved_model.pb").read_bytes() == b"graph"
    assert os.listdir(destination) == [os.path.basename(target)]


def test_same_model_is_not_pushed_twice_but_a_new_one_is(tmp_path):
    destination = tmp_path / "serving"
    first = _push(tmp_path, _model(tmp_path, {"fingerprint.pb": b"one"}), True, destination)
    again = _push(tmp_path, _reuse(tmp_path), True, destination)
    assert again.get_string_custom_property(
        "pushed_destination"
    ) == first.get_string_custom_property("pushed_destination")
    other = tmp_path / "other"
    other.mkdir()
    newer = _push(other, _model(other, {"fingerprint.pb": b"two"}), True, destination)
    assert newer.get_string_custom_property(
        "pushed_destination"
    ) != first.get_string_custom_property("pushed_destination")
    assert len(os.listdir(destination)) == 2


def _reuse(tmp_path):
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "model")
    return model


def test_unblessed_model_is_not_pushed_and_says_why(tmp_path):
    destination = tmp_path / "serving"
    destination.mkdir()
    (destination / "17").mkdir()
    (destination / "17" / "saved_model.pb").write_bytes(b"old")
    pushed = _push(tmp_path, _model(tmp_path, {"saved_model.pb": b"new"}), False, destination)
    assert pushed.get_int_custom_property("pushed") == 0
    assert pushed.get_string_custom_property("reason") == NOT_BLESSED
    assert os.listdir(destination) == ["17"]
    assert (destination / "17" / "saved_model.pb").read_bytes() == b"old"


def test_failed_copy_leaves_no_version_and_no_staging_folder(tmp_path):
    model = _model(tmp_path, {"saved_model.pb": b"graph"})
    # A dangling symlink makes copytree fail after copying the rest.
    os.symlink(tmp_path / "missing", tmp_path / "model" / "Format-Serving" / "broken")
    destination = tmp_path / "serving"
    with pytest.raises(OSError, match="broken"):
        _push(tmp_path, model, True, destination)
    assert os.listdir(destination) == []
