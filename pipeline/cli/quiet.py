"""TensorFlow's C++ start-up lines kept off the terminal, unless asked for.

Importing TensorFlow prints lines that ask nothing of the user (no CUDA driver on a CPU
machine, oneDNN, absl's "before InitializeLog"), some of them before TF_CPP_MIN_LOG_LEVEL
is read. A command that needs TensorFlow imports it here first, with its standard error
caught, and passes on what is not start-up noise. With TF_CPP_MIN_LOG_LEVEL set, or
`--verbose`, nothing is caught or hidden.
"""

import contextlib
import os
import re
import sys
import tempfile
import threading

_STARTUP_NOISE = re.compile(
    r"All log messages before absl::InitializeLog|Could not find cuda drivers|"
    r"failed call to cuInit|oneDNN custom operations|Unable to register cu\w+ factory|"
    r"computation placer already registered|TF-TRT Warning|This TensorFlow binary is "
    r"optimized to use available CPU instructions|rebuild TensorFlow with the appropriate"
)
# Lines TensorFlow's C++ logs while a pipeline runs that ask nothing of the user.
_RUN_NOISE = re.compile(r"oneDNN supports DT_\w+ only on platforms with")


def import_tensorflow(verbose=False):
    """Imports TensorFlow (and finds its devices) with its start-up noise dropped."""
    if verbose or "TF_CPP_MIN_LOG_LEVEL" in os.environ or "tensorflow" in sys.modules:
        import tensorflow as tf

        return
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"  # INFO and WARNING lines, for child processes too
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            import tensorflow as tf

            tf.config.list_physical_devices()  # where the CUDA lines are printed
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            for line in caught.read().decode(errors="replace").splitlines(keepends=True):
                if not _STARTUP_NOISE.search(line):
                    sys.stderr.write(line)


@contextlib.contextmanager
def filtered_stderr(verbose=False):
    """Standard error, the process's own file descriptor (TensorFlow's C++ logs write there),
    passed on line by line but for _RUN_NOISE; as it is with `verbose`."""
    if verbose:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)

    def pass_on():
        with os.fdopen(read_end, "rb") as lines:
            for line in lines:
                if not _RUN_NOISE.search(line.decode(errors="replace")):
                    os.write(saved, line)

    reader = threading.Thread(target=pass_on, name="stderr-filter", daemon=True)
    reader.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)  # the pipe's last writer closed: the reader ends
        reader.join(timeout=10)
        os.close(saved)
