"""Peak resident memory over time, for the pipeline benchmarks."""

import contextlib
import threading
import time

import psutil


class MemorySampler(threading.Thread):
    """Samples the resident memory of this process (and, if asked, of its children:
    multi-process Beam workers) every `interval` seconds until stopped."""

    def __init__(self, interval=0.05, include_children=False):
        super().__init__(daemon=True)
        self.samples = []
        self._interval = interval
        self._include_children = include_children
        self._process = psutil.Process()
        self._stopped = threading.Event()

    def _rss(self):
        total = self._process.memory_info().rss
        if self._include_children:
            for child in self._process.children(recursive=True):
                with contextlib.suppress(psutil.NoSuchProcess):
                    total += child.memory_info().rss
        return total

    def run(self):
        while not self._stopped.is_set():
            self.samples.append((time.monotonic(), self._rss()))
            time.sleep(self._interval)

    def stop(self):
        self._stopped.set()
        self.join()

    def peak(self, start, end):
        """The largest sample taken between `start` and `end` (time.monotonic())."""
        inside = [rss for t, rss in self.samples if start <= t <= end]
        return max(inside) if inside else 0


def cold_run(config, include_children=False):
    """Runs `config`'s pipeline in this process; returns ({component: (wall s, peak RSS)},
    (total wall s, peak RSS), summary)."""
    import sys

    from pipeline.runner import ProgressReporter, run_locally

    sampler = MemorySampler(include_children=include_children)
    sampler.start()
    reporter = ProgressReporter(sys.stderr)
    began = time.monotonic()
    summary = run_locally(config, reporter=reporter)
    ended = time.monotonic()
    sampler.stop()
    components = {
        node: (end - start, sampler.peak(start, end))
        for node, (start, end) in reporter.windows.items()
    }
    return components, (ended - began, sampler.peak(began, ended)), summary
