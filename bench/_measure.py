"""Peak resident memory and CPU time over time, for the pipeline benchmarks."""

import contextlib
import threading
import time

import numpy as np
import psutil

# Seconds between two listings of the children (a child started in between is missed until
# the next one).
CHILDREN_LISTED_EVERY = 1.0


class ResourceSampler(threading.Thread):
    """Samples the resident memory and the CPU seconds used so far of this process (and,
    if asked, of its children: multi-process Beam workers) every `interval` seconds until
    stopped.  CPU seconds show what a component costs apart from how well it spreads over
    the cores, and move less than wall time when other work shares the machine."""

    def __init__(self, interval=0.05, include_children=False):
        super().__init__(daemon=True)
        self.samples = []
        self._interval = interval
        self._include_children = include_children
        self._process = psutil.Process()
        self._stopped = threading.Event()
        self._children, self._children_listed = [], float("-inf")

    def _sample(self):
        """(resident bytes, CPU seconds so far) of this process and, if asked, its live
        children, in one walk over them."""
        times = self._process.cpu_times()
        rss = self._process.memory_info().rss
        # children_*: children that ended and were waited for; live ones are added below.
        cpu = times.user + times.system + times.children_user + times.children_system
        if self._include_children:
            # Listing the children reads every process on the machine: in a thread of the
            # measured process, 20 times a second, it took a fifth of the GIL.
            if time.monotonic() - self._children_listed > CHILDREN_LISTED_EVERY:
                self._children = self._process.children(recursive=True)
                self._children_listed = time.monotonic()
            for child in self._children:
                with contextlib.suppress(psutil.NoSuchProcess):
                    child_rss, child_times = child.memory_info().rss, child.cpu_times()
                    rss += child_rss
                    cpu += child_times.user + child_times.system
        return rss, cpu

    def run(self):
        while not self._stopped.is_set():
            self.samples.append((time.monotonic(), *self._sample()))
            time.sleep(self._interval)

    def stop(self):
        self._stopped.set()
        self.join()

    def peak(self, start, end):
        """The largest sample taken between `start` and `end` (time.monotonic())."""
        inside = [rss for t, rss, _ in self.samples if start <= t <= end]
        return max(inside) if inside else 0

    def cpu_seconds(self, start, end):
        """CPU seconds used between `start` and `end`, the CPU time at each read off the
        samples either side of it (linearly), so a window's edges are not lost between
        samples."""
        if len(self.samples) < 2:
            return 0.0
        times = [t for t, _, _ in self.samples]
        cpu = [c for _, _, c in self.samples]
        return float(np.interp(end, times, cpu) - np.interp(start, times, cpu))


def cold_run(config, include_children=False):
    """Runs `config`'s pipeline in this process; returns ({component: (wall s, peak RSS,
    CPU s)}, (total wall s, peak RSS, CPU s), summary)."""
    import sys

    from pipeline.runner import ProgressReporter, run_locally

    sampler = ResourceSampler(include_children=include_children)
    sampler.start()
    reporter = ProgressReporter(sys.stderr)
    began = time.monotonic()
    summary = run_locally(config, reporter=reporter)
    ended = time.monotonic()
    sampler.stop()
    components = {
        node: (end - start, sampler.peak(start, end), sampler.cpu_seconds(start, end))
        for node, (start, end) in reporter.windows.items()
    }
    whole = (ended - began, sampler.peak(began, ended), sampler.cpu_seconds(began, ended))
    return components, whole, summary
