"""MkDocs hook (mkdocs.yml, `hooks:`): the site's front page, index.md, made from the
README at each build, so that the repository's front page and the site's are one text.

The README links to the site's pages as the repository holds them (`docs/guide/x.md`);
the site names the same pages from its docs folder (`guide/x.md`). Only that prefix of a
link changes. tests/test_docs_site.py builds the site and compares the page."""

import re
from pathlib import Path

from mkdocs.structure.files import File

README = Path(__file__).resolve().parents[2] / "README.md"
# The start of a Markdown link or image target inside docs/: `](docs/`.
_INTO_DOCS = re.compile(r"\]\(docs/")


def front_page(readme_text):
    """The site's index.md: the README, its links into docs/ made relative to docs/."""
    return _INTO_DOCS.sub("](", readme_text)


def on_files(files, config):
    files.append(File.generated(config, "index.md", content=front_page(README.read_text())))
    return files


def on_serve(server, config, builder):
    server.watch(str(README))  # `mkdocs serve` rebuilds when the README changes
    return server
