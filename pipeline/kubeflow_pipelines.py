"""Kubeflow Pipelines (open source): compile the pipeline for a self-hosted cluster, submit
it, schedule it.

The compiled file is the KFP v2 pipeline spec pipeline/vertex.py compiles with TFX's
KubeflowV2DagRunner, as kfp's compiler writes it (YAML: the spec, then the Kubernetes
platform spec), changed where a self-hosted cluster differs from Vertex AI:

- artifacts go under `defaultPipelineRoot`, a minio://, s3:// or gs:// folder;
- each task runs `kubeflow/kfp_executor.py`, which hands TFX the local copies KFP's
  launcher makes of the artifacts (TensorFlow cannot open minio:// or s3://);
- the platform spec (kfp-kubernetes' format) gives every task the image pull policy and
  secrets, and mounts the serving volume, a PersistentVolumeClaim, into the Pusher;
- no latest-blessed-model resolver: KFP's backend does not run resolver tasks.

Compiling imports TFX.  Submitting and scheduling need only the file, PyYAML, protobuf and
the kfp client; they check the settings and then the host (one healthz request with a short
timeout) before anything else, and with `dry_run` contact nothing.
"""

import contextlib
import dataclasses
import json
import os
import posixpath
import sys
import urllib.error
import urllib.request

from pipeline.config import LOCAL_BACKENDS
from pipeline.vertex import SetupError, compile_job, image_paths, write_file

PIPELINE_ROOT_SCHEMES = ("minio://", "s3://", "gs://")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
EXECUTOR_COMMAND = ["python", "-m", "kubeflow.kfp_executor"]
PUSHER_TASK = "Pusher"
API_PATH = "/apis/v2beta1"
HOST_ENV = "KF_PIPELINES_ENDPOINT"  # what kfp.Client reads too
TOKEN_ENV = "KF_PIPELINES_TOKEN"
HEALTHZ_TIMEOUT_S = 5
# The v2beta1 filter's EQUALS operation, as kfp.Client's experiment lookup sends it.
_EQUALS = 1
NO_HOST = (
    f"no Kubeflow Pipelines host: pass --host URL or set {HOST_ENV} (e.g. http://localhost:8080 "
    "after `kubectl port-forward -n kubeflow svc/ml-pipeline-ui 8080:80`)"
)


def experiment_id_placeholder(experiment):
    """What a dry run shows for the experiment's ID, which only the host knows."""
    return f"<id of experiment {experiment!r}>"


@dataclasses.dataclass(frozen=True)
class Cluster:
    """What the compiled file asks of the cluster besides the image (all in its platform
    spec): how the image is pulled, and the volume the Pusher writes to."""

    image_pull_policy: str | None = None  # Always, IfNotPresent or Never; None: the cluster's
    image_pull_secrets: tuple[str, ...] = ()  # Secrets of type kubernetes.io/dockerconfigjson
    serving_volume: str | None = None  # "PVC:MOUNTPATH"

    def volume(self, problems):
        """(claim, mount path) of `serving_volume`, or None with a problem added."""
        claim, _, mount = (self.serving_volume or "").partition(":")
        if claim and mount.startswith("/"):
            return claim, mount.rstrip("/") or "/"
        problems.append(
            "--serving-volume PVC:MOUNTPATH: a PersistentVolumeClaim the Pusher writes blessed "
            f"models to, and where it is mounted (an absolute path), got {self.serving_volume!r}"
        )
        return None


def kubeflow_config(config, cluster):
    """`config` as the tasks on a self-hosted cluster see it (the serving folder defaults to
    <mount>/<pipeline name>); SetupError lists every problem."""
    problems = []
    if not (config.pipeline_root or "").startswith(PIPELINE_ROOT_SCHEMES):
        problems.append(
            f"--pipeline-root must be a {', '.join(PIPELINE_ROOT_SCHEMES)} folder (e.g. "
            f"minio://mlpipeline/v2/artifacts/{config.pipeline_name}): KFP's launcher copies "
            "every artifact under it to and from the object store"
        )
    in_image = image_paths(config, problems, mounts=())
    serving_dir = config.serving_model_dir
    volume = cluster.volume(problems)
    if volume:
        mount = volume[1]
        serving_dir = posixpath.normpath(serving_dir or f"{mount}/{config.pipeline_name}")
        if not serving_dir.startswith(mount.rstrip("/") + "/"):
            problems.append(
                f"--serving-model-dir {serving_dir} must be under the --serving-volume mount "
                f"{mount}: the Pusher copies with file-system calls and publishes each version "
                "with one rename, atomic on a volume"
            )
    if cluster.image_pull_policy not in (None, *PULL_POLICIES):
        problems.append(f"--image-pull-policy must be one of {', '.join(PULL_POLICIES)}")
    if config.beam_runner != "direct":
        problems.append(
            f"--beam-runner {config.beam_runner}: Beam workers outside the task's pod cannot "
            "read the launcher's local copies of the artifacts; use direct"
        )
    if config.training_backend not in LOCAL_BACKENDS:
        problems.append(
            f"--training-backend {config.training_backend}: its machines cannot read the "
            f"launcher's local copies of the artifacts; use {' or '.join(LOCAL_BACKENDS)}"
        )
    for given, flag in (
        (config.warm_start, "--warm-start"),
        (config.drift_thresholds, "--drift-threshold"),
    ):
        if given:
            problems.append(
                f"{flag} needs the latest blessed model, which only a resolver task finds: "
                "Kubeflow Pipelines' backend does not run resolver tasks"
            )
    if problems:
        raise SetupError("compile for Kubeflow Pipelines", problems)
    return dataclasses.replace(config, serving_model_dir=serving_dir, **in_image)


def platform_spec(spec, cluster):
    """The Kubernetes platform spec of `spec`'s executors (kfp-kubernetes' format: the
    claim's name both as the deprecated constant and as a parameter, read by old and new
    backends alike)."""
    common = {}
    if cluster.image_pull_policy:
        common["imagePullPolicy"] = cluster.image_pull_policy
    if cluster.image_pull_secrets:
        common["imagePullSecret"] = [
            {"secretName": name, "secretNameParameter": {"runtimeValue": {"constant": name}}}
            for name in cluster.image_pull_secrets
        ]
    executors = {label: dict(common) for label in spec["deploymentSpec"]["executors"]}
    claim, mount = cluster.volume([])
    pusher = spec["components"][spec["root"]["dag"]["tasks"][PUSHER_TASK]["componentRef"]["name"]]
    executors[pusher["executorLabel"]]["pvcMount"] = [
        {
            "constant": claim,
            "pvcNameParameter": {"runtimeValue": {"constant": claim}},
            "mountPath": mount,
        }
    ]
    executors = {label: config for label, config in executors.items() if config}
    return {"platforms": {"kubernetes": {"deploymentSpec": {"executors": executors}}}}


def compile_pipeline(config, out_path, cluster):
    """Writes the pipeline YAML for a self-hosted Kubeflow Pipelines; returns (spec, platform
    spec), both dicts."""
    import yaml

    if not out_path.endswith((".yaml", ".yml")):
        raise SetupError(
            "compile for Kubeflow Pipelines",
            [f"--out {out_path}: the kfp client reads pipeline files named .yaml or .yml"],
        )
    job = compile_job(
        config,
        lambda c: kubeflow_config(c, cluster),
        resolver=False,
        command=list(EXECUTOR_COMMAND),
    )
    spec = job["pipelineSpec"]
    spec["defaultPipelineRoot"] = config.pipeline_root
    platform = platform_spec(spec, cluster)
    write_file(out_path, lambda f: yaml.safe_dump_all([spec, platform], f, sort_keys=True))
    return spec, platform


@dataclasses.dataclass(frozen=True)
class Host:
    """A Kubeflow Pipelines API and who is asking."""

    url: str
    # The profile namespace of a multi-user deployment (experiments and runs live there).
    namespace: str | None = None
    token: str | None = dataclasses.field(default=None, repr=False)

    def api(self, path):
        return f"{self.url}{API_PATH}{path}"


def _kfp_context_namespace():
    """The namespace kfp's own context file remembers (`~/.config/kfp/context.json`), if any."""
    from kfp import Client

    try:
        with open(Client._LOCAL_KFP_CONTEXT) as f:
            return json.load(f).get("namespace") or None
    except (OSError, ValueError):
        return None


def find_host(url=None, namespace=None, token=None):
    """The `Host` from the options, else the environment as the kfp client reads it: the URL
    from KF_PIPELINES_ENDPOINT; the token from KF_PIPELINES_TOKEN, else the service-account
    token a pod of the cluster has (KF_PIPELINES_SA_TOKEN_PATH); the namespace from kfp's
    context file."""
    from kfp import client

    url = (url or os.environ.get(HOST_ENV) or "").rstrip("/")
    if not url:
        raise SetupError("reach Kubeflow Pipelines", [NO_HOST])
    if not url.startswith(("http://", "https://")):
        url = f"https://{url}"
    token = token or os.environ.get(TOKEN_ENV)
    token_path = (
        os.environ.get(client.KF_PIPELINES_SA_TOKEN_ENV) or client.KF_PIPELINES_SA_TOKEN_PATH
    )
    if not token and os.path.isfile(token_path):
        with open(token_path) as f:
            token = f.read().strip() or None
    return Host(url, namespace or _kfp_context_namespace(), token)


@dataclasses.dataclass(frozen=True)
class Submission:
    """A run of a compiled file, or with `cron` a recurring run."""

    spec_path: str
    experiment: str | None = None  # None: the pipeline's name
    name: str | None = None  # None: the pipeline's name (a run), <name>-retrain (a schedule)
    pipeline_root: str | None = None  # None: the compiled one
    enable_caching: bool | None = None  # None: as compiled
    service_account: str | None = None  # Kubernetes service account of the run's pods
    cron: str | None = None
    max_concurrent_runs: int = 1


def kfp_cron(cron, problems):
    """`cron` as KFP's scheduler reads it: seconds first (robfig/cron v1), in UTC, so a
    standard five-field expression gets "0 " in front."""
    text = " ".join(cron.split())
    if text.startswith(("TZ=", "CRON_TZ=")):
        problems.append(
            f"--cron {cron!r}: Kubeflow Pipelines reads cron times in UTC and takes no time zone"
        )
    elif text.startswith("@") or len(text.split()) == 6:
        return text
    elif len(text.split()) == 5:
        return f"0 {text}"
    else:
        problems.append(
            f"--cron {cron!r}: five fields (minute hour day-of-month month day-of-week) or "
            "six (seconds first)"
        )
    return text


def load_package(path):
    """(PipelineSpec, PlatformSpec) of a compiled file, read as the kfp client reads it."""
    import yaml
    from google.protobuf import json_format
    from kfp.pipeline_spec import pipeline_spec_pb2

    with open(path) as f:
        documents = list(yaml.safe_load_all(f))
    platform = {}
    for document in documents[1:]:
        platform.update(document or {})
    return (
        json_format.ParseDict(documents[0] if documents else {}, pipeline_spec_pb2.PipelineSpec()),
        json_format.ParseDict(platform, pipeline_spec_pb2.PlatformSpec()),
    )


def _check_spec(path, problems):
    """(PipelineSpec, PlatformSpec) of `path`, or None with the problem added."""
    if not os.path.isfile(path):
        problems.append(
            f"--spec {path} is not a file (write it with "
            "`python -m pipeline compile --target kubeflow --out FILE.yaml`)"
        )
        return None
    if not path.endswith((".yaml", ".yml")):
        problems.append(
            f"--spec {path}: the kfp client reads .yaml or .yml pipeline files (compile with "
            "--target kubeflow --out FILE.yaml)"
        )
        return None
    try:
        spec, platform = load_package(path)
    except Exception as e:  # YAML or protobuf parse errors, each in its own class
        problems.append(f"--spec {path} is not a KFP pipeline spec: {e}")
        return None
    from google.protobuf import json_format

    executors = json_format.MessageToDict(spec.deployment_spec).get("executors", {})
    resolvers = sorted(label for label, executor in executors.items() if "resolver" in executor)
    if resolvers:
        problems.append(
            f"--spec {path} has resolver tasks ({', '.join(resolvers)}), which Kubeflow "
            "Pipelines does not run: compile it with --target kubeflow"
        )
    return spec, platform


def _spec_body(spec, platform, enable_caching):
    """The run's `pipeline_spec`, as the kfp client sends it."""
    from google.protobuf import json_format
    from kfp.pipeline_spec import pipeline_spec_pb2

    if enable_caching is not None:
        for task in spec.root.dag.tasks.values():
            task.caching_options.enable_cache = enable_caching
    body = json_format.MessageToDict(spec)
    if platform == pipeline_spec_pb2.PlatformSpec():
        return body
    return {"pipeline_spec": body, "platform_spec": json_format.MessageToDict(platform)}


def _names(spec, submission):
    """(experiment, display name) of the run or recurring run: the pipeline's name unless
    given, a schedule's with "-retrain"."""
    name = spec.pipeline_info.name
    default = name if submission.cron is None else f"{name}-retrain"
    return submission.experiment or name, submission.name or default


def _request(method, url, query=None, body=None, only_if=None):
    request = {"method": method, "url": url}
    for key, value in (("query", query), ("body", body), ("only_if", only_if)):
        if value is not None:
            request[key] = value
    return request


def plan(host, submission):
    """Every request `send` makes, in order, as dicts (method, url, query, body); with
    `only_if` on the one made only when the experiment is new.  The experiment's ID shows as
    `experiment_id_placeholder`.  SetupError for what is wrong before any request."""
    problems = []
    loaded = _check_spec(submission.spec_path, problems)
    cron = submission.cron and kfp_cron(submission.cron, problems)
    root = submission.pipeline_root
    if root is not None and not root.startswith(PIPELINE_ROOT_SCHEMES):
        problems.append(
            f"--pipeline-root {root} must be a {', '.join(PIPELINE_ROOT_SCHEMES)} folder"
        )
    if problems:
        raise SetupError("submit to Kubeflow Pipelines", problems)
    spec, platform = loaded
    experiment, display_name = _names(spec, submission)
    namespace = host.namespace or ""
    healthz = _request("GET", host.api("/healthz"))
    requests = [healthz]
    # kfp.Client asks on its own whether the host is multi-user unless it has a namespace
    # (its own context's, or one given other than its default "kubeflow").
    if not _kfp_context_namespace() and host.namespace in (None, "kubeflow"):
        requests.append(healthz)
    experiment_filter = {
        "predicates": [{"operation": _EQUALS, "key": "display_name", "stringValue": experiment}]
    }
    requests += [
        _request(
            "GET",
            host.api("/experiments"),
            query={"filter": json.dumps(experiment_filter), "namespace": namespace},
        ),
        _request(
            "POST",
            host.api("/experiments"),
            body={"display_name": experiment, "namespace": namespace},
            only_if=f"no experiment {experiment!r} in the namespace yet",
        ),
    ]
    runtime_config = {"parameters": {}}
    if root:
        runtime_config["pipeline_root"] = root
    body = {
        "experiment_id": experiment_id_placeholder(experiment),
        "display_name": display_name,
        "pipeline_spec": _spec_body(spec, platform, submission.enable_caching),
        "runtime_config": runtime_config,
    }
    if submission.service_account:
        body["service_account"] = submission.service_account
    if cron:
        body.update(
            mode="ENABLE",
            trigger={"cron_schedule": {"cron": cron}},
            max_concurrency=submission.max_concurrent_runs,
            # A retraining schedule has nothing to catch up on after a pause.
            no_catchup=True,
        )
        requests.append(_request("POST", host.api("/recurringruns"), body=body))
    else:
        requests.append(_request("POST", host.api("/runs"), body=body))
    return requests


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is answered as it is: a sign-in page wants a token


def check_host(host):
    """Asks the host's healthz (one request, HEALTHZ_TIMEOUT_S) whether it is a reachable
    Kubeflow Pipelines API that takes our token; its answer as a dict, else SetupError."""
    url = host.api("/healthz")
    request = urllib.request.Request(url)
    if host.token:
        request.add_header("Authorization", f"Bearer {host.token}")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=HEALTHZ_TIMEOUT_S) as response:
            text = response.read()
    except urllib.error.HTTPError as e:
        if e.code in (401, 403) or 300 <= e.code < 400:
            problem = (
                f"{host.url} refused the token (HTTP {e.code})"
                if host.token
                else f"{host.url} requires a token (HTTP {e.code}): pass --token or set "
                f"{TOKEN_ENV} to a bearer token its authentication accepts"
            )
        else:
            problem = (
                f"{host.url} answered HTTP {e.code} to {API_PATH}/healthz: not a Kubeflow "
                "Pipelines 2.x API address"
            )
        raise SetupError("reach Kubeflow Pipelines", [problem]) from None
    except OSError as e:  # refused, unknown name, timed out, TLS
        reason = getattr(e, "reason", e)
        raise SetupError(
            "reach Kubeflow Pipelines",
            [f"cannot reach {host.url} within {HEALTHZ_TIMEOUT_S} s: {reason}"],
        ) from None
    try:
        health = json.loads(text)
    except ValueError:
        health = None
    if not isinstance(health, dict):
        raise SetupError(
            "reach Kubeflow Pipelines",
            [f"{url} did not answer as the Kubeflow Pipelines API (a sign-in page?)"],
        )
    if health.get("multi_user") and not host.namespace:
        raise SetupError(
            "reach Kubeflow Pipelines",
            [f"{host.url} is a multi-user deployment: pass --namespace (your profile's namespace)"],
        )
    return health


def send(host, submission):
    """Makes the requests `plan` lists with the kfp client; returns the run's or recurring
    run's ID."""
    plan(host, submission)  # SetupError for the settings, before the host is asked
    check_host(host)
    import warnings

    import kfp
    import kfp_server_api

    experiment, display_name = _names(load_package(submission.spec_path)[0], submission)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "only works with KFP 2.0.0-beta.2+"
        client = kfp.Client(
            host=host.url, existing_token=host.token, namespace=host.namespace or "kubeflow"
        )
    common = {
        "pipeline_package_path": submission.spec_path,
        "pipeline_root": submission.pipeline_root,
        "enable_caching": submission.enable_caching,
        "service_account": submission.service_account,
    }
    # The client prints links to the UI; stdout is for the ID.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            experiment_id = client.create_experiment(
                name=experiment, namespace=host.namespace
            ).experiment_id
            if submission.cron is None:
                return client.run_pipeline(experiment_id, display_name, **common).run_id
            recurring = client.create_recurring_run(
                experiment_id,
                display_name,
                cron_expression=kfp_cron(submission.cron, []),
                max_concurrency=submission.max_concurrent_runs,
                no_catchup=True,
                **common,
            )
            return recurring.recurring_run_id
        except kfp_server_api.ApiException as e:
            raise SetupError(
                f"submit to Kubeflow Pipelines at {host.url}",
                [f"HTTP {e.status} {e.reason}: {(e.body or '').strip()}"],
            ) from None
