"""`tfx.orchestration.kubeflow.kubeflow_dag_runner`, as TFX <= 1.15 pipelines import it.

TFX 1.15's `KubeflowDagRunner` compiled a pipeline for Kubeflow Pipelines v1 (an Argo
workflow packed as `<pipeline_name>.tar.gz`); TFX 1.21 dropped it and kfp 2 has no v1
compiler. Here its `run(pipeline)` compiles with TFX's `KubeflowV2DagRunner` (the kit's
Kubeflow and Vertex AI path) into the same folder: a KFP v2 pipeline spec, JSON, named
`<pipeline_name>.json` (an `output_filename` ending in `.tar.gz`, `.tgz` or `.zip` gets
`.json` in its place), which Kubeflow Pipelines 2 and Vertex AI Pipelines run; a warning
says what was written. The config's `tfx_image` is the image every task runs in; it must
hold this kit (built from `kubeflow/Dockerfile`), so one is required: TFX's default image
has no stand-ins. What only KFP v1 had (`pipeline_operator_funcs`, the Kubeflow metadata
config, pod labels, `metadata_ui_path`) is taken and not used, with a warning naming each
one given: the v2 spec has no ContainerOps, pods or v1 metadata service to apply them to.
"""

import logging
import os

from tfx.orchestration import tfx_runner
from tfx.orchestration.config import pipeline_config

log = logging.getLogger(__name__)

_V1_PACKAGES = (".tar.gz", ".tgz", ".zip")
_METADATA_UI_PATH = "/mlpipeline-ui-metadata.json"  # (TFX 1.15's default)


def get_default_kubeflow_metadata_config():
    """None: a KFP v2 or Vertex AI run keeps its own ML Metadata (TFX 1.15 returned the
    in-cluster gRPC service's address, which only KFP v1 launchers read)."""
    return None


def get_default_pipeline_operator_funcs(use_gcp_sa=False):
    """No ContainerOp functions: the v2 spec has no ContainerOps (module doc)."""
    del use_gcp_sa
    return []


def get_default_pod_labels():
    return {"add-pod-env": "true"}


def get_default_output_filename(pipeline_name):
    return pipeline_name + ".json"


class KubeflowDagRunnerConfig(pipeline_config.PipelineConfig):
    """TFX 1.15's arguments; `tfx_image` is the one used (module doc)."""

    def __init__(
        self,
        pipeline_operator_funcs=None,
        tfx_image=None,
        kubeflow_metadata_config=None,
        supported_launcher_classes=None,
        metadata_ui_path=_METADATA_UI_PATH,
        **kwargs,
    ):
        super().__init__(supported_launcher_classes=supported_launcher_classes, **kwargs)
        self.pipeline_operator_funcs = pipeline_operator_funcs or []
        self.tfx_image = tfx_image
        self.kubeflow_metadata_config = kubeflow_metadata_config
        self.metadata_ui_path = metadata_ui_path


class KubeflowDagRunner(tfx_runner.TfxRunner):
    """Compiles with `KubeflowV2DagRunner` (module doc)."""

    def __init__(
        self, output_dir=None, output_filename=None, config=None, pod_labels_to_attach=None
    ):
        if config and not isinstance(config, KubeflowDagRunnerConfig):
            raise TypeError("config must be type of KubeflowDagRunnerConfig.")
        super().__init__(config or KubeflowDagRunnerConfig())
        self._output_dir = output_dir or os.getcwd()
        self._output_filename = output_filename
        self._pod_labels = pod_labels_to_attach

    def _filename(self, pipeline_name):
        name = self._output_filename or get_default_output_filename(pipeline_name)
        for suffix in _V1_PACKAGES:
            if name.endswith(suffix):
                return name[: -len(suffix)] + ".json"
        return name

    def _v1_only_settings(self):
        """The names of the KFP v1 settings given (module doc)."""
        config = self.config
        given = {
            "pipeline_operator_funcs": bool(config.pipeline_operator_funcs),
            "kubeflow_metadata_config": config.kubeflow_metadata_config is not None,
            "metadata_ui_path": config.metadata_ui_path != _METADATA_UI_PATH,
            "pod_labels_to_attach": self._pod_labels is not None,
        }
        return [name for name, is_given in given.items() if is_given]

    def run(self, pipeline):
        """Writes the KFP v2 spec of `pipeline`; returns it as a dict."""
        from tfx.orchestration.kubeflow.v2 import kubeflow_v2_dag_runner

        if not self.config.tfx_image:
            raise ValueError(
                "KubeflowDagRunnerConfig(tfx_image=...) names no image: this kit compiles "
                "the pipeline with KubeflowV2DagRunner, whose tasks must run in an image "
                "holding the kit (built from kubeflow/Dockerfile), not TFX's default "
                "tensorflow/tfx image; pass tfx_image (TFX's Kubeflow samples read it "
                "from KUBEFLOW_TFX_IMAGE), or use KubeflowV2DagRunner(config="
                "KubeflowV2DagRunnerConfig(default_image=...)) directly."
            )
        unused = self._v1_only_settings()
        if unused:
            log.warning(
                "KubeflowDagRunner does not apply %s: KFP v1's (its ContainerOps, pods and "
                "metadata service), which the KFP v2 spec written here has none of.",
                ", ".join(unused),
            )
        filename = self._filename(pipeline.pipeline_info.pipeline_name)
        runner = kubeflow_v2_dag_runner.KubeflowV2DagRunner(
            config=kubeflow_v2_dag_runner.KubeflowV2DagRunnerConfig(
                default_image=self.config.tfx_image
            ),
            output_dir=self._output_dir,
            output_filename=filename,
        )
        spec = runner.run(pipeline)
        log.warning(
            "KubeflowDagRunner wrote %s: a Kubeflow Pipelines v2 pipeline spec (JSON) "
            "compiled by KubeflowV2DagRunner, which Kubeflow Pipelines 2 and Vertex AI "
            "Pipelines run; TFX 1.21 has no KFP v1 compiler for TFX 1.15's Argo workflow.",
            os.path.join(self._output_dir, filename),
        )
        return spec
