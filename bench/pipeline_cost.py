"""Cost of a cold local pipeline run: wall time and peak memory per component.

    .venv/bin/python bench/pipeline_cost.py [--train-steps N] [--data CSV]

Runs the whole pipeline once in a fresh output folder (no cache) in this
process, sampling the process's resident memory every 50 ms, and prints one
row per component plus the total.  Memory is the process's peak RSS while the
component ran (TensorFlow and the other libraries stay loaded between
components, so later rows include them).
"""

import argparse
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pipeline.config import PipelineConfig


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class MemorySampler(threading.Thread):
    def __init__(self, interval=0.05):
        super().__init__(daemon=True)
        self.samples = []
        self._interval = interval
        self._stopped = threading.Event()

    def run(self):
        while not self._stopped.is_set():
            self.samples.append((time.monotonic(), _rss_bytes()))
            time.sleep(self._interval)

    def stop(self):
        self._stopped.set()
        self.join()

    def peak(self, start, end):
        inside = [rss for t, rss in self.samples if start <= t <= end]
        return max(inside) if inside else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = PipelineConfig()
    parser.add_argument("--data", default=defaults.data_path)
    parser.add_argument("--train-steps", type=int, default=defaults.train_steps)
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    from pipeline.runner import ProgressReporter, run_locally

    output = tempfile.mkdtemp(prefix="pipeline-bench-")
    config = PipelineConfig(
        output_dir=output, data_path=args.data, train_steps=args.train_steps, enable_cache=False
    )
    sampler = MemorySampler()
    sampler.start()
    reporter = ProgressReporter(sys.stderr)
    began = time.monotonic()
    summary = run_locally(config, reporter=reporter)
    total = time.monotonic() - began
    sampler.stop()

    print(f"\nCold local run: {args.data}, train_steps={args.train_steps}, output {output}")
    print(f"{'component':32} {'wall s':>8} {'peak RSS MiB':>13}")
    for node, (start, end) in reporter.windows.items():
        print(f"{node:32} {end - start:8.1f} {sampler.peak(start, end) / 2**20:13.0f}")
    print(
        f"{'total (incl. imports in run)':32} {total:8.1f} "
        f"{max(r for _, r in sampler.samples) / 2**20:13.0f}"
    )
    print(summary.format())


if __name__ == "__main__":
    main()
