"""Where `python -m pipeline report --out PATH` may write: a new file or over a report it wrote
before, never over another file or into a folder, and never half a report."""

import os
import types

import pytest

from pipeline.report import MARKER, OutPathError, _write_atomically, check_out_path


@pytest.fixture
def config(tmp_path):
    """The two paths of a pipeline's config that --out must never replace."""
    store = tmp_path / "pipelines" / "taxi" / "metadata.sqlite"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"SQLite format 3\x00")
    data = tmp_path / "taxi.csv"
    data.write_text("fare,tips\n1.0,0\n")
    return types.SimpleNamespace(resolved_metadata_path=str(store), data_path=str(data))


def _refused(path, config, why):
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(OutPathError, match=why) as refused:
        check_out_path(path, config)
    assert str(path) in str(refused.value) and "Nothing was written" in str(refused.value)
    assert isinstance(refused.value, ValueError)
    if before is not None:
        assert path.read_bytes() == before


def test_out_may_be_a_new_file_or_an_earlier_report(tmp_path, config):
    check_out_path(tmp_path / "new.html", config)
    earlier = tmp_path / "earlier.html"
    earlier.write_bytes(b"<!DOCTYPE html>\n<html><head>" + MARKER + b"</head></html>")
    check_out_path(earlier, config)


def test_out_never_replaces_the_store_the_data_or_another_file(tmp_path, config):
    _refused(tmp_path / "pipelines" / "taxi" / "metadata.sqlite", config, "ML Metadata store")
    _refused(tmp_path / "taxi.csv", config, "input data")
    page = tmp_path / "page.html"  # HTML, but no report of this tool's
    page.write_text("<!DOCTYPE html><html><head><title>notes</title></head></html>")
    _refused(page, config, "not a report")


def test_out_is_never_a_folder(tmp_path, config):
    _refused(tmp_path / "pipelines", config, "is a folder")


def test_a_failed_write_leaves_the_earlier_report_and_no_partial_file(tmp_path):
    report = tmp_path / "run.html"
    report.write_text("the earlier report")
    with pytest.raises(UnicodeEncodeError):
        _write_atomically(str(report), "half a report, then \udc80")  # unencodable
    assert report.read_text() == "the earlier report"
    assert os.listdir(tmp_path) == ["run.html"]
    _write_atomically(str(report), "the new report")
    assert report.read_text() == "the new report"
    assert os.listdir(tmp_path) == ["run.html"]
