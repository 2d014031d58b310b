"""Pages opened in headless Debian Chromium (which `python3 bootstrap.py test` installs),
driven by Playwright, with every script error and every request they make recorded: the
run report and the docs site are checked to render alone, offline."""

import contextlib
import os

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextlib.contextmanager
def chromium():
    """Headless Chromium; the test fails, saying how to install it, when it is missing."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}: install Debian's package "
            "(`apt-get install chromium`, as `python3 bootstrap.py test` does) to check the "
            "pages render."
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Page:
    """A page opened in Chromium, with every error and request it made."""

    def __init__(self, browser, path_or_url, offline=False):
        self.path = None if "://" in str(path_or_url) else os.path.abspath(path_or_url)
        self.url = f"file://{self.path}" if self.path else str(path_or_url)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=offline)
        self.page = context.new_page()
        self.errors, self.requests = [], []
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        self.page.on(
            "console",
            lambda m: (
                self.errors.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning")
                else None
            ),
        )
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on(
            "dialog", lambda d: (self.errors.append(f"dialog {d.type}: {d.message}"), d.dismiss())
        )
        self.page.goto(self.url)
        self.page.wait_for_load_state("load")

    def count(self, selector):
        return self.page.locator(selector).count()

    def texts(self, selector):
        return [t.strip() for t in self.page.locator(selector).all_inner_texts()]

    def svg_texts(self, selector):
        """The text of SVG elements, which have no inner text."""
        return self.page.locator(selector).all_text_contents()

    def row(self, table, first_cell):
        """The cells of the row of `table` (a selector) whose first cell is `first_cell`."""
        for row in self.page.locator(f"{table} tbody tr").all():
            cells = [c.strip() for c in row.locator("td").all_inner_texts()]
            if cells and cells[0] == first_cell:
                return cells
        raise AssertionError(f"no row {first_cell!r} in {table}: {self.texts(table)}")

    def check_renders_alone(self):
        """No script error or dialog, and nothing loaded but the file itself."""
        # (This module's asserts are not rewritten by pytest: the values said here.)
        assert self.errors == [], self.errors
        assert self.requests == [self.url], self.requests
