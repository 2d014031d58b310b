"""Programs shaped like tensorflow/models' official/r1/resnet sample (cifar10_main.py,
resnet_run_loop.py, resnet_model.py) after `tf_upgrade_v2`, here against tf.estimator
2.15 (`tests/resnet_r1_programs.py`, recorded by `tests/tf215/record_family.py resnet_r1_programs`).

Each program runs once here (a module fixture); `exact` parts must be equal, `close`
ones within 1e-4 (every random op is seeded), `loose` ones within 35%.
"""

import pytest

from tests import resnet_r1_programs as programs
from tests.tf215_recordings import assert_close, program_runs, recorded

RECORDED = recorded(programs)
ours = program_runs(programs)


def test_every_program_is_recorded():
    assert sorted(RECORDED) == sorted(programs.PROGRAMS)


@pytest.mark.parametrize("name", list(programs.PROGRAMS))
def test_sample_sees_what_it_saw_under_tf215(ours, name):
    theirs = RECORDED[name]
    assert sorted(ours[name]) == sorted(theirs)
    for key, expected in theirs["exact"].items():
        assert ours[name]["exact"][key] == expected, key


@pytest.mark.parametrize(
    "name, part, rtol, atol",
    [
        ("cifar10_one_device", "close", 1e-4, 1e-5),
        ("cifar10_mirrored", "close", 1e-4, 1e-5),
        ("cifar10_train_and_evaluate", "close", 1e-4, 1e-5),
        ("fine_tune", "close", 1e-4, 1e-5),
        ("fp16", "loose", 0.35, 0.05),
    ],
)
def test_sample_values_as_under_tf215(ours, name, part, rtol, atol):
    assert_close(ours[name][part], RECORDED[name][part], name, rtol=rtol, atol=atol)
