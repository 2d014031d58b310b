"""`python -m pipeline rollback --to VERSION`: serve an earlier pushed model again.

TensorFlow Serving serves the highest version under the serving folder, so a rollback
publishes a copy of the chosen version as a new, highest version, as the Pusher publishes a
model (components/serving_dir.py: a hidden staging folder, then one rename): a server sees
the old model or the restored one, never a partial copy, and the versions already there stay
as they were. ML Metadata records it as a push: a `PushedModel` artifact (`rollback_of`,
`reason`) output by a `Rollback` execution whose inputs are the original version's
`PushedModel` and `Model`, so `python -m pipeline models` lists it with the original's
lineage. With a Vertex AI Model Registry (`model_registry`), the registry is what serves:
there a rollback moves the model's `default` version alias (components/model_registry.py).
No TensorFlow import.
"""

import getpass
import json
import os
import sys

from pipeline import exit_codes
from pipeline.history import (
    CODE_VERSION_PROPERTY,
    ROLLBACK_TYPE,
    SERVING_SUBDIR,
    code_version,
    load,
)


class Refused(Exception):
    """A rollback that must not happen as asked; the message says why."""


def _source_dir(record):
    """The SavedModel folder to copy: the version's own, else its Model artifact's."""
    if record["present"]:
        return record["path"]
    if record["model"] is not None:
        from components.serving_dir import fingerprint

        serving = os.path.join(record["model"].uri, SERVING_SUBDIR)
        if fingerprint(serving) is not None or os.path.isfile(
            os.path.join(serving, "saved_model.pb")
        ):
            return serving
    raise Refused(
        f"version {record['version']} is gone from {os.path.dirname(record['path'])} and its "
        "Model artifact's SavedModel cannot be found either."
    )


def plan(history, serving_dir, version, force=False):
    """(the chosen version's record, the folder to copy, the served version's record);
    Refused for a version never pushed, never blessed (unless `force`) or gone."""
    records = history.models(serving_dir, with_metrics=False)
    by_version = {r["version"]: r for r in records}
    if version not in by_version:
        known = ", ".join(str(r["version"]) for r in records if r["present"])
        there = f"the versions there are {known}" if known else "there is none yet"
        raise Refused(f"version {version} was never pushed to {serving_dir}: {there}.")
    record = by_version[version]
    if record["blessed"] is not True and not force:
        why = (
            "its run's Evaluator did not bless it"
            if record["blessed"] is False
            else "ML Metadata has no record of a blessing for it (a folder put there by hand?)"
        )
        raise Refused(f"version {version} was never blessed: {why}. --force serves it anyway.")
    served = next((r for r in records if r["serving"]), None)
    return record, _source_dir(record), served


def _record(history, record, destination, reason, forced):
    """The rollback in ML Metadata: a `Rollback` execution in the pipeline's context, its
    inputs the original's PushedModel and Model, its output the new PushedModel."""
    version = os.path.basename(destination)
    why = {"rollback_of": str(record["version"]), "reason": reason or "", "forced": int(forced)}
    originals = {"pushed_model": record["pushed_artifact"], "model": record["model"]}
    pushed = why | {"pushed": 1, "pushed_destination": destination, "pushed_version": version}
    history.record_execution(
        ROLLBACK_TYPE,
        why | {"user": getpass.getuser(), CODE_VERSION_PROPERTY: code_version() or ""},
        inputs={key: artifact for key, artifact in originals.items() if artifact is not None},
        outputs={"pushed_model": ("PushedModel", destination, pushed)},
    )


def _already_served(served, version, source):
    """Whether the served version is `version`, or the same SavedModel (a rollback to it)."""
    from components.serving_dir import fingerprint

    if served is None:
        return False
    if served["version"] == version:
        return True
    model = fingerprint(source)
    return model is not None and fingerprint(served["path"]) == model


def _registry_rollback(config, version, dry_run, force, reason, say):
    """`rollback` in the Vertex AI Model Registry: the `default` alias moves to `version` (and,
    with an endpoint, that version is deployed there with all of its traffic). Reads the
    registry even in a dry run, which prints the calls it would make instead of making them.
    Refused for a version the registry lacks or one the Pusher never uploaded (unless
    `force`)."""
    from components.model_registry import (
        BLESSED_LABEL,
        DEFAULT_ALIAS,
        Registry,
        send,
        versioned,
    )
    from pipeline.vertex import find_credentials

    destination = config.registry_destination
    if reason:
        raise Refused(
            "--reason is recorded in the local ML Metadata store, which a rollback in the "
            f"Model Registry ({destination.model}) does not write to; leave it out."
        )
    credentials, _, problem = find_credentials()
    if problem:
        raise Refused(f"cannot reach the Vertex AI Model Registry: {problem}.")
    registry = Registry(destination, credentials)
    chosen = registry.get(str(version))
    if chosen is None:
        raise Refused(f"version {version} is not a version of {destination.model}.")
    forced = chosen.get("labels", {}).get(BLESSED_LABEL) != "true"
    if forced and not force:
        raise Refused(
            f"version {version} was never blessed: it has no {BLESSED_LABEL}=true label, which "
            "the Pusher puts on every version it uploads (all blessed). --force serves it anyway."
        )
    calls = []
    if DEFAULT_ALIAS not in chosen.get("versionAliases", []):
        calls.append((registry.set_default_request(version), registry.set_default))
    if destination.endpoint and registry.endpoint_version() != str(version):
        calls.append((registry.deploy_request(version), registry.deploy))
    if not calls:
        traffic = f", with all of {destination.endpoint}'s traffic" if destination.endpoint else ""
        say(
            f"Version {version} is already served: {versioned(destination.model, version)} is "
            f"the default version{traffic}. Nothing to do."
        )
        return exit_codes.OK
    served = (registry.get() or {}).get("versionId")
    instead = f" (instead of version {served})" if served and served != str(version) else ""
    phrases = {
        registry.set_default: (
            f"make version {version} the default version of {destination.model}{instead}",
            f"the default version{instead}",
        ),
        registry.deploy: (
            f"deploy version {version} of {destination.model} to {destination.endpoint} "
            "with all of its traffic",
            f"deployed to {destination.endpoint} with all of its traffic",
        ),
    }
    if dry_run:
        say(
            f"Would {' and '.join(phrases[call][0] for _, call in calls)}"
            + (" (forced: never blessed)" if forced else "")
            + ". Dry run: nothing changed. The calls it would make:"
        )
        say(json.dumps([description for description, _ in calls], indent=2, sort_keys=True))
        return exit_codes.OK
    for description, call in calls:
        send(description, call, str(version))
    say(
        f"Version {version} of {destination.model} is served now: "
        + ", ".join(phrases[call][1] for _, call in calls)
        + "."
    )
    return exit_codes.OK


def rollback(config, version, dry_run=False, force=False, reason=None, out=None, err=None):
    """Makes `version` the served model of `config`'s pipeline (in its serving folder, or in
    the Model Registry when it has one); returns the exit status: exit_codes.OK (what was done,
    or would be, written to `out`), exit_codes.REFUSED (why, to `err`) or, for a registry call
    that failed, exit_codes.FAILED. Streams default to stdout and stderr."""
    from components.serving_dir import next_version, push

    serving_dir = config.resolved_serving_model_dir

    def say(text):
        print(text, file=out or sys.stdout, flush=True)

    def refuse(e):
        print(f"Refused: {e}", file=err or sys.stderr, flush=True)
        return exit_codes.REFUSED

    if config.model_registry is not None:
        from google.api_core.exceptions import GoogleAPIError
        from google.auth.exceptions import GoogleAuthError

        try:
            return _registry_rollback(config, version, dry_run, force, reason, say)
        except Refused as e:
            return refuse(e)
        except (GoogleAPIError, GoogleAuthError) as e:
            print(f"Not rolled back: {e}", file=err or sys.stderr, flush=True)
            return exit_codes.FAILED
    try:
        history = load(config, writable=not dry_run)
        record, source, served = plan(history, serving_dir, version, force)
    except (Refused, RuntimeError) as e:
        return refuse(e)
    if _already_served(served, version, source):
        what = "" if served["version"] == version else f" as version {served['version']}"
        say(f"Version {version} is already served{what}: nothing to do.")
        return exit_codes.OK
    forced = record["blessed"] is not True
    if dry_run:
        new = next_version(serving_dir)
        say(
            f"Would copy {source} to {os.path.join(serving_dir, f'.{new}.incomplete')}, rename "
            f"it to {os.path.join(serving_dir, str(new))} (served instead of version "
            f"{served['version'] if served else 'none'}), and record a Rollback of version "
            f"{version} in {config.resolved_metadata_path}"
            + (f" (reason: {reason})" if reason else "")
            + (" (forced: never blessed)" if forced else "")
            + ". Dry run: nothing changed."
        )
        return exit_codes.OK
    destination = push(source, serving_dir)
    _record(history, record, destination, reason, forced)
    say(
        f"Version {os.path.basename(destination)} (a copy of version {version}) is served now "
        f"from {destination}"
        + (f", instead of version {served['version']}" if served else "")
        + "."
    )
    return exit_codes.OK
