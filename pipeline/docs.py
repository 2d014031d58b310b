"""The docs' tables made from code: each between BEGIN/END GENERATED markers of a page, so
a setting or an exit status is written down once. `tests/test_cli.py` checks the pages are
current; `python -m pipeline.docs` rewrites them."""

from pipeline import exit_codes
from pipeline.config import REPO_ROOT
from pipeline.definition import reference_table


def exit_status_table():
    rows = ["| status | meaning |", "|---:|---|"]
    rows += [f"| {status} | {meaning} |" for status, meaning in exit_codes.MEANINGS]
    return "\n".join(rows) + "\n"


# (page, marker name, the table's text).
TABLES = (
    ("docs/reference/settings.md", "settings", reference_table),
    ("docs/reference/commands.md", "exit statuses", exit_status_table),
    ("README.md", "exit statuses", exit_status_table),
)


def markers(name):
    return f"<!-- BEGIN GENERATED: {name} -->\n", f"<!-- END GENERATED: {name} -->"


def published(page, name):
    """The text between the markers `name` of `page` (a path relative to the repository)."""
    text = (REPO_ROOT / page).read_text()
    begin, end = markers(name)
    return text[text.index(begin) + len(begin) : text.index(end)]


def write_tables():
    for page, name, table in TABLES:
        path = REPO_ROOT / page
        text = path.read_text()
        old = published(page, name)
        begin, _ = markers(name)
        start = text.index(begin) + len(begin)
        path.write_text(text[:start] + table() + text[start + len(old) :])


if __name__ == "__main__":  # python -m pipeline.docs
    write_tables()
