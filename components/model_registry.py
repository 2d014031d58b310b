"""The Vertex AI Model Registry as a push destination: each blessed model a version of one model.

The Pusher (components/pusher) publishes a blessed model in its serving folder on Cloud Storage
(components/serving_dir.py, through Vertex's /gcs/ mount), then uploads that version folder
to the registry as the new default version of the pipeline's model, with a TensorFlow serving
container and labels that lead back to the run; with an endpoint, it deploys the version there
with all of the traffic. `python -m pipeline rollback` on a registry moves the `default` alias
(and the endpoint's traffic) to an earlier version.

Every write is also described as the REST call it is (`method`, `url`, `body`): what
`rollback --dry-run` prints and the Pusher logs. google-cloud-aiplatform sends it (imported only
here, when the registry is used); the description follows the REST reference, and the tests
check it against what aiplatform sends. No TensorFlow import.
"""

import dataclasses
import hashlib
import json
import logging
import re

log = logging.getLogger(__name__)

# The newest TensorFlow prediction container the Vertex AI documentation lists (CPU); it
# serves a SavedModel with TensorFlow Serving. Each is mirrored in us-, europe- and
# asia-docker.pkg.dev; any of them works in any region.
DEFAULT_SERVING_CONTAINER = "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest"
DEFAULT_MACHINE_TYPE = "n1-standard-2"
DEFAULT_ALIAS = "default"
# Where Vertex AI Pipelines mounts Cloud Storage in every task: /gcs/B/P is gs://B/P.
GCS_MOUNT = "/gcs/"
# The label the Pusher puts on every version it uploads (it uploads only blessed models);
# rollback refuses a version without it unless forced.
BLESSED_LABEL = "blessed"
# The KFP placeholder Vertex AI replaces with the pipeline job's ID in a task's parameters.
PIPELINE_JOB_NAME = "{{$.pipeline_job_name}}"

_RESOURCE = re.compile(
    r"projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/(?P<kind>[a-zA-Z]+)/(?P<id>[^/@]+)"
)
# A user-given model ID (UploadModelRequest.model_id); endpoint IDs are numbers.
_MODEL_ID = re.compile(r"[a-z_][a-z0-9_-]{0,62}")
_ENDPOINT_ID = re.compile(r"[0-9]{1,19}")
# Label keys and values: at most 63 of these characters (a key starts with a letter).
_LABEL_CHARACTERS = re.compile(r"[^a-z0-9_-]+")
_LABEL_LENGTH = 63


def resource_name(value, kind, project, location):
    """`projects/P/locations/R/<kind>/ID` from that form or from an ID (in `project` and
    `location`); ValueError, saying what would do, for anything else."""
    example = "my_model" if kind == "models" else "1234567890"
    id_pattern = _MODEL_ID if kind == "models" else _ENDPOINT_ID
    full = _RESOURCE.fullmatch(value or "")
    if full:
        if full["kind"] != kind or not id_pattern.fullmatch(full["id"]):
            raise ValueError(f"{value!r} is not the resource name of one of Vertex AI's {kind}.")
        return value
    if not id_pattern.fullmatch(value or ""):
        raise ValueError(
            f"{value!r}: give projects/PROJECT/locations/REGION/{kind}/ID, or an ID such as "
            f"{example!r} with the project and region."
        )
    if not project:
        raise ValueError(
            f"{value!r} is an ID: name the project (and region) it is in, or give "
            f"projects/PROJECT/locations/REGION/{kind}/{value}."
        )
    return f"projects/{project}/locations/{location}/{kind}/{value}"


@dataclasses.dataclass(frozen=True)
class RegistryDestination:
    """Where the Pusher uploads (the Pusher's `model_registry` parameter, as JSON)."""

    model: str  # projects/P/locations/R/models/ID: created by the first upload
    pipeline_name: str  # the registry model's display name, and its versions' `pipeline` label
    serving_container_image: str = DEFAULT_SERVING_CONTAINER
    endpoint: str | None = None  # projects/P/locations/R/endpoints/ID; None: no deployment
    machine_type: str = DEFAULT_MACHINE_TYPE  # of the endpoint's replica

    def __post_init__(self):
        resource_name(self.model, "models", None, None)
        if self.endpoint is not None:
            resource_name(self.endpoint, "endpoints", None, None)
            if _RESOURCE.fullmatch(self.endpoint)["location"] != self.location:
                raise ValueError(
                    f"endpoint {self.endpoint} is not in {self.location}, the model's region."
                )
        if not self.serving_container_image:
            raise ValueError("serving_container_image: name the model's serving container.")

    @property
    def project(self):
        return _RESOURCE.fullmatch(self.model)["project"]

    @property
    def location(self):
        return _RESOURCE.fullmatch(self.model)["location"]

    @property
    def model_id(self):
        return _RESOURCE.fullmatch(self.model)["id"]

    def to_json(self):
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text):
        return cls(**json.loads(text))


def gcs_uri(path):
    """The gs:// URI of a path under Vertex's Cloud Storage mount (a gs:// URI unchanged);
    ValueError for any other path: the registry only reads Cloud Storage."""
    if path.startswith("gs://"):
        return path
    if path.startswith(GCS_MOUNT):
        return "gs://" + path[len(GCS_MOUNT) :]
    raise ValueError(
        f"{path} is not on Cloud Storage: the Model Registry points at the pushed folder, "
        f"so the serving folder must be under {GCS_MOUNT}<bucket>/."
    )


def fingerprint_digest(text, width=12):
    """A short stand-in for a long text (an input fingerprint): the first hex digits of its
    sha256, as `runs` shows it and the registry label carries it; "" for none."""
    return hashlib.sha256(text.encode()).hexdigest()[:width] if text else ""


def label_value(text):
    """`text` as a Vertex AI label value: lowercase, other characters as "-", 63 at most."""
    return _LABEL_CHARACTERS.sub("-", str(text).lower())[:_LABEL_LENGTH]


def version_labels(pipeline_name, run_id, model_artifact_id, input_fingerprint):
    """The labels of an uploaded version: the run that made it and the data it learnt from
    (the 12 digits `runs` shows as INPUT); a link that is unknown is left out."""
    labels = {
        "pipeline": pipeline_name,
        "pipeline-run": run_id,
        "model-artifact": model_artifact_id,
        "data-fingerprint": fingerprint_digest(input_fingerprint),
        BLESSED_LABEL: "true",
    }
    return {key: label_value(value) for key, value in labels.items() if value not in (None, "")}


def api_url(location, path):
    """The REST URL of `path` (a resource name, with its verb) in `location`'s Vertex AI API."""
    return f"https://{location}-aiplatform.googleapis.com/v1/{path}"


def versioned(model, version):
    """`model@version`: one version (or alias) of a registry model."""
    return f"{model}@{version}"


class Registry:
    """One registry model (and its endpoint) through google-cloud-aiplatform.

    `credentials` None: aiplatform's own (Application Default Credentials; in a Vertex task,
    its service account)."""

    def __init__(self, destination, credentials=None):
        self.destination = destination
        self.credentials = credentials

    def get(self, version=None):
        """The model's `version` (ID or alias; None: the default version) as the REST API
        gives it (`versionId`, `versionAliases`, `labels`, `artifactUri`, ...); None when
        the model, or that version, does not exist."""
        from google.api_core import exceptions
        from google.cloud import aiplatform

        try:
            model = aiplatform.Model(
                self.destination.model, version=version, credentials=self.credentials
            )
        except exceptions.NotFound:
            return None
        return model.to_dict()

    def upload_request(self, artifact_uri, labels, new_model):
        """The UploadModel call of `upload`: a new model (its first version), or a new
        version of it; either way the default version."""
        d = self.destination
        body = {
            "model": {
                "displayName": d.pipeline_name,
                "containerSpec": {"imageUri": d.serving_container_image},
                "labels": dict(labels),
                "artifactUri": artifact_uri,
                "versionAliases": [DEFAULT_ALIAS],
            },
            **({"modelId": d.model_id} if new_model else {"parentModel": d.model}),
        }
        return {
            "method": "POST",
            "url": api_url(
                d.location, f"projects/{d.project}/locations/{d.location}/models:upload"
            ),
            "body": body,
        }

    def upload(self, artifact_uri, labels, new_model):
        """Uploads the SavedModel folder at `artifact_uri` (gs://) as the new default version;
        returns its version ID."""
        from google.cloud import aiplatform

        d = self.destination
        uploaded = aiplatform.Model.upload(
            serving_container_image_uri=d.serving_container_image,
            artifact_uri=artifact_uri,
            model_id=d.model_id if new_model else None,
            parent_model=None if new_model else d.model,
            is_default_version=True,
            display_name=d.pipeline_name,
            labels=dict(labels),
            project=d.project,
            location=d.location,
            credentials=self.credentials,
        )
        return uploaded.version_id

    def set_default_request(self, version):
        """The MergeVersionAliases call of `set_default`."""
        return {
            "method": "POST",
            "url": api_url(
                self.destination.location,
                f"{versioned(self.destination.model, version)}:mergeVersionAliases",
            ),
            "body": {"versionAliases": [DEFAULT_ALIAS]},
        }

    def set_default(self, version):
        """Moves the `default` alias to `version` (Vertex takes it off the one that had it)."""
        from google.cloud import aiplatform

        d = self.destination
        aiplatform.models.ModelRegistry(
            d.model, location=d.location, project=d.project, credentials=self.credentials
        ).add_version_aliases([DEFAULT_ALIAS], version)

    def endpoint_version(self):
        """The version of this model that gets all of the endpoint's traffic, or None."""
        from google.cloud import aiplatform

        d = self.destination
        endpoint = aiplatform.Endpoint(d.endpoint, credentials=self.credentials)
        full = {key for key, share in endpoint.traffic_split.items() if share == 100}
        return next(
            (
                deployed.model_version_id
                for deployed in endpoint.list_models()
                if deployed.id in full and deployed.model == d.model
            ),
            None,
        )

    def deployed_model_name(self, version):
        return f"{self.destination.pipeline_name}-v{version}"

    def deploy_request(self, version):
        """The DeployModel call of `deploy`: one replica of the endpoint's machine type, and
        all of the endpoint's traffic ("0": the model being deployed)."""
        d = self.destination
        return {
            "method": "POST",
            "url": api_url(d.location, f"{d.endpoint}:deployModel"),
            "body": {
                "deployedModel": {
                    "model": versioned(d.model, version),
                    "displayName": self.deployed_model_name(version),
                    "dedicatedResources": {
                        "machineSpec": {"machineType": d.machine_type},
                        "minReplicaCount": 1,
                        "maxReplicaCount": 1,
                    },
                },
                "trafficSplit": {"0": 100},
            },
        }

    def deploy(self, version):
        """Deploys `version` to the endpoint with 100% of its traffic; the models deployed
        there before stay deployed, with none."""
        from google.cloud import aiplatform

        d = self.destination
        model = aiplatform.Model(d.model, version=version, credentials=self.credentials)
        endpoint = aiplatform.Endpoint(d.endpoint, credentials=self.credentials)
        model.deploy(
            endpoint=endpoint,
            deployed_model_display_name=self.deployed_model_name(version),
            traffic_split={"0": 100},
            machine_type=d.machine_type,
            min_replica_count=1,
            max_replica_count=1,
        )


# What `send` logs before each call: this, then the call's REST description as JSON.
SENDING = "Vertex AI Model Registry call: "


def send(description, call, *args):
    """Logs the REST description of a call, then makes it."""
    log.info("%s%s", SENDING, json.dumps(description, sort_keys=True))
    return call(*args)


def publish(destination, artifact_uri, labels, credentials=None):
    """Makes the SavedModel folder at `artifact_uri` the default version of the registry
    model (and, with an endpoint, the deployed one); returns its version ID. The same folder
    already the default version is not uploaded again."""
    registry = Registry(destination, credentials)
    current = registry.get()
    if current is not None and current.get("artifactUri") == artifact_uri:
        log.info("%s is already the default version %s", artifact_uri, current.get("versionId"))
        return current.get("versionId")
    upload = registry.upload_request(artifact_uri, labels, new_model=current is None)
    version = send(upload, registry.upload, artifact_uri, labels, current is None)
    if destination.endpoint:
        send(registry.deploy_request(version), registry.deploy, version)
    return version
