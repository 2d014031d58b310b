"""The base of this kit's Beam executors: TFX's, without the package of TFX it builds.

Unless the Beam arguments name packages, a setup or requirements file or a container image,
TFX's `BaseBeamExecutor` copies its own installation (51 MB) to a new temporary folder and
builds an sdist of it for Beam's workers, before every Beam component
(`tfx.utils.dependency_utils.build_ephemeral_package`): 1.5 to 2 s each, and the copy is
left behind, four of them per pipeline run. This kit never needs it: a local runner starts
no workers that would install it, the remote ones (`beam_runner` "dataflow" or "portable")
run the pipeline's worker image, which holds TFX (`--sdk_container_image` on Dataflow,
`--environment_config` on Flink or Spark; pipeline/vertex.py `beam_args`), and an sdist of
TFX alone would not hold this kit's components anyway.
"""

from tfx.dsl.components.base import base_beam_executor
from tfx.utils import dependency_utils


class BeamExecutor(base_beam_executor.BaseBeamExecutor):
    """TFX's `BaseBeamExecutor` with the Beam arguments used as given."""

    def __init__(self, context: base_beam_executor.BaseBeamExecutor.Context | None = None):
        # TFX offers no switch for it: its constructor calls the module's function, which is
        # swapped for the identity while it runs (LocalDagRunner builds one executor at a time).
        add_tfx_package = dependency_utils.make_beam_dependency_flags
        dependency_utils.make_beam_dependency_flags = list
        try:
            super().__init__(context)
        finally:
            dependency_utils.make_beam_dependency_flags = add_tfx_package
