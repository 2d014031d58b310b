"""Code references (components/user_code.py): dotted paths and files, their errors and hashes."""

import pytest

from components import user_code


def test_a_file_reference_loads_its_function_and_its_folder_imports_siblings(tmp_path):
    (tmp_path / "shared_names_for_test.py").write_text("LABEL = 'price'\n")
    (tmp_path / "model.py").write_text(
        "from shared_names_for_test import LABEL\n\ndef build():\n    return LABEL\n"
    )
    build = user_code.load(f"{tmp_path}/model.py:build", "estimator_fn")
    assert build() == "price"
    assert user_code.load(f"{tmp_path}/model.py:build", "estimator_fn") is build  # loaded once


def test_a_dotted_path_loads_an_installed_module():
    assert user_code.load("components.auto.transformed_name", "x")("a b") == "a_b_xf"


@pytest.mark.parametrize(
    "reference, message",
    [
        ("no_dots", "'no_dots' is neither a dotted path"),
        ("nowhere.module.fn", "module 'nowhere.module' not found"),
        ("components.auto.no_such_fn", "module 'components.auto' has no callable 'no_such_fn'"),
        ("/no/such/model.py:build", "no file /no/such/model.py"),
    ],
)
def test_a_wrong_reference_names_the_setting_and_what_is_missing(reference, message):
    with pytest.raises(ValueError, match=f"preprocessing_fn .*{message}"):
        user_code.load(reference, "preprocessing_fn")


def test_the_fingerprint_follows_the_files_content(tmp_path):
    module = tmp_path / "preprocessing.py"
    module.write_text("def preprocessing_fn(inputs):\n    return inputs\n")
    reference = f"{module}:preprocessing_fn"
    before = user_code.fingerprint(reference)
    assert len(before) == 64 and user_code.fingerprint(reference) == before
    module.write_text("def preprocessing_fn(inputs):\n    return dict(inputs)\n")
    assert user_code.fingerprint(reference) != before
    assert len(user_code.fingerprint("components.auto.transformed_name")) == 64
    assert user_code.fingerprint("auto") == ""
