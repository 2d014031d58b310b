"""Open-source Kubeflow Pipelines: the compiled YAML, and submit/schedule against a real HTTP
server on 127.0.0.1 that answers as the KFP v2beta1 REST API, through the real kfp client."""

import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from kubeflow import kfp_executor
from pipeline import kubeflow_pipelines
from pipeline.cli import main
from pipeline.config import REPO_ROOT
from pipeline.kubeflow_pipelines import (
    EXECUTOR_COMMAND,
    NO_HOST,
    Cluster,
    platform_spec,
)
from tests.conftest import small_pipeline_config

IMAGE = "registry.example.com/ml/taxi:v1"
ROOT = "minio://mlpipeline/v2/artifacts/taxi"
CLUSTER = Cluster("IfNotPresent", ("regcred",), "models:/serving")
TOKEN = "t0ken"
CRON = "0 3 * * 1"
# Argo's rule for DAG task and template names, which KFP's backend takes from the spec as they are.
ARGO_NAME = r"[a-zA-Z0-9][-a-zA-Z0-9]*"


class FakeKfp:
    """A Kubeflow Pipelines API server on 127.0.0.1: records every request and answers the
    v2beta1 calls submit and schedule make as the real one does."""

    def __init__(self, token=None, multi_user=False, sign_in_redirect=False):
        self.token, self.multi_user, self.sign_in_redirect = token, multi_user, sign_in_redirect
        self.requests, self.experiments = [], []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.handle(self, "GET")

            def do_POST(self):
                server.handle(self, "POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    def handle(self, handler, method):
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = json.loads(handler.rfile.read(length)) if length else None
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.requests.append(
            {
                "method": method,
                "url": self.url + parts.path,
                "query": query,
                "body": body,
                "authorization": handler.headers.get("Authorization"),
            }
        )
        if self.token and handler.headers.get("Authorization") != f"Bearer {self.token}":
            if self.sign_in_redirect:
                handler.send_response(302)
                handler.send_header("Location", "/dex/auth")
                handler.send_header("Content-Length", "0")
                handler.end_headers()
                return
            return self.answer(handler, 401, {"error": "Unauthorized"})
        path = parts.path.removeprefix("/apis/v2beta1")
        if (method, path) == ("GET", "/healthz"):
            return self.answer(handler, 200, {"multi_user": self.multi_user, "tag_name": "2.5.0"})
        if (method, path) == ("GET", "/experiments"):
            name = json.loads(query["filter"])["predicates"][0]["stringValue"]
            found = [e for e in self.experiments if e["display_name"] == name]
            return self.answer(handler, 200, {"experiments": found} if found else {})
        if (method, path) == ("POST", "/experiments"):
            created = {**body, "experiment_id": f"exp-{len(self.experiments) + 1}"}
            self.experiments.append(created)
            return self.answer(handler, 200, created)
        if (method, path) == ("POST", "/runs"):
            return self.answer(handler, 200, {**body, "run_id": "run-1", "state": "PENDING"})
        if (method, path) == ("POST", "/recurringruns"):
            return self.answer(handler, 200, {**body, "recurring_run_id": "rr-1"})
        self.answer(handler, 404, {"error": f"no {method} {path}"})

    @staticmethod
    def answer(handler, status, payload):
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def kfp_env(monkeypatch, tmp_path):
    """No host, token or kfp context from this machine: kfp.Client's context file is one that
    does not exist, and the in-cluster token file too."""
    import kfp

    for name in ("KF_PIPELINES_ENDPOINT", "KF_PIPELINES_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KF_PIPELINES_SA_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(kfp.Client, "_LOCAL_KFP_CONTEXT", str(tmp_path / "kfp" / "context.json"))
    return tmp_path


@pytest.fixture
def fake_kfp():
    servers = []

    def start(**kwargs):
        servers.append(FakeKfp(**kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def tiny_spec():
    """A one-task pipeline spec shaped as `compile --target kubeflow` writes it."""
    return {
        "pipelineInfo": {"name": "taxi"},
        "schemaVersion": "2.1.0",
        "sdkVersion": "tfx-1.21.0",
        "defaultPipelineRoot": ROOT,
        "components": {"Pusher": {"executorLabel": "Pusher_executor"}},
        "deploymentSpec": {
            "executors": {
                "Pusher_executor": {
                    "container": {
                        "image": IMAGE,
                        "command": list(EXECUTOR_COMMAND),
                        "args": [
                            "--executor_class_path",
                            "components.pusher.executor.Executor",
                            "--json_serialized_invocation_args",
                            "{{$}}",
                        ],
                    }
                }
            }
        },
        "root": {
            "dag": {
                "tasks": {
                    "Pusher": {
                        "cachingOptions": {"enableCache": True},
                        "componentRef": {"name": "Pusher"},
                        "taskInfo": {"name": "Pusher"},
                    }
                }
            }
        },
    }


@pytest.fixture
def tiny_yaml(tmp_path):
    spec = tiny_spec()
    path = tmp_path / "taxi.yaml"
    path.write_text(yaml.safe_dump_all([spec, platform_spec(spec, CLUSTER)], sort_keys=True))
    return str(path)


def kfp_loaded_body(path, enable_caching=None):
    """The run's pipeline_spec as kfp's own loader makes it from `path`."""
    from kfp.client.client import _extract_pipeline_yaml, _override_caching_options

    document = _extract_pipeline_yaml(path)
    if enable_caching is not None:
        _override_caching_options(document.pipeline_spec, enable_caching)
    return document.to_dict()


def run_cli(argv, capsys):
    """(exit status, stdout, stderr) of `python -m pipeline ARGV`, in this process."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def dry_run(argv, capsys):
    code, out, err = run_cli([*argv, "--dry-run"], capsys)
    assert code == 0, err
    return json.loads(out)


def as_sent(planned, experiment_id, experiment_is_new):
    """The planned requests as the server sees them, the experiment's ID filled in."""
    sent = []
    for request in planned:
        if "only_if" in request and not experiment_is_new:
            continue
        request = {k: v for k, v in request.items() if k != "only_if"}
        body = request.get("body")
        if body and body.get("experiment_id", "").startswith("<id of experiment"):
            request["body"] = {**body, "experiment_id": experiment_id}
        sent.append({"query": {}, "body": None, **request})
    return sent


def received(server):
    return [{k: v for k, v in r.items() if k != "authorization"} for r in server.requests]


def test_dry_runs_print_every_request_and_contact_nothing(kfp_env, tiny_yaml, no_network, capsys):
    host = "http://kfp.example.com:8080"
    common = ["--target", "kubeflow", "--spec", tiny_yaml, "--host", host]
    healthz = {"method": "GET", "url": f"{host}/apis/v2beta1/healthz"}
    lookup = {
        "method": "GET",
        "url": f"{host}/apis/v2beta1/experiments",
        "query": {
            "filter": json.dumps(
                {"predicates": [{"operation": 1, "key": "display_name", "stringValue": "taxi"}]}
            ),
            "namespace": "",
        },
    }
    create = {
        "method": "POST",
        "url": f"{host}/apis/v2beta1/experiments",
        "body": {"display_name": "taxi", "namespace": ""},
        "only_if": "no experiment 'taxi' in the namespace yet",
    }
    run_body = {
        "experiment_id": "<id of experiment 'taxi'>",
        "display_name": "taxi",
        "pipeline_spec": kfp_loaded_body(tiny_yaml),
        "runtime_config": {"parameters": {}},
    }
    # Without a namespace, kfp.Client asks healthz itself whether the host is multi-user.
    assert dry_run(["submit", *common], capsys) == [
        healthz,
        healthz,
        lookup,
        create,
        {"method": "POST", "url": f"{host}/apis/v2beta1/runs", "body": run_body},
    ]
    assert run_body["pipeline_spec"]["platform_spec"]["platforms"]["kubernetes"]

    requests = dry_run(
        [
            "schedule",
            *common,
            "--cron",
            CRON,
            "--namespace",
            "team-a",
            "--experiment",
            "retraining",
            "--service-account",
            "pipeline-runner",
            "--pipeline-root",
            "s3://bucket/root",
            "--no-cache",
        ],
        capsys,
    )
    assert [r["method"] for r in requests] == ["GET", "GET", "POST", "POST"]
    assert requests[1]["query"]["namespace"] == "team-a"
    assert requests[2]["body"] == {"display_name": "retraining", "namespace": "team-a"}
    assert requests[3] == {
        "method": "POST",
        "url": f"{host}/apis/v2beta1/recurringruns",
        "body": {
            "experiment_id": "<id of experiment 'retraining'>",
            "display_name": "taxi-retrain",
            "pipeline_spec": kfp_loaded_body(tiny_yaml, enable_caching=False),
            "runtime_config": {"parameters": {}, "pipeline_root": "s3://bucket/root"},
            "service_account": "pipeline-runner",
            "mode": "ENABLE",
            # KFP's scheduler reads seconds first: the standard expression gets "0 " in front.
            "trigger": {"cron_schedule": {"cron": "0 0 3 * * 1"}},
            "max_concurrency": 1,
            "no_catchup": True,
        },
    }
    tasks = requests[3]["body"]["pipeline_spec"]["pipeline_spec"]["root"]["dag"]["tasks"]
    assert tasks["Pusher"]["cachingOptions"] == {}  # enableCache false, as protobuf prints it


def test_submit_and_schedule_send_exactly_what_the_dry_runs_print(
    kfp_env, tiny_yaml, fake_kfp, monkeypatch, capsys
):
    server = fake_kfp(token=TOKEN)
    common = ["--target", "kubeflow", "--spec", tiny_yaml, "--host", server.url]
    monkeypatch.setenv("KF_PIPELINES_TOKEN", TOKEN)
    planned = dry_run(["submit", *common, "--display-name", "first"], capsys)
    assert server.requests == []
    code, out, err = run_cli(["submit", *common, "--display-name", "first"], capsys)
    assert (code, out.strip()) == (0, "run-1"), err
    assert received(server) == as_sent(planned, "exp-1", experiment_is_new=True)
    assert {r["authorization"] for r in server.requests} == {f"Bearer {TOKEN}"}
    assert "/#/runs/details/run-1" in err  # the client's link, kept off stdout

    # The experiment is there now: looked up, not created again.
    server.requests.clear()
    planned = dry_run(["schedule", *common, "--cron", CRON], capsys)
    code, out, _ = run_cli(["schedule", *common, "--cron", CRON], capsys)
    assert (code, out.strip()) == (0, "rr-1")
    assert received(server) == as_sent(planned, "exp-1", experiment_is_new=False)
    assert len(server.experiments) == 1


def test_multi_user_host_needs_a_namespace_and_gets_it(kfp_env, tiny_yaml, fake_kfp, capsys):
    server = fake_kfp(multi_user=True)
    common = ["--target", "kubeflow", "--spec", tiny_yaml, "--host", server.url]
    code, _, err = run_cli(["submit", *common], capsys)
    assert code == 2
    assert f"{server.url} is a multi-user deployment: pass --namespace" in err
    assert [r["url"] for r in server.requests] == [f"{server.url}/apis/v2beta1/healthz"]

    server.requests.clear()
    planned = dry_run(["submit", *common, "--namespace", "team-a"], capsys)
    assert run_cli(["submit", *common, "--namespace", "team-a"], capsys)[0] == 0
    assert received(server) == as_sent(planned, "exp-1", experiment_is_new=True)
    assert server.experiments[0]["namespace"] == "team-a"


def test_unreachable_host_fails_at_once_naming_it(kfp_env, tiny_yaml, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    host = f"http://127.0.0.1:{port}"
    for command in (["submit"], ["schedule", "--cron", CRON]):
        began = time.monotonic()
        code, out, err = run_cli(
            [*command, "--target", "kubeflow", "--spec", tiny_yaml, "--host", host], capsys
        )
        assert time.monotonic() - began < kubeflow_pipelines.HEALTHZ_TIMEOUT_S
        assert (code, out) == (2, "")
        assert f"cannot reach {host} within" in err and "refused" in err


def test_a_host_that_wants_a_token_says_so(kfp_env, tiny_yaml, fake_kfp, capsys):
    for server in (fake_kfp(token=TOKEN), fake_kfp(token=TOKEN, sign_in_redirect=True)):
        common = ["--target", "kubeflow", "--spec", tiny_yaml, "--host", server.url]
        code, _, err = run_cli(["submit", *common], capsys)
        assert code == 2
        assert f"{server.url} requires a token" in err and "KF_PIPELINES_TOKEN" in err
        code, _, err = run_cli(["submit", *common, "--token", "wrong"], capsys)
        assert code == 2 and f"{server.url} refused the token" in err
        assert len(server.requests) == 2, "nothing but the healthz checks"

    # A pod of the cluster: kfp's service-account token file.
    (kfp_env / "no-token").write_text(TOKEN)
    assert run_cli(["submit", *common], capsys)[0] == 0


def test_settings_are_checked_before_the_host(kfp_env, tiny_yaml, tmp_path, no_network, capsys):
    code, _, err = run_cli(["submit", "--target", "kubeflow", "--spec", tiny_yaml], capsys)
    assert code == 2 and NO_HOST in err

    vertex_json = tmp_path / "taxi.json"
    vertex_json.write_text("{}")
    code, _, err = run_cli(
        [
            "schedule",
            "--target",
            "kubeflow",
            "--host",
            "http://kfp:8080",
            "--spec",
            str(vertex_json),
            "--cron",
            "TZ=Europe/Berlin 0 3 * * 1",
            "--pipeline-root",
            "/local/root",
        ],
        capsys,
    )
    assert code == 2
    assert "reads .yaml or .yml pipeline files" in err
    assert "takes no time zone" in err
    assert "--pipeline-root /local/root must be a minio://" in err

    spec = tiny_spec()
    spec["deploymentSpec"]["executors"]["Pusher_executor"] = {
        "resolver": {"outputArtifactQueries": {}}
    }
    with_resolver = tmp_path / "vertex.yaml"
    with_resolver.write_text(yaml.safe_dump(spec))
    code, _, err = run_cli(
        [
            "submit",
            "--target",
            "kubeflow",
            "--host",
            "http://kfp:8080",
            "--spec",
            str(with_resolver),
        ],
        capsys,
    )
    assert code == 2 and "has resolver tasks (Pusher_executor)" in err


def test_options_of_the_other_target_are_refused(kfp_env, tiny_yaml, capsys):
    for argv in (
        ["submit", "--spec", tiny_yaml, "--host", "http://kfp:8080"],
        ["submit", "--target", "kubeflow", "--spec", tiny_yaml, "--project", "p"],
        ["compile", "--out", "p.json", "--serving-volume", "models:/serving"],
    ):
        with pytest.raises(SystemExit) as exit:
            main(argv)
        assert exit.value.code == 2
        assert "only with --target" in capsys.readouterr().err


def test_submit_and_schedule_import_no_tensorflow(kfp_env, tiny_yaml):
    code = (
        "import sys; from pipeline.cli import main; rc = main(sys.argv[1:]); "
        "print(rc, [m for m in ('tensorflow', 'tfx', 'google.cloud.aiplatform') "
        "if m in sys.modules], file=sys.stderr)"
    )
    options = ["--target", "kubeflow", "--spec", tiny_yaml, "--host", "http://kfp:8080"]
    for command in (["submit"], ["schedule", "--cron", CRON]):
        result = subprocess.run(
            [sys.executable, "-c", code, *command, *options, "--dry-run"],
            check=False,
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
        )
        assert result.stderr.strip().endswith("0 []"), result.stderr


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(path, spec, platform spec) of the small pipeline compiled for Kubeflow Pipelines."""
    folder = tmp_path_factory.mktemp("kfp")
    config = small_pipeline_config(
        folder, "gs://bucket/data/taxi.csv", pipeline_root=ROOT, image=IMAGE
    )
    path = str(folder / "taxi.yaml")
    spec, platform = kubeflow_pipelines.compile_pipeline(config, path, CLUSTER)
    return path, spec, platform


@pytest.mark.slow  # compiles with TFX
def test_compiled_yaml_is_a_kfp_pipeline_kfp_loads(compiled, tmp_path):
    import kfp.compiler
    from google.protobuf import json_format
    from kfp import components
    from kfp.client.client import _extract_pipeline_yaml
    from kfp.pipeline_spec import pipeline_spec_pb2

    path, spec, platform = compiled
    with open(path) as f:
        assert list(yaml.safe_load_all(f)) == [spec, platform]
    document = _extract_pipeline_yaml(path)  # what create_run_from_pipeline_package reads
    assert document.pipeline_spec == json_format.ParseDict(spec, pipeline_spec_pb2.PipelineSpec())
    assert json_format.MessageToDict(document.platform_spec) == platform
    component = components.load_component_from_file(path)
    assert component.name == "taxi"
    again = str(tmp_path / "again.yaml")
    kfp.compiler.Compiler().compile(component, again)  # and back, through kfp's compiler
    assert _extract_pipeline_yaml(again).pipeline_spec.root == document.pipeline_spec.root


@pytest.mark.slow  # compiles with TFX
def test_compiled_spec_has_what_a_self_hosted_cluster_needs(compiled):
    import re

    _, spec, platform = compiled
    tasks = spec["root"]["dag"]["tasks"]
    executors = spec["deploymentSpec"]["executors"]
    assert spec["defaultPipelineRoot"] == ROOT
    assert "latest_blessed_model_resolver" not in str(tasks)
    assert all("container" in e for e in executors.values()), "KFP runs no resolver tasks"
    for executor in executors.values():
        assert executor["container"]["image"] == IMAGE
        assert executor["container"]["command"] == EXECUTOR_COMMAND
        assert "{{$}}" in executor["container"]["args"]
    for name in [*tasks, *spec["components"]]:
        assert re.fullmatch(ARGO_NAME, name), name
    assert "baseline_model" not in tasks["Evaluator"]["inputs"]["artifacts"]
    assert {name: task["cachingOptions"]["enableCache"] for name, task in tasks.items()} == {
        name: name not in ("SchemaImporter", "ExampleGen") for name in tasks
    }

    pusher = spec["components"][tasks["Pusher"]["componentRef"]["name"]]["executorLabel"]
    assert tasks["Pusher"]["inputs"]["parameters"]["push_destination"] == {
        "runtimeValue": {"constant": "/serving/taxi"}
    }
    by_executor = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    assert set(by_executor) == set(executors)
    pull = {
        "imagePullPolicy": "IfNotPresent",
        "imagePullSecret": [
            {
                "secretName": "regcred",
                "secretNameParameter": {"runtimeValue": {"constant": "regcred"}},
            }
        ],
    }
    for label, config in by_executor.items():
        expected = dict(pull)
        if label == pusher:
            expected["pvcMount"] = [
                {
                    "constant": "models",
                    "pvcNameParameter": {"runtimeValue": {"constant": "models"}},
                    "mountPath": "/serving",
                }
            ]
        assert config == expected, label


@pytest.mark.slow  # compiles with TFX
def test_compiled_file_is_submitted_as_the_dry_run_says(compiled, kfp_env, fake_kfp, capsys):
    path, _, _ = compiled
    server = fake_kfp()
    common = ["--target", "kubeflow", "--spec", path, "--host", server.url]
    planned = dry_run(["submit", *common, "--no-cache"], capsys)
    assert planned[-1]["body"]["pipeline_spec"] == kfp_loaded_body(path, enable_caching=False)
    assert run_cli(["submit", *common, "--no-cache"], capsys)[0] == 0
    assert received(server) == as_sent(planned, "exp-1", experiment_is_new=True)


@pytest.mark.slow  # the task process imports TFX and TensorFlow
def test_a_compiled_task_writes_through_the_launchers_local_copy(compiled, tmp_path, monkeypatch):
    """The SchemaImporter task's own command and arguments, with the executor input KFP's
    launcher gives it; a folder here stands in for the launcher's /minio."""
    _, spec, _ = compiled
    container = spec["deploymentSpec"]["executors"]["SchemaImporter_executor"]["container"]
    parameters = spec["root"]["dag"]["tasks"]["SchemaImporter"]["inputs"]["parameters"]
    monkeypatch.setitem(kfp_executor.LOCAL_PREFIXES, "minio://", f"{tmp_path}/minio/")
    uri = f"{ROOT}/run-1/SchemaImporter/schema"
    output_file = str(tmp_path / "kfp_outputs" / "output_metadata.json")
    schema_type = spec["components"]["SchemaImporter"]["outputDefinitions"]["artifacts"]["schema"]
    executor_input = {
        "inputs": {
            "parameterValues": {k: v["runtimeValue"]["constant"] for k, v in parameters.items()}
        },
        "outputs": {
            "artifacts": {
                "schema": {
                    "artifacts": [{"name": "7", "type": schema_type["artifactType"], "uri": uri}]
                }
            },
            "outputFile": output_file,
        },
    }
    args = [json.dumps(executor_input) if a == "{{$}}" else a for a in container["args"]]
    assert container["command"][:3] == ["python", "-m", "kubeflow.kfp_executor"]
    monkeypatch.chdir(REPO_ROOT)  # the image's WORKDIR holds the same tree
    assert kfp_executor.main(args) == 0
    local = tmp_path / "minio" / "mlpipeline" / "v2" / "artifacts" / "taxi" / "run-1"
    assert (local / "SchemaImporter" / "schema" / "schema.pbtxt").is_file()
    with open(output_file) as f:
        written = json.load(f)["artifacts"]["schema"]["artifacts"][0]
    assert written["uri"] == uri
