"""A driver that fingerprints the files a component reads from outside the pipeline.

TFX reuses a cached run when a component's inputs and parameters are
unchanged; a CSV or schema file rewritten at the same path is neither, so a
rerun would reuse outputs made from the old data.  Before the cache is
checked, this driver adds `input_fingerprint` (path, size and modification
time of each file read, as TFX's own ExampleGen fingerprints its input) to the
parameters.  Only the local runner runs drivers; the compiled Vertex pipeline
turns caching off for these components instead.
"""

import tensorflow as tf
from tfx.dsl.components.base import base_driver as component_driver
from tfx.orchestration.portable import base_driver
from tfx.proto.orchestration import driver_output_pb2

FINGERPRINT_KEY = "input_fingerprint"


def files_fingerprint(paths):
    """One line per file: path, size in bytes, modification time in ns."""
    lines = []
    for path in paths:
        try:
            stat = tf.io.gfile.stat(path)
            lines.append(f"{path} {stat.length} {stat.mtime_nsec}")
        except tf.errors.NotFoundError:
            lines.append(f"{path} absent")  # the executor says what is wrong
    return "\n".join(lines)


class InputFingerprintDriver(component_driver.BaseDriver, base_driver.BaseDriver):
    """Subclasses say which files a run of their component reads.

    (A component's DRIVER_CLASS must be TFX's component driver; the local
    runner calls the portable driver's `run`.)
    """

    def __init__(self, mlmd_connection):
        component_driver.BaseDriver.__init__(self, mlmd_connection)
        base_driver.BaseDriver.__init__(self, mlmd_connection)

    def input_files(self, exec_properties):
        raise NotImplementedError

    def run(self, execution_info):
        output = driver_output_pb2.DriverOutput()
        output.exec_properties[FINGERPRINT_KEY].string_value = files_fingerprint(
            self.input_files(execution_info.exec_properties)
        )
        return output
