"""Pipeline definitions (pipeline/definition.py): shipped files, errors, precedence, compile."""

import dataclasses
import json
import os
import re
import textwrap
import tomllib

import pytest

from pipeline.cli import config_from_argv, main
from pipeline.config import REPO_ROOT, PipelineConfig
from pipeline.definition import DEFAULT_DEFINITION, KEYS, DefinitionError, build_config, load

TAXI = str(REPO_ROOT / "definitions" / "taxi.toml")
DIABETES = str(REPO_ROOT / "definitions" / "diabetes.toml")
IMAGE = "europe-west4-docker.pkg.dev/proj/kit/taxi:test"
# The diabetes command line the README gave before definitions existed.
DIABETES_FLAGS = [
    "--pipeline-name=diabetes",
    "--data=data/diabetes/data.csv",
    "--schema=schemas/diabetes/schema.pbtxt",
    "--preprocessing-fn=transforms.diabetes.preprocessing_fn",
    "--estimator-fn=models.diabetes.build_estimator",
    "--label=target",
    "--transformed-label=target_xf",
    "--task=regression",
    "--slice=sex",
    "--hidden-units=32,16",
    "--train-epochs=90",
]


def _cli_config(argv):
    return config_from_argv(argv)


# What a definition must say, for tests of the other keys: the taxi data and label.
TAXI_DATA = {
    "data_path": str(REPO_ROOT / "data" / "taxi" / "data.csv"),
    "raw_label_key": "tips",
    "schema_path": str(REPO_ROOT / "schemas" / "taxi" / "schema.pbtxt"),
}


def _write(folder, text, name="model.toml"):
    path = folder / name
    path.write_text(text)
    return str(path)


def test_shipped_definitions_give_the_configs_their_flags_gave(monkeypatch):
    # Taxi: what `run` without a definition runs (definitions/default.toml links to it).
    assert os.path.realpath(DEFAULT_DEFINITION) == os.path.realpath(TAXI)
    assert build_config(TAXI) == _cli_config(["run"]) == _cli_config(["run", "--definition", TAXI])

    monkeypatch.chdir(REPO_ROOT)  # the README's relative paths
    diabetes = PipelineConfig(
        pipeline_name="diabetes",
        data_path=str(REPO_ROOT / "data" / "diabetes" / "data.csv"),
        schema_path=str(REPO_ROOT / "schemas" / "diabetes" / "schema.pbtxt"),
        preprocessing_fn="transforms.diabetes.preprocessing_fn",
        estimator_fn="models.diabetes.build_estimator",
        raw_label_key="target",
        transformed_label_key="target_xf",
        task="regression",
        slice_features=("sex",),
        hidden_units=(32, 16),
        train_epochs=90,
    )
    flags = _cli_config(["run", *DIABETES_FLAGS])
    flags = dataclasses.replace(
        flags,
        data_path=os.path.abspath(flags.data_path),
        schema_path=os.path.abspath(flags.schema_path),
    )
    assert build_config(DIABETES) == diabetes == flags
    assert _cli_config(["compile", "--out=x.json", "--definition", DIABETES]) == diabetes


def test_every_key_sets_its_field_and_paths_resolve_against_the_definitions_folder(tmp_path):
    folder = tmp_path / "use_case"
    folder.mkdir()
    path = _write(
        folder,
        """
        name = "mine"
        enable_cache = false
        [data]
        path = "data/rows.csv"
        schema = "infer"
        split_ratios = { train = 3, eval = 1 }
        max_bad_row_fraction = 0
        [label]
        column = "tips"
        task = "binary"
        [validation]
        warn_only = ["new_column"]
        drift_thresholds = { "*" = 0.1, fare = 0.05 }
        [output]
        dir = "out"
        pipeline_root = "gs://bucket/root"
        metadata_path = "/abs/metadata.sqlite"
        [serving]
        dir = "../serving"
        [blessing]
        threshold = 0.7
        max_change = inf
        """,
    )
    definition = load(path)
    assert definition.values == {
        "pipeline_name": "mine",
        "enable_cache": False,
        "data_path": str(folder / "data" / "rows.csv"),
        "schema_path": None,
        "split_ratios": '{"train": 3, "eval": 1}',
        "max_bad_row_fraction": 0.0,
        "raw_label_key": "tips",
        "task": "binary",
        "warn_only_anomalies": ("new_column",),
        "drift_thresholds": (("*", 0.1), ("fare", 0.05)),
        "output_dir": str(folder / "out"),
        "pipeline_root": "gs://bucket/root",
        "metadata_path": "/abs/metadata.sqlite",
        "serving_model_dir": str(tmp_path / "serving"),
        "blessing_threshold": 0.7,
        "blessing_max_change": float("inf"),
    }
    config = build_config(path)
    assert config.blessing_gate.describe() == "auc >= 0.7"
    # Every key of the format sets a field of the config.
    fields = set(PipelineConfig.__dataclass_fields__)
    for key in KEYS:
        assert key.field in fields, key


def test_vertex_folders_replace_the_local_ones_for_compile_only(tmp_path):
    path = _write(
        tmp_path,
        """
        [output]
        pipeline_root = "root"
        [serving]
        dir = "serving"
        [vertex]
        project = "proj"
        region = "europe-west4"
        image = "IMAGE"
        pipeline_root = "gs://bucket/root"
        serving_dir = "/gcs/bucket/serving"
        """,
    )
    local = build_config(path, "run", TAXI_DATA)
    compiled = build_config(path, "compile", TAXI_DATA)
    assert (local.pipeline_root, local.serving_model_dir) == (
        str(tmp_path / "root"),
        str(tmp_path / "serving"),
    )
    assert (compiled.pipeline_root, compiled.serving_model_dir) == (
        "gs://bucket/root",
        "/gcs/bucket/serving",
    )
    assert (compiled.gcp_project, compiled.gcp_region, compiled.image) == (
        "proj",
        "europe-west4",
        "IMAGE",
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "[training]\nstesp = 10",
            r"model.toml: \[training\] stesp: unknown key \(did you mean 'steps'\?\); "
            r"\[training\] takes: steps, epochs, eval_steps, batch_size",
        ),
        ("[trainng]\nsteps = 10", r"\[trainng\]: unknown section \(did you mean 'training'\?\)"),
        ("nme = 'x'", r"nme: unknown key \(did you mean 'name'\?\); top-level keys: name, "),
        ("training = 5", r"\[training\] must be a table, got an integer \(5\)"),
        ("[training]\nsteps = '2000'", r"\[training\] steps: must be an integer, got a string"),
        ("[training]\nsteps = 2.5", r"\[training\] steps: must be an integer, got a number"),
        ("[model]\nhidden_units = '32,16'", r"\[model\] hidden_units: must be a list of integers"),
        ("[evaluation]\nslices = 'sex'", r"\[evaluation\] slices: must be a list of strings"),
        ("[training]\nwarm_start = 1", r"\[training\] warm_start: must be true or false"),
        ("[data]\nschema = false", r"\[data\] schema: must be a string \(a path, or 'infer'\)"),
        (
            "[validation]\ndrift_thresholds = { fare = 'high' }",
            r"\[validation\] drift_thresholds: must be a table of column = number",
        ),
        ("[training\nsteps = 1", r"model.toml: not valid TOML"),
    ],
)
def test_file_errors_name_the_key_and_what_it_takes(tmp_path, text, expected):
    with pytest.raises(DefinitionError, match=expected):
        load(_write(tmp_path, text))


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "[training]\nstrategy = 'fast'",
            r'\[training\] strategy = "fast": strategy must be one of auto, default, ',
        ),
        (
            "[training]\nsteps = 0",
            r"\[training\] steps = 0: train_steps must be positive, got 0",
        ),
        ("[label]\ntask = 'ranking'", r'\[label\] task = "ranking": task must be one of binary, '),
        (
            "[label]\ntask = 'multiclass'\nnum_classes = 2",
            r"\[label\] num_classes = 2: task 'multiclass' needs num_classes >= 3",
        ),
        (
            "[label]\ntask = 'regression'\n[blessing]\nmetric = 'auc'",
            r'\[label\] task = "regression", \[blessing\] metric = "auc": blessing_metric '
            r"'auc' is not reported for task 'regression': choose one of root_mean_squared_error",
        ),
        (
            "[validation]\nwarn_only = ['drfit']",
            r'\[validation\] warn_only = \["drfit"\]: unknown anomaly kind\(s\) drfit; known: ',
        ),
        (
            "[validation]\nskew_thresholds = { nope = 0.1 }",
            r"\[validation\] skew_thresholds = \{\"nope\": 0.1\}: skew_thresholds: no column "
            r"'nope' in the schema",
        ),
        (
            "[data]\nmax_bad_row_fraction = 2",
            r"\[data\] max_bad_row_fraction = 2: max_bad_row_fraction must be in \[0, 1\]",
        ),
    ],
)
def test_values_the_config_refuses_name_the_definitions_keys(tmp_path, text, expected):
    with pytest.raises(DefinitionError, match=expected):
        build_config(_write(tmp_path, text), overrides=TAXI_DATA)


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "[data]\nfeatures = ['fare']\n[preprocessing]\nfn = 'transforms.taxi.preprocessing_fn'",
            r"\[data\] features = \[\"fare\"\], \[preprocessing\] fn = .*: features/exclude_features "
            r"choose the auto preprocessing's inputs",
        ),
        (
            "[data]\nfeatures = ['fare']\nexclude_features = ['tips_typo']",
            r"give one of the two",
        ),
        (
            "[label]\ntask = 'binary'\n[model]\ncanned = 'DNNRegressor'",
            r"canned estimator 'DNNRegressor': task 'binary' needs a Classifier",
        ),
        (
            "[model]\ncanned = 'DNNClassifer'",
            r"\[model\] canned = \"DNNClassifer\": canned estimator 'DNNClassifer' is not one of ",
        ),
        (
            "[model]\ncanned = 'DNNClassifier'\nargs = { hiden_units = [8] }",
            r"\[model\] args = \{\"hiden_units\": \[8\]\}: canned_args 'hiden_units': "
            r"DNNClassifier takes hidden_units, ",
        ),
        (
            "[model]\ncanned = 'LinearClassifier'\nargs = { n_classes = 3 }",
            r"canned_args 'n_classes': set by the kit",
        ),
        (
            "[model]\nbuild_estimator = 'models.taxi.build_estimator'\ncanned = 'DNNClassifier'",
            r"canned_estimator builds the model: leave estimator_fn 'auto'",
        ),
    ],
)
def test_features_and_canned_estimators_are_checked_naming_the_keys(tmp_path, text, expected):
    with pytest.raises(DefinitionError, match=expected):
        build_config(
            _write(tmp_path, text),
            overrides={"data_path": TAXI_DATA["data_path"], "raw_label_key": "tips"},
        )


def test_a_definition_can_leave_everything_to_inference_as_zero_code_does(tmp_path):
    text = """
        name = "mine"
        [data]
        path = "my.csv"
        schema = "infer"
        [label]
        column = "target"
        task = "auto"
        [preprocessing]
        fn = "auto"
        [model]
        build_estimator = "auto"
        hidden_units = [64, 32]
        [evaluation]
        slices = []
    """
    config = build_config(_write(tmp_path, textwrap.dedent(text)))
    data = str(tmp_path / "my.csv")
    assert config == PipelineConfig(data_path=data, raw_label_key="target", pipeline_name="mine")
    # Those are the defaults: the data and the label are all a definition needs.
    minimal = _write(tmp_path, '[data]\npath = "my.csv"\n[label]\ncolumn = "target"', "min.toml")
    assert build_config(minimal) == dataclasses.replace(config, pipeline_name="my")
    for text, key in (
        ('[label]\ncolumn = "y"', "[data] path"),
        ('[data]\npath = "a.csv"', "[label] column"),
    ):
        with pytest.raises(DefinitionError, match=re.escape(f"{key}: required")):
            build_config(_write(tmp_path, text, "partial.toml"))


def test_options_given_override_the_definition_and_defaults_do_not(tmp_path):
    base = ["run", "--definition", DIABETES]
    assert _cli_config(base) == build_config(DIABETES)
    # An option given wins even when it repeats PipelineConfig's default.
    config = _cli_config([*base, "--train-steps", "2000", "--slice", "age", "--slice", "bmi"])
    assert (config.train_steps, config.slice_features) == (2000, ("age", "bmi"))
    assert (config.pipeline_name, config.hidden_units, config.task) == (
        "diabetes",
        (32, 16),
        "regression",
    )
    assert _cli_config([*base, "--infer-schema"]).schema_path is None
    assert _cli_config([*base, "--no-cache"]).enable_cache is False
    inferred = _write(tmp_path, "[data]\npath = 'x.csv'\nschema = 'infer'\n[label]\ncolumn = 'y'")
    schema = _cli_config(["run", "--definition", inferred, "--schema", "s.pbtxt"]).schema_path
    assert schema == "s.pbtxt"  # a flag's path is the command line's, as without a definition
    # Without a definition, the options over the default definition's keys.
    assert _cli_config(["run", "--train-steps", "7"]) == build_config(
        TAXI, overrides={"train_steps": 7}
    )


def test_cli_reports_a_bad_definition_naming_file_and_key(tmp_path, capsys):
    path = _write(tmp_path, "[training]\nstesp = 10")
    for argv in (
        ["run", "--definition", path],
        ["compile", "--out", str(tmp_path / "p.json"), "--definition", path],
        ["stats", "--definition", path],
        ["submit", "--spec", str(tmp_path / "p.json"), "--definition", path, "--dry-run"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        assert "[training] stesp: unknown key (did you mean 'steps'?)" in capsys.readouterr().err
    # A value a flag gets wrong is not blamed on the definition.
    with pytest.raises(SystemExit):
        main(["run", "--definition", DIABETES, "--train-steps", "0"])
    assert "diabetes.toml: with the options given: train_steps" in capsys.readouterr().err


def test_stats_reads_the_definitions_pipeline_name(tmp_path, capsys):
    assert main(["stats", "--definition", DIABETES, "--output-dir", str(tmp_path)]) == 2
    expected = tmp_path / "pipelines" / "diabetes" / "metadata.sqlite"
    assert f"No ML Metadata store at {expected}" in capsys.readouterr().err


def test_modules_outside_the_image_are_refused_when_compiling():
    from pipeline.vertex import FRAMEWORK_PACKAGES, SetupError, vertex_config

    config = build_config(
        TAXI,
        overrides={
            "pipeline_root": "gs://b/r",
            "serving_model_dir": "/gcs/b/s",
            "image": IMAGE,
            "preprocessing_fn": "tests.conftest.preprocessing_fn",
            "estimator_fn": "nowhere.models.build_estimator",
        },
    )
    with pytest.raises(SetupError) as error:
        vertex_config(config)
    message = str(error.value)
    assert re.search(
        r"--preprocessing-fn tests.conftest.preprocessing_fn: \S+/tests/conftest.py is not in "
        r"the pipeline image: put the module in one of its packages",
        message,
    )
    assert "--estimator-fn nowhere.models.build_estimator: no module 'nowhere.models'" in message
    # The packages the image installs are the ones pyproject.toml packages: the framework's.
    with open(REPO_ROOT / "pyproject.toml", "rb") as f:
        include = tomllib.load(f)["tool"]["setuptools"]["packages"]["find"]["include"]
    assert {name.rstrip("*") for name in include} == set(FRAMEWORK_PACKAGES)


@pytest.fixture(scope="module")
def compiled_diabetes(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("compiled") / "diabetes.json")
    argv = ["compile", "--definition", DIABETES, "--out", path, "--image", IMAGE]
    argv += ["--pipeline-root", "gs://b/diabetes", "--serving-model-dir", "/gcs/b/serving"]
    assert main(argv) == 0
    with open(path) as f:
        return path, json.load(f)


def test_compile_from_the_diabetes_definition_gates_on_rmse(compiled_diabetes):
    _, job = compiled_diabetes
    tasks = job["pipelineSpec"]["root"]["dag"]["tasks"]

    def parameters(task):
        return {
            key: value["runtimeValue"]["constant"]
            for key, value in tasks[task]["inputs"]["parameters"].items()
        }

    evaluator = parameters("Evaluator")
    assert (evaluator["task"], evaluator["transformed_label_key"]) == ("regression", "target_xf")
    assert json.loads(evaluator["slice_features"]) == ["sex"]
    assert json.loads(evaluator["blessing_gate"]) == {
        "metric": "root_mean_squared_error",
        "threshold": None,
        "max_change": None,
        "max_relative_change": 0.02,
    }
    assert parameters("ExampleGen")["input_base"] == "data/diabetes/data.csv"
    assert parameters("SchemaImporter") == {"schema_file": "schemas/diabetes/schema.pbtxt"}
    trainer = parameters("Trainer")
    assert trainer["estimator_fn"] == "models.diabetes.build_estimator"
    assert (trainer["train_epochs"], trainer["transformed_label_key"]) == (90.0, "target_xf")
    assert "train_steps" not in trainer
    assert parameters("Transform")["preprocessing_fn"] == "transforms.diabetes.preprocessing_fn"


@pytest.mark.slow  # loads google-cloud-aiplatform
def test_submit_takes_project_and_region_from_the_definition(
    compiled_diabetes, tmp_path, capsys, monkeypatch
):
    for name in ("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    path = _write(tmp_path, "[vertex]\nproject = 'defproj'\nregion = 'europe-west4'")
    spec, _ = compiled_diabetes
    common = ["submit", "--spec", spec, "--definition", path, "--dry-run", "--job-id", "j"]
    assert main(common) == 0
    url = json.loads(capsys.readouterr().out)["url"]
    assert (
        "europe-west4-aiplatform.googleapis.com/v1/projects/defproj/locations/europe-west4" in url
    )
    assert main([*common, "--region", "us-east1", "--project", "other"]) == 0
    assert "/projects/other/locations/us-east1/" in json.loads(capsys.readouterr().out)["url"]


def test_the_trainer_gets_the_candidates_apart_from_the_hparams(tmp_path):
    """The auto model with no canned Estimator chooses among candidates (boosted trees for
    a multiclass label too); a canned Estimator or an own build_estimator is
    one model; the hparams a build_estimator receives never carry the candidates."""
    data = {"data_path": TAXI_DATA["data_path"], "raw_label_key": "tips"}
    binary = PipelineConfig(**data, task="binary")
    multiclass = PipelineConfig(**data, task="multiclass", num_classes=3)
    canned = PipelineConfig(**data, task="binary", canned_estimator="DNNClassifier")
    own = PipelineConfig(**data, task="binary", estimator_fn="models.taxi.build_estimator")
    assert json.loads(binary.trainer_candidates_json) == list(binary.candidates)
    assert json.loads(multiclass.trainer_candidates_json) == list(multiclass.candidates)
    assert (canned.trainer_candidates_json, own.trainer_candidates_json) == (None, None)
    for config in (binary, multiclass, own):
        assert json.loads(config.hparams_json) == {"hidden_units": [64, 32]}
    assert json.loads(canned.hparams_json)["canned"] == "DNNClassifier"
    # One model: a warm start needs no single candidate named.
    assert dataclasses.replace(canned, warm_start=True).warm_start
    with pytest.raises(ValueError, match="with several candidates there is no one model"):
        dataclasses.replace(binary, warm_start=True)
