"""tensorflow/tensorflow's TF1 `tensorflow/examples/learn/` Estimator samples
(tests/examples_learn_programs.py) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py examples_learn_programs`): iris's
custom model_fns on float64 arrays (an Estimator given no model_dir; Adagrad at a fixed
and an exponentially decayed rate), iris.py's DNNClassifier given
`RunConfig().replace(...)` over arrays read back from an HDF5 file, the text samples'
bag-of-words (its labels a pandas Series, also as users' splits leave it), character cnn
and character GRU model_fns over int64 and uint8 ids, mnist.py's conv model_fn,
boston.py's DNNRegressor, multiple_gpu.py's device placement and wide_n_deep_tutorial.py's
five reader threads (`num_threads=5`: each reads the epochs). Each program runs once here (a module fixture);
`exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import examples_learn_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestExamplesLearn(ComparedWithTf215):
    programs = programs


def test_reader_threads_each_read_the_epochs_and_are_warned_of(caplog):
    """2.15's `num_threads` reader threads each read `num_epochs` epochs, with a warning
    (here in the kit's words): wide_n_deep_tutorial.py's evaluation read its test file five
    times over."""
    import numpy as np

    from components.estimator import inputs

    with caplog.at_level("WARNING", logger=inputs.__name__):
        dataset = inputs.numpy_input_fn(
            {"x": np.arange(3.0)}, batch_size=2, num_epochs=1, shuffle=False, num_threads=2
        )()
    assert [len(batch["x"]) for batch in dataset] == [2, 2, 2]
    assert any("each thread reads" in r.getMessage() for r in caplog.records)
    assert any("without shuffle" in r.getMessage() for r in caplog.records)
