"""The docs site's front page is the README: made from it at each build by a hook
(docs/hooks/front_page.py), so that the repository's front page and the site's cannot
drift apart."""

import html
import importlib.util
import re
import subprocess
import sys

import markdown
import pytest
import yaml

from pipeline.config import REPO_ROOT

HOOK = REPO_ROOT / "docs" / "hooks" / "front_page.py"


@pytest.fixture(scope="module")
def hook():
    spec = importlib.util.spec_from_file_location("front_page_hook", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built as `python3 bootstrap.py docs` builds it: strict, so that a link of
    the README that does not resolve in the site fails the build."""
    folder = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(folder)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return folder


def _text(page_html):
    """The words of an HTML fragment, tags and the headings' permalink marks left out."""
    page_html = re.sub(r'<a class="headerlink"[^>]*>.*?</a>', "", page_html)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page_html)).split())


def test_the_site_has_one_front_page_the_hook_makes():
    with open(REPO_ROOT / "mkdocs.yml") as f:
        config = yaml.safe_load(f)
    assert config["hooks"] == ["docs/hooks/front_page.py"]
    assert config["nav"][0] == {"Home": "index.md"}
    # A copy kept beside the README is what drifted before.
    assert not (REPO_ROOT / "docs" / "index.md").exists()


def test_the_front_page_is_the_readme_with_its_links_made_site_relative(hook):
    readme = (REPO_ROOT / "README.md").read_text()
    page = hook.front_page(readme)
    target = re.compile(r"\]\(([^)]*)\)")
    # The text is the README's; of the links, only those into docs/ change, by that prefix.
    assert target.sub("]()", page) == target.sub("]()", readme)
    readme_targets = target.findall(readme)
    assert any(link.startswith("docs/") for link in readme_targets)
    assert target.findall(page) == [link.removeprefix("docs/") for link in readme_targets]


def test_the_built_front_page_reads_as_the_readme(hook, site):
    readme = (REPO_ROOT / "README.md").read_text()
    rendered = markdown.markdown(
        hook.front_page(readme), extensions=["toc", "tables", "fenced_code"]
    )
    built = (site / "index.html").read_text()
    assert _text(rendered) in _text(built)
    # The README's picture and its links into docs/ reach the site's files.
    assert (site / "pipeline.svg").is_file()
    for target in re.findall(r'href="([^"#:]+\.html)(?:#[^"]*)?"', built):
        assert (site / target).is_file(), target
