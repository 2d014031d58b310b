"""Progress from inside a long component, for the person watching the run.

A component says what it is doing with `report`, records of a logger of their own: the
local runner prints them under the component's line (pipeline/runner.py
`ProgressReporter`); on Vertex AI or Kubeflow they are the task's log lines. `CountRows` is
a Beam step that reports the rows gone through it, every `PERIOD_S` seconds at most, from
the process it runs in (with several Beam workers, each counts its own).
"""

import logging
import time

import apache_beam as beam

LOGGER = "components.progress"
PERIOD_S = 15.0

_log = logging.getLogger(LOGGER)


def report(message: str) -> None:
    _log.info(message)


class CountRows(beam.DoFn):
    """Passes batches (RecordBatches, lists of records) through, reporting "`what`: N rows"
    every `PERIOD_S` at most."""

    def __init__(self, what: str):
        self._what = what

    def setup(self):
        self._rows = 0
        self._due = time.monotonic() + PERIOD_S

    def process(self, batch):
        self._rows += len(batch)
        if time.monotonic() >= self._due:
            self._due = time.monotonic() + PERIOD_S
            report(f"{self._what}: {self._rows:,} rows")
        yield batch
