"""A stand-in for the Vertex AI REST API on 127.0.0.1: the Model Registry and endpoints.

Enough of the API for components/model_registry.py to run unchanged against it through
google-cloud-aiplatform (`api_endpoint` pointed here, `api_transport="rest"`): models with
versions and aliases, `models:upload` and `:deployModel` as finished long-running operations,
`:mergeVersionAliases`, and an OAuth token endpoint for service-account keys whose
`token_uri` points here. It records every request, so a test compares what was sent with what the code
says it sends; it answers any other call with 404.
"""

import http.server
import json
import re
import threading
import urllib.parse

TOKEN = "fake-access-token"
_API = "type.googleapis.com/google.cloud.aiplatform.v1."
_MODEL = re.compile(r"(projects/[^/]+/locations/[^/]+/models/[^/@:]+)(?:@([^/:]+))?(?::(\w+))?")
_ENDPOINT = re.compile(r"(projects/[^/]+/locations/[^/]+/endpoints/[^/:]+)(?::(\w+))?")
_UPLOAD = re.compile(r"(projects/[^/]+/locations/[^/]+)/models:upload")


class FakeVertex:
    """`requests`: (method, path, body (JSON decoded), Authorization header) of every call."""

    def __init__(self):
        self.requests = []
        self.models = {}  # model name -> its versions (dicts as the API gives them), oldest first
        self.endpoints = {}  # endpoint name -> the endpoint as the API gives it
        self._lock = threading.Lock()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size).decode() if size else ""
                json_body = "json" in (self.headers.get("Content-Type") or "")
                body = json.loads(raw) if raw and json_body else raw or None
                path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                with fake._lock:
                    fake.requests.append(
                        (self.command, path, body, self.headers.get("Authorization"))
                    )
                    status, answer = fake._route(self.command, path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _answer

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def api_calls(self, method=None):
        """The Vertex AI calls recorded, as (method, path, body); only `method`'s if given."""
        return [
            (m, path, body)
            for m, path, body, _ in self.requests
            if path.startswith("/v1/") and method in (None, m)
        ]

    def add_endpoint(self, name):
        self.endpoints[name] = {"name": name, "displayName": "serving", "deployedModels": []}

    def _route(self, method, path, body):
        if path == "/token" and method == "POST":
            return 200, {"access_token": TOKEN, "expires_in": 3600, "token_type": "Bearer"}
        resource = path.removeprefix("/v1/")
        upload = _UPLOAD.fullmatch(resource)
        if upload and method == "POST":
            return self._upload(upload[1], body)
        model = _MODEL.fullmatch(resource)
        if model:
            version = self._version(model[1], model[2])
            if version is None:
                return _not_found(resource)
            if method == "GET" and not model[3]:
                return 200, version
            if method == "POST" and model[3] == "mergeVersionAliases":
                self._alias(model[1], version, body["versionAliases"])
                return 200, version
        endpoint = _ENDPOINT.fullmatch(resource)
        if endpoint and endpoint[1] in self.endpoints:
            if method == "GET" and not endpoint[2]:
                return 200, self.endpoints[endpoint[1]]
            if method == "POST" and endpoint[2] == "deployModel":
                return self._deploy(self.endpoints[endpoint[1]], body)
        return _not_found(resource)

    def _version(self, model, version):
        """A version by ID or alias (none: the default one), or None."""
        for candidate in self.models.get(model, []):
            if version in (candidate["versionId"], *candidate["versionAliases"]) or (
                version is None and "default" in candidate["versionAliases"]
            ):
                return candidate
        return None

    def _alias(self, model, version, aliases):
        """ "-A" takes alias A off `version`; "A" moves it to `version` from any other."""
        for alias in aliases:
            taken = [version] if alias.startswith("-") else self.models[model]
            for other in taken:
                if alias.lstrip("-") in other["versionAliases"]:
                    other["versionAliases"].remove(alias.lstrip("-"))
            if not alias.startswith("-"):
                version["versionAliases"].append(alias)

    def _upload(self, parent, body):
        name = body.get("parentModel") or f"{parent}/models/{body['modelId']}"
        if "parentModel" in body and name not in self.models:
            return _not_found(name)
        versions = self.models.setdefault(name, [])
        version = {
            **body["model"],
            "name": name,
            "versionId": str(len(versions) + 1),
            "versionAliases": [],
            "supportedDeploymentResourcesTypes": ["DEDICATED_RESOURCES"],
        }
        versions.append(version)
        self._alias(name, version, body["model"].get("versionAliases", []))
        return 200, _done(
            f"{name}/operations/{len(versions)}",
            {
                "@type": _API + "UploadModelResponse",
                "model": name,
                "modelVersionId": version["versionId"],
            },
        )

    def _deploy(self, endpoint, body):
        deployed = dict(body["deployedModel"])
        deployed["id"] = str(1000 + len(endpoint["deployedModels"]))
        deployed["model"], _, deployed["modelVersionId"] = deployed["model"].partition("@")
        endpoint["deployedModels"].append(deployed)
        endpoint["trafficSplit"] = {
            (deployed["id"] if key == "0" else key): share
            for key, share in body["trafficSplit"].items()
        }
        return 200, _done(
            f"{endpoint['name']}/operations/{deployed['id']}",
            {"@type": _API + "DeployModelResponse", "deployedModel": deployed},
        )


def _done(name, response):
    return {"name": name, "done": True, "response": response}


def _not_found(resource):
    return 404, {"error": {"code": 404, "message": f"{resource} not found", "status": "NOT_FOUND"}}
