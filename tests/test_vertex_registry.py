"""The Vertex AI Model Registry destination and rollback, against a stand-in Vertex AI API.

google-cloud-aiplatform runs unchanged, pointed at tests/fake_vertex.py on 127.0.0.1 over
REST; every other connection fails the test. Each write the code describes (what the Pusher
logs, what `rollback --dry-run` prints) is checked against the request aiplatform sent, and the
requests against the REST reference's form.
"""

import base64
import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from components import model_registry
from components.model_registry import (
    DEFAULT_SERVING_CONTAINER,
    PIPELINE_JOB_NAME,
    SENDING,
    RegistryDestination,
    fingerprint_digest,
    label_value,
    resource_name,
    version_labels,
)
from pipeline.cli import main
from pipeline.config import REPO_ROOT
from pipeline.vertex import NO_CREDENTIALS
from tests.conftest import taxi_config
from tests.fake_vertex import TOKEN, FakeVertex

REGION = "europe-west4"
PARENT = f"projects/proj/locations/{REGION}"
MODEL = f"{PARENT}/models/taxi"
ENDPOINT = f"{PARENT}/endpoints/1234"
RUN_ID = "taxi-20261201031137"  # what Vertex puts for {{$.pipeline_job_name}}
MODEL_ARTIFACT = f"{PARENT}/metadataStores/default/artifacts/5150"
FINGERPRINT = "gs://bucket/data/taxi.csv 1048576 1796094770000000000"
SERVICE_ACCOUNT = "rollback@proj.iam.gserviceaccount.com"
DESTINATION = RegistryDestination(model=MODEL, pipeline_name="taxi", endpoint=ENDPOINT)


def _loopback_only(monkeypatch):
    """Connections to 127.0.0.1 only: the cloud is never contacted."""
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def checked_connect(sock, address):
        if isinstance(address, tuple) and address[0] != "127.0.0.1":
            raise AssertionError(f"network call to {address}")
        return connect(sock, address)

    def checked_getaddrinfo(host, *args, **kwargs):
        if host not in ("127.0.0.1", "localhost"):
            raise AssertionError(f"name lookup of {host}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", checked_connect)
    monkeypatch.setattr(socket, "getaddrinfo", checked_getaddrinfo)


@pytest.fixture
def vertex(monkeypatch):
    """The stand-in API, and aiplatform pointed at it (REST, anonymous credentials unless a
    call passes its own)."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud.aiplatform import initializer

    with FakeVertex() as fake:
        settings = initializer._Config()
        monkeypatch.setattr(initializer, "global_config", settings)
        settings.init(
            api_endpoint=fake.url, api_transport="rest", credentials=AnonymousCredentials()
        )
        _loopback_only(monkeypatch)
        yield fake


def _sent(description):
    """A REST description as the stand-in records the call: (method, path, body)."""
    url = description["url"]
    assert url.startswith(f"https://{REGION}-aiplatform.googleapis.com/v1/"), url
    return (
        description["method"],
        url.removeprefix(f"https://{REGION}-aiplatform.googleapis.com"),
        description["body"],
    )


# -- configuration ---------------------------------------------------------------------------


def test_a_registry_is_named_by_resource_name_or_id_in_the_project_and_region():
    assert resource_name("taxi", "models", "proj", REGION) == MODEL
    assert resource_name(MODEL, "models", None, None) == MODEL
    assert resource_name("1234", "endpoints", "proj", REGION) == ENDPOINT
    for value, kind, project, says in (
        ("taxi", "models", None, "name the project"),
        ("Taxi Model", "models", "proj", "give projects/PROJECT/locations/REGION/models/ID"),
        ("9taxi", "models", "proj", "an ID such as 'my_model'"),
        (ENDPOINT, "models", None, "not the resource name of one of Vertex AI's models"),
        ("serving", "endpoints", "proj", "an ID such as '1234567890'"),
    ):
        with pytest.raises(ValueError, match=says):
            resource_name(value, kind, project, REGION)

    config = taxi_config(
        model_registry="taxi", vertex_endpoint="1234", gcp_project="proj", gcp_region=REGION
    )
    assert config.registry_destination == RegistryDestination(
        model=MODEL,
        pipeline_name="taxi",
        serving_container_image=DEFAULT_SERVING_CONTAINER,
        endpoint=ENDPOINT,
    )
    assert taxi_config().registry_destination is None
    with pytest.raises(ValueError, match="vertex_endpoint: deploys a model_registry version"):
        taxi_config(vertex_endpoint=ENDPOINT)
    with pytest.raises(ValueError, match="not in us-central1, the model's region"):
        taxi_config(model_registry=MODEL.replace(REGION, "us-central1"), vertex_endpoint=ENDPOINT)
    with pytest.raises(ValueError, match="model_registry/vertex_endpoint: 'taxi' is an ID"):
        taxi_config(model_registry="taxi")


def test_definition_keys_reach_compile_and_rollback_but_not_a_local_run(tmp_path):
    from pipeline.definition import DefinitionError, build_config

    definition = tmp_path / "taxi.toml"
    definition.write_text(
        textwrap.dedent(
            f"""
            name = "taxi"
            [data]
            path = "taxi.csv"
            [label]
            column = "tips"
            [vertex]
            project = "proj"
            region = "{REGION}"
            model_registry = "taxi"
            serving_container_image = "europe-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest"
            endpoint = "1234"
            endpoint_machine_type = "n1-standard-4"
            """
        )
    )
    for command in ("compile", "rollback"):
        destination = build_config(str(definition), command).registry_destination
        assert destination == RegistryDestination(
            model=MODEL,
            pipeline_name="taxi",
            serving_container_image="europe-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest",
            endpoint=ENDPOINT,
            machine_type="n1-standard-4",
        )
    assert build_config(str(definition), "run").registry_destination is None
    definition.write_text(definition.read_text().replace('region = "europe-west4"\n', ""))
    with pytest.raises(DefinitionError, match=r"\[vertex\] endpoint = \"1234\".*us-central1"):
        build_config(str(definition), "compile", {"model_registry": MODEL})


def test_labels_link_the_version_to_its_run_within_vertex_label_rules():
    labels = version_labels("Taxi.Weekly", "2026-12-01T03:11:37.555085", 5150, FINGERPRINT)
    assert labels == {
        "pipeline": "taxi-weekly",
        "pipeline-run": "2026-12-01t03-11-37-555085",
        "model-artifact": "5150",
        "data-fingerprint": fingerprint_digest(FINGERPRINT),
        "blessed": "true",
    }
    assert len(labels["data-fingerprint"]) == 12
    assert version_labels("taxi", None, None, "") == {"pipeline": "taxi", "blessed": "true"}
    assert label_value("X" * 100) == "x" * 63
    assert label_value("über Daten/2026") == "-ber-daten-2026"


def test_compiled_pusher_gets_the_registry_the_run_id_placeholder_and_the_examples(tmp_path):
    from pipeline.vertex import compile_pipeline

    config = taxi_config(
        output_dir=str(tmp_path),
        data_path="gs://bucket/data/taxi.csv",
        pipeline_root="gs://bucket/root",
        serving_model_dir="/gcs/bucket/serving/taxi",
        image="europe-docker.pkg.dev/proj/kit/taxi:test",
        train_steps=300,
        model_registry=MODEL,
        vertex_endpoint=ENDPOINT,
    )
    job = compile_pipeline(config, str(tmp_path / "pipeline.json"))
    pusher = job["pipelineSpec"]["root"]["dag"]["tasks"]["Pusher"]["inputs"]
    parameters = {k: v["runtimeValue"]["constant"] for k, v in pusher["parameters"].items()}
    assert parameters == {
        "push_destination": "/gcs/bucket/serving/taxi",
        "model_registry": DESTINATION.to_json(),
        "run_id": PIPELINE_JOB_NAME,
    }
    assert pusher["artifacts"]["examples"]["taskOutputArtifact"]["producerTask"] == "ExampleGen"

    local = taxi_config(output_dir=str(tmp_path), model_registry=MODEL)
    from pipeline.pipeline import create_components

    with pytest.raises(ValueError, match="serving folder must be under /gcs/"):
        create_components(local)


# -- the Pusher ------------------------------------------------------------------------------


def _push(tmp_path, files, blessed=True, destination=DESTINATION):
    """Runs the Pusher executor as a Vertex task runs it: the serving folder under the /gcs/
    mount (here a folder in tmp_path), the run ID in its parameter."""
    from tfx.types import standard_artifacts

    from components.pusher.executor import Executor

    mount = tmp_path / "gcs"
    model = standard_artifacts.Model()
    model.uri = str(tmp_path / "model")
    serving = tmp_path / "model" / "Format-Serving"
    serving.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (serving / name).write_bytes(content)
    blessing = standard_artifacts.ModelBlessing()
    blessing.set_int_custom_property("blessed", int(blessed))
    blessing.set_string_custom_property("current_model_id", MODEL_ARTIFACT)
    examples = standard_artifacts.Examples()
    examples.set_string_custom_property("input_fingerprint", FINGERPRINT)
    pushed = standard_artifacts.PushedModel()
    Executor().Do(
        {"model": [model], "model_blessing": [blessing], "examples": [examples]},
        {"pushed_model": [pushed]},
        {
            "push_destination": f"{mount}/bucket/serving/taxi",
            "model_registry": destination.to_json(),
            "run_id": RUN_ID,
        },
    )
    return pushed


@pytest.fixture
def gcs_mount(tmp_path, monkeypatch):
    monkeypatch.setattr(model_registry, "GCS_MOUNT", f"{tmp_path / 'gcs'}/")


LABELS = {
    "pipeline": "taxi",
    "pipeline-run": RUN_ID,
    "model-artifact": "5150",
    "data-fingerprint": fingerprint_digest(FINGERPRINT),
    "blessed": "true",
}


def _upload_body(version_folder, first):
    return {
        **({"modelId": "taxi"} if first else {"parentModel": MODEL}),
        "model": {
            "displayName": "taxi",
            "containerSpec": {"imageUri": DEFAULT_SERVING_CONTAINER},
            "labels": LABELS,
            "artifactUri": f"gs://bucket/serving/taxi/{version_folder}",
            "versionAliases": ["default"],
        },
    }


def _deploy_body(version):
    return {
        "deployedModel": {
            "model": f"{MODEL}@{version}",
            "displayName": f"taxi-v{version}",
            "dedicatedResources": {
                "machineSpec": {"machineType": "n1-standard-2"},
                "minReplicaCount": 1,
                "maxReplicaCount": 1,
            },
        },
        "trafficSplit": {"0": 100},
    }


def _logged_calls(caplog):
    """The REST descriptions the Pusher logged before its calls, in order."""
    return [
        json.loads(record.getMessage().removeprefix(SENDING))
        for record in caplog.records
        if record.getMessage().startswith(SENDING)
    ]


def _pushed_as(vertex, caplog, tmp_path, content, version):
    """Pushes a model whose files hold `content`, checks that the registry got it as
    `version` (1: a new model) and deployed it, exactly as the Pusher logged before each
    call; returns the PushedModel."""
    vertex.requests.clear()
    caplog.clear()
    pushed = _push(tmp_path, {"saved_model.pb": content, "fingerprint.pb": content})
    folder = pushed.get_string_custom_property("pushed_version")
    expected = [
        ("POST", f"/v1/{PARENT}/models:upload", _upload_body(folder, first=version == 1)),
        ("POST", f"/v1/{ENDPOINT}:deployModel", _deploy_body(version)),
    ]
    assert vertex.api_calls("POST") == expected
    assert [_sent(call) for call in _logged_calls(caplog)] == expected
    assert pushed.get_string_custom_property("registry_model") == f"{MODEL}@{version}"
    assert pushed.get_string_custom_property("registry_version") == str(version)
    assert pushed.get_string_custom_property("endpoint") == ENDPOINT
    assert (tmp_path / "gcs" / "bucket" / "serving" / "taxi" / folder / "saved_model.pb").exists()
    return pushed


def test_blessed_pushes_become_default_versions_deployed_with_all_traffic(
    vertex, gcs_mount, tmp_path, caplog
):
    caplog.set_level("INFO", logger=model_registry.__name__)
    vertex.add_endpoint(ENDPOINT)
    _pushed_as(vertex, caplog, tmp_path, b"one", 1)
    _pushed_as(vertex, caplog, tmp_path, b"two", 2)
    versions = vertex.models[MODEL]
    assert [(v["versionId"], v["versionAliases"]) for v in versions] == [
        ("1", []),
        ("2", ["default"]),
    ]
    endpoint = vertex.endpoints[ENDPOINT]
    assert endpoint["trafficSplit"] == {"1001": 100}
    assert endpoint["deployedModels"][1]["modelVersionId"] == "2"

    # The same model again: the serving folder has it, so has the registry; nothing sent.
    vertex.requests.clear()
    again = _push(tmp_path, {"saved_model.pb": b"two", "fingerprint.pb": b"two"})
    assert again.get_string_custom_property("registry_version") == "2"
    assert vertex.api_calls("POST") == []


def test_an_unblessed_model_reaches_neither_the_folder_nor_the_registry(
    vertex, gcs_mount, tmp_path
):
    vertex.add_endpoint(ENDPOINT)
    pushed = _push(tmp_path, {"saved_model.pb": b"bad"}, blessed=False)
    assert pushed.get_int_custom_property("pushed") == 0
    assert vertex.requests == []
    assert not (tmp_path / "gcs").exists()


def test_a_serving_folder_off_cloud_storage_is_refused_before_any_copy(vertex, tmp_path):
    with pytest.raises(ValueError, match="is not on Cloud Storage"):
        _push(tmp_path, {"saved_model.pb": b"one"})
    assert not (tmp_path / "gcs").exists()
    assert vertex.requests == []


# -- rollback --------------------------------------------------------------------------------


def _version(number, default=False, blessed=True):
    return {
        "name": MODEL,
        "versionId": str(number),
        "versionAliases": ["default"] if default else [],
        "displayName": "taxi",
        "artifactUri": f"gs://bucket/serving/taxi/179609477{number}",
        "labels": {**LABELS, **({} if blessed else {"blessed": "no"})},
        "supportedDeploymentResourcesTypes": ["DEDICATED_RESOURCES"],
    }


@pytest.fixture
def registry_with_three_versions(vertex, tmp_path, monkeypatch):
    """Versions 1 and 2 pushed (2 the default, deployed with all traffic), 3 put there by
    other means; a credentials file whose token comes from the stand-in."""
    vertex.models[MODEL] = [_version(1), _version(2, default=True), _version(3, blessed=False)]
    vertex.add_endpoint(ENDPOINT)
    vertex.endpoints[ENDPOINT]["deployedModels"] = [
        {"id": "77", "model": MODEL, "modelVersionId": "2", "displayName": "taxi-v2"}
    ]
    vertex.endpoints[ENDPOINT]["trafficSplit"] = {"77": 100}
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", _service_account_key(tmp_path, vertex))
    return vertex


def _service_account_key(folder, vertex):
    """A service-account key file (a fresh RSA key) whose tokens come from the stand-in."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    path = folder / "key.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "proj",
                "private_key_id": "1",
                "private_key": pem,
                "client_email": SERVICE_ACCOUNT,
                "client_id": "1",
                "token_uri": f"{vertex.url}/token",
            }
        )
    )
    return str(path)


def _bearer_of(vertex):
    """Who signed the calls to the API: the token the stand-in issued, or the issuer of a
    self-signed JWT (the client libraries sign their own for a service account)."""
    signers = set()
    for _, path, _, auth in vertex.requests:
        if path.startswith("/v1/"):
            token = (auth or "").removeprefix("Bearer ")
            if token.count(".") == 2:
                payload = token.split(".")[1]
                token = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
                token = token["iss"]
            signers.add(token)
    return signers


def _rollback(tmp_path, *args):
    return main(
        [
            "rollback",
            "--model-registry",
            MODEL,
            "--vertex-endpoint",
            ENDPOINT,
            "--output-dir",
            str(tmp_path),
            *args,
        ]
    )


def test_rollback_moves_the_default_alias_and_traffic_exactly_as_the_dry_run_prints(
    registry_with_three_versions, tmp_path, capsys
):
    vertex = registry_with_three_versions
    assert _rollback(tmp_path, "--to", "1", "--dry-run") == 0
    said, _, printed = capsys.readouterr().out.partition("\n")
    assert said == (
        f"Would make version 1 the default version of {MODEL} (instead of version 2) and "
        f"deploy version 1 of {MODEL} to {ENDPOINT} with all of its traffic. Dry run: nothing "
        "changed. The calls it would make:"
    )
    calls = json.loads(printed)
    assert [_sent(call) for call in calls] == [
        ("POST", f"/v1/{MODEL}@1:mergeVersionAliases", {"versionAliases": ["default"]}),
        ("POST", f"/v1/{ENDPOINT}:deployModel", _deploy_body(1)),
    ]
    assert vertex.api_calls("POST") == []  # a dry run only reads
    assert _bearer_of(vertex) <= {TOKEN, SERVICE_ACCOUNT} and _bearer_of(vertex)

    vertex.requests.clear()
    assert _rollback(tmp_path, "--to", "1") == 0
    assert capsys.readouterr().out == (
        f"Version 1 of {MODEL} is served now: the default version (instead of version 2), "
        f"deployed to {ENDPOINT} with all of its traffic.\n"
    )
    assert vertex.api_calls("POST") == [_sent(call) for call in calls]
    assert [v["versionAliases"] for v in vertex.models[MODEL]] == [["default"], [], []]
    deployed = vertex.endpoints[ENDPOINT]
    assert deployed["trafficSplit"] == {"1001": 100}
    assert deployed["deployedModels"][-1]["modelVersionId"] == "1"

    vertex.requests.clear()
    assert _rollback(tmp_path, "--to", "1") == 0
    assert capsys.readouterr().out == (
        f"Version 1 is already served: {MODEL}@1 is the default version, with all of "
        f"{ENDPOINT}'s traffic. Nothing to do.\n"
    )
    assert vertex.api_calls("POST") == []


def test_rollback_refuses_a_version_never_blessed_or_absent_and_a_reason(
    registry_with_three_versions, tmp_path, capsys
):
    vertex = registry_with_three_versions
    assert _rollback(tmp_path, "--to", "3") == 2
    assert "version 3 was never blessed: it has no blessed=true label" in capsys.readouterr().err
    assert _rollback(tmp_path, "--to", "3", "--force", "--dry-run") == 0
    assert "(forced: never blessed)" in capsys.readouterr().out
    assert _rollback(tmp_path, "--to", "9") == 2
    assert f"version 9 is not a version of {MODEL}" in capsys.readouterr().err
    assert _rollback(tmp_path, "--to", "1", "--reason", "worse on live traffic") == 2
    assert "--reason is recorded in the local ML Metadata store" in capsys.readouterr().err
    assert vertex.api_calls("POST") == []


def test_rollback_without_credentials_is_refused_before_any_call(
    vertex, tmp_path, monkeypatch, capsys
):
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    assert _rollback(tmp_path, "--to", "1", "--dry-run") == 2
    assert NO_CREDENTIALS in capsys.readouterr().err
    assert vertex.requests == []


def test_registry_rollback_imports_no_tensorflow(registry_with_three_versions, tmp_path):
    vertex = registry_with_three_versions
    code = textwrap.dedent(
        f"""
        import sys
        from google.cloud.aiplatform import initializer
        from pipeline.cli import main
        initializer.global_config.init(api_endpoint={vertex.url!r}, api_transport="rest")
        rc = main(sys.argv[1:])
        print(rc, "tensorflow" in sys.modules)
        """
    )
    command = ["rollback", "--model-registry", MODEL, "--to", "1", "--dry-run"]
    result = subprocess.run(
        [sys.executable, "-c", code, *command, "--output-dir", str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ},
        timeout=120,
    )
    assert result.stdout.strip().splitlines()[-1] == "0 False", result.stderr
    assert vertex.api_calls("POST") == []
