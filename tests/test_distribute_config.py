"""Estimators given `tf.distribute` strategies through `RunConfig`
(tests/distribute_config_programs.py) here against tf.estimator 2.15.

Recorded once under 2.15 (`tests/tf215/record_family.py distribute_config_programs`): the
distributed training guide's `LinearRegressor` under `MirroredStrategy()`, a warm-started
`DNNClassifier` under `MirroredStrategy(devices=["/cpu:0"])` (exported and served), the
multi-worker Estimator tutorial's Keras `model_fn` and sharding `input_fn(mode,
input_context)` under compat.v1's `MirroredStrategy` through `train_and_evaluate`,
`CentralStorageStrategy` and `OneDeviceStrategy`, a V1 canned
`DNNLinearCombinedClassifier` under one-replica strategies, `model_to_estimator` of a
two-output Keras model under `MirroredStrategy()`, contrib's `DistributeConfig` through
`experimental_distribute`, what a strategy did not take (tensors from `input_fn`, a TF1
hook, `eval_distribute` alone) and a `model_fn` branching on a tensor in Python (AutoGraph
converted it under a strategy). Each program runs once here (a module fixture);
`exact` parts must be equal, `close` ones within 1e-4.
"""

from tests import distribute_config_programs as programs
from tests.tf215_recordings import ComparedWithTf215, program_runs

ours = program_runs(programs)


class TestDistributeConfig(ComparedWithTf215):
    programs = programs
