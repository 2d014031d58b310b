"""MkDocs hook (mkdocs.yml, `hooks:`): the site works offline and from disk.

- Code is coloured at build time: the theme's highlight.js comes from a CDN (`hljs is not
  defined` offline), so it is off in mkdocs.yml and Python-Markdown's `codehilite` marks the
  code up with Pygments as each page is built; this hook adds the stylesheet that colours
  that markup, written by the installed Pygments.
- Search runs in a web worker, which a browser refuses to a page opened from disk (origin
  'null'). On such a page a script of this hook, run before the search's own, stands in for
  the worker and the search box says how to serve the site (`python3 bootstrap.py docs
  --serve`), instead of the page failing with a script error.
- A heading's id never starts with a digit: the theme looks the contents' targets up as CSS
  selectors, and `#2026-12-01-...` is not one (a script error on every dated page); such an
  id gets a leading `_`.

tests/test_docs_site.py opens the built pages in Chromium with the network off."""

from markdown.extensions.toc import slugify as markdown_slugify
from mkdocs.structure.files import File
from pygments.formatters import HtmlFormatter

STYLESHEET = "css/highlight.css"
FROM_DISK_SCRIPT = "js/from-disk.js"
_STYLE = "friendly"
SERVE_HINT = "Search needs the site served: python3 bootstrap.py docs --serve"

_FROM_DISK = """// Opened from disk: no web worker for search (see docs/hooks/offline.py).
if (window.location.protocol === "file:") {
  window.Worker = function () {
    this.postMessage = function () {};
  };
  document.addEventListener("DOMContentLoaded", function () {
    var results = document.getElementById("mkdocs-search-results");
    var query = document.getElementById("mkdocs-search-query");
    if (results) {
      var note = document.createElement("p");
      note.className = "search-from-disk";
      note.textContent = %s;
      results.replaceChildren(note);
    }
    if (query) {
      query.disabled = true;
    }
  });
}
"""


def stylesheet():
    """The CSS of Pygments' `_STYLE` for codehilite's `.codehilite` blocks."""
    return HtmlFormatter(style=_STYLE).get_style_defs(".codehilite")


def slugify(value, separator):
    """Markdown's heading id, with `_` before one that would start with a digit."""
    slug = markdown_slugify(value, separator)
    return f"_{slug}" if slug[:1].isdigit() else slug


def on_config(config):
    config.mdx_configs.setdefault("toc", {})["slugify"] = slugify
    config.extra_css.append(STYLESHEET)
    # First: before search/main.js (which the search plugin added), which starts the worker.
    config.extra_javascript.insert(0, FROM_DISK_SCRIPT)
    return config


def on_files(files, config):
    files.append(File.generated(config, STYLESHEET, content=stylesheet()))
    script = _FROM_DISK.replace("%s", '"' + SERVE_HINT + '"')
    files.append(File.generated(config, FROM_DISK_SCRIPT, content=script))
    return files
