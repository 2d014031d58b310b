"""The docs site's front page is the README: made from it at each build by a hook
(docs/hooks/front_page.py), so that the repository's front page and the site's cannot
drift apart. Every built page works offline (docs/hooks/offline.py): opened from disk in
Chromium with the network off it loads nothing but the site's own files; served on
127.0.0.1 (as `bootstrap.py docs --serve` serves it), its search finds pages."""

import contextlib
import functools
import html
import http.server
import importlib.util
import os
import re
import signal
import subprocess
import sys
import threading

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
    assert config["hooks"] == ["docs/hooks/front_page.py", "docs/hooks/offline.py"]
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
        hook.front_page(readme),
        extensions=["toc", "tables", "fenced_code", "codehilite"],
        extension_configs={"codehilite": {"guess_lang": False}},
    )
    built = (site / "index.html").read_text()
    assert _text(rendered) in _text(built)
    # The README's picture and its links into docs/ reach the site's files.
    assert (site / "pipeline.svg").is_file()
    for target in re.findall(r'href="([^"#:]+\.html)(?:#[^"]*)?"', built):
        assert (site / target).is_file(), target


@pytest.fixture(scope="module")
def browser():
    from tests.browser import chromium

    with chromium() as launched:
        yield launched


def test_every_page_opened_from_disk_offline_loads_only_the_site_and_runs_clean(site, browser):
    from tests.browser import Page

    # 404.html is a server's page: it names the site's files from the server's root.
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 20
    for path in pages:
        page = Page(browser, path, offline=True)
        outside = [url for url in page.requests if not url.startswith(f"file://{site}/")]
        assert outside == [], path
        assert page.errors == [], path
        page.page.context.close()
    # Code is coloured at build time (Pygments), with no script; search says how to serve.
    page = Page(browser, site / "guide" / "beam.html", offline=True)
    assert page.count("div.codehilite pre span") > 0
    assert page.page.evaluate("typeof hljs") == "undefined"
    assert "bootstrap.py docs --serve" in page.page.locator("#mkdocs-search-results").inner_text()


def _serve(folder):
    """An HTTP server of `folder` on 127.0.0.1 (a free port), in a thread; its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_served_site_searches_without_the_network(site, browser):
    server, base = _serve(site)
    try:
        context = browser.new_context()
        outside = []
        # Anything not to this server is refused and recorded: the network is off.
        context.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith(base)
                else (outside.append(route.request.url), route.abort())
            ),
        )
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        # ?q= searches as soon as the index is loaded (the theme's search results box).
        page.goto(f"{base}/index.html?q=boosted+trees")
        results = page.locator("#mkdocs-search-results article")
        results.first.wait_for(state="attached", timeout=60_000)
        titles = page.locator("#mkdocs-search-results article h3").all_text_contents()
        assert any("Estimator" in title for title in titles), titles
        assert outside == [] and errors == []
        context.close()
    finally:
        server.shutdown()


def test_bootstrap_docs_serve_builds_and_serves_the_site_on_localhost():
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # bootstrap.py's docs command itself (its environment set-up left out: this is it).
    serve = subprocess.Popen(
        [sys.executable, "-c", f"import bootstrap; bootstrap.docs(['--serve', '{port}'])"],
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its group: the server it starts ends with it
    )
    try:
        url = f"http://127.0.0.1:{port}/search/search_index.json"
        for _ in range(240):
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    assert b'"location"' in response.read()
                break
            except OSError:
                assert serve.poll() is None, serve.stderr.read()
                time.sleep(0.5)
        else:
            raise AssertionError(f"nothing served at {url}")
    finally:
        with contextlib.suppress(ProcessLookupError):  # it may have failed already
            os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=30)
