"""Programs shaped like tensorflow/models' official/r1/resnet sample (cifar10_main.py,
resnet_run_loop.py, resnet_model.py) after `tf_upgrade_v2`, here against tf.estimator
2.15 (`tests/resnet_r1_programs.py`, recorded by `tests/tf215/record_family.py resnet_r1_programs`).

Each program runs once here (a module fixture); `exact` parts must be equal, `close`
ones within 1e-4 (every random op is seeded), `loose` ones within 35%.
"""

from tests import resnet_r1_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestResnetR1Sample(ComparedWithTf215):
    programs = programs
    # fp16's values hang on its loss scale's random draws: within 35%.
    tolerances = {"close": (1e-4, 1e-5), "loose": (0.35, 0.05)}
