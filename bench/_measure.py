"""Peak resident memory and CPU time over time, for the pipeline benchmarks."""

import contextlib
import threading
import time

import psutil


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

    def _rss(self):
        total = self._process.memory_info().rss
        if self._include_children:
            for child in self._process.children(recursive=True):
                with contextlib.suppress(psutil.NoSuchProcess):
                    total += child.memory_info().rss
        return total

    def _cpu(self):
        times = self._process.cpu_times()
        # children_*: children that ended and were waited for; live ones are added below.
        total = times.user + times.system + times.children_user + times.children_system
        if self._include_children:
            for child in self._process.children(recursive=True):
                with contextlib.suppress(psutil.NoSuchProcess):
                    child_times = child.cpu_times()
                    total += child_times.user + child_times.system
        return total

    def run(self):
        while not self._stopped.is_set():
            self.samples.append((time.monotonic(), self._rss(), self._cpu()))
            time.sleep(self._interval)

    def stop(self):
        self._stopped.set()
        self.join()

    def peak(self, start, end):
        """The largest sample taken between `start` and `end` (time.monotonic())."""
        inside = [rss for t, rss, _ in self.samples if start <= t <= end]
        return max(inside) if inside else 0

    def cpu_seconds(self, start, end):
        """CPU seconds used between the first and the last sample taken within `start` and
        `end`: up to one interval short at each end, and 0 for a window shorter than one."""
        inside = [cpu for t, _, cpu in self.samples if start <= t <= end]
        return inside[-1] - inside[0] if inside else 0.0


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
