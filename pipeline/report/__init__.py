"""`python -m pipeline report [RUN]`: one run of a pipeline as one self-contained HTML file, to
read where the run happened or wherever the file is sent (no server, no network: the styles,
the SVG charts and the one small script are inline).

`collect` reads the run back into plain data, `charts` lays its charts out, `render` writes the
page from templates/ with Jinja2 (autoescaped); this module says where the page goes.
"""

import os
import tempfile

from pipeline import history
from pipeline.report.collect import collect, find_run
from pipeline.report.render import GENERATOR, render

REPORTS_DIR = "reports"  # next to the pipeline's ML Metadata store
# A report's first bytes hold this line; --out writes over no file without it.
MARKER = f'<meta name="generator" content="{GENERATOR}">'.encode()
_MARKER_WITHIN = 1024


class OutPathError(ValueError):
    """A path `report --out` must not write to."""


def default_path(config, run_id):
    """`<pipeline folder>/reports/<run id>.html`, next to the run's ML Metadata store (the
    run id's colons as dashes: a file name that every tool takes)."""
    folder = os.path.join(os.path.dirname(config.resolved_metadata_path), REPORTS_DIR)
    return os.path.join(folder, run_id.replace(":", "-") + ".html")


def check_out_path(path, config):
    """Refuses (OutPathError) a `path` to write a report to that is a folder, or a file that
    is not a report this tool wrote (no MARKER in its first bytes): --out must never replace
    the pipeline's store, its data or anything else by a report."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        raise OutPathError(
            f"report --out {path}: is a folder; --out takes a file name. Nothing was written."
        )
    if not os.path.exists(path):
        return
    with open(path, "rb") as f:
        if MARKER in f.read(_MARKER_WITHIN):
            return
    known = {
        config.resolved_metadata_path: "the pipeline's ML Metadata store",
        config.data_path: "the pipeline's input data",
    }
    named = {os.path.abspath(p): what for p, what in known.items() if p}
    what = named.get(path, "a file that is not a report")
    raise OutPathError(
        f"report --out {path}: is {what}; --out writes only a new file or over a report this "
        f"tool wrote (one with {MARKER.decode()} in its first {_MARKER_WITHIN} bytes). "
        "Nothing was written."
    )


def write_report(config, run_id=None, out=None):
    """Writes the report of run `run_id` (default: the newest) of `config`'s pipeline to `out`
    (checked by `check_out_path`; default: `default_path`, in the tool's own folder); returns
    the path written."""
    if out is not None:
        check_out_path(out, config)
    past = history.load(config)
    run = find_run(past, run_id)
    path = os.path.abspath(out or default_path(config, run.name))
    _write_atomically(path, render(collect(past, run)))
    return path


def _write_atomically(path, text):
    """A temporary file in `path`'s folder renamed over `path`: a reader never opens half a
    report, and a failure leaves what was there."""
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, staged = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(staged, 0o644)  # mkstemp's 0600 would keep a report from whoever it is sent to
        os.replace(staged, path)
    except BaseException:
        os.unlink(staged)
        raise


def write_new_run_report(config, known_run_ids):
    """The report of the run `config`'s pipeline recorded since `known_run_ids`
    (`history.run_ids`), or None when it recorded none (it failed before it began)."""
    past = history.load(config)
    new = [run for run in past.run_contexts if run.id not in known_run_ids]
    return write_report(config, new[0].name) if new else None
