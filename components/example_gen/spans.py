"""Span patterns in the data path: which CSV files a run reads when data keeps landing.

A data path may hold TFX's span specs (tfx.components.example_gen.utils gives their meaning;
this is the kit's own code): `{SPAN}` (or `{SPAN:W}`, the number written on W digits) is an
integer span number; `{YYYY}`, `{MM}` and `{DD}` (all three, once each, never with `{SPAN}`)
are a date, whose span number is the days since 1970-01-01; `{VERSION}` (or `{VERSION:W}`),
only beside a span or a date, is a version of a span, of which the highest is read. Each
spec is one path component's part; the rest of the path may hold `*`, `?` and `[...]`. A
path matched is a CSV file, or a folder whose `*.csv` files are read.

Which spans a run reads, its window (the `data_spans` setting): `N` is the newest N spans
found (1, the default: the latest, as TFX's ExampleGen reads without a RangeConfig; more: a
rolling window), `FIRST..LAST` the spans in a fixed range (span numbers, or dates
YYYY-MM-DD for a date pattern). Spans read together must have the same columns, and a
rolling window's newest span the columns of the span before the window: a span whose
columns changed is refused, naming both, until a fixed range starting at it says the change
is meant.

Resolved when the run reads the data (ExampleGen's driver and executor, the local pre-check),
never when the pipeline is compiled. No TensorFlow import unless the path is a URL.
"""

import dataclasses
import datetime
import glob
import itertools
import json
import os
import re

SPAN_PROPERTY = "span"  # Examples custom property (and property), as TFX's ExampleGen's
VERSION_PROPERTY = "version"
# Examples custom property: JSON [[span, version or null], ...], every span read, oldest first.
SPANS_PROPERTY = "spans"
# Examples custom property: the window the spans were read through (the data_spans setting).
WINDOW_PROPERTY = "span_window"
DEFAULT_WINDOW = "1"
# How a reason not to push starts when nothing newer than the served model's spans was read.
NOTHING_NEW = "nothing new"
# Beside each pushed version (components/pusher): {"spans": [[span, version], ...]} it was
# trained on, which a later push compares its spans with (`nothing_newer`).
SERVED_SPANS_FILE = os.path.join("assets.extra", "spans.json")
# ExampleGen's execution property where its driver puts the window it resolved (to_json).
RESOLVED_KEY = "resolved_spans"

_SPAN = re.compile(r"\{SPAN(?::(?P<width>[^}]*))?\}")
_VERSION = re.compile(r"\{VERSION(?::(?P<width>[^}]*))?\}")
_DATE_SPECS = ("{YYYY}", "{MM}", "{DD}")
_EPOCH = datetime.date(1970, 1, 1)


def is_pattern(path: str) -> bool:
    """Whether `path` holds a span or date spec (a version spec alone is refused later)."""
    return bool(_SPAN.search(path) or _VERSION.search(path)) or any(
        spec in path for spec in _DATE_SPECS
    )


def fixed_folder(pattern: str) -> str:
    """The folder above a pattern's first spec (`landing` of 'landing/span-{SPAN}/*.csv');
    a brace that is no spec stays part of the name."""
    starts = [m.start() for m in (_SPAN.search(pattern), _VERSION.search(pattern)) if m]
    starts += [pattern.index(spec) for spec in _DATE_SPECS if spec in pattern]
    return os.path.dirname(pattern[: min(starts)]) if starts else pattern


def span_of_date(date: datetime.date) -> int:
    return (date - _EPOCH).days


def date_of_span(span: int) -> datetime.date:
    return _EPOCH + datetime.timedelta(days=span)


def _width(match, pattern: str) -> int | None:
    text = match.group("width")
    if text is None:
        return None
    if not text.isdigit() or int(text) <= 0:
        raise ValueError(f"data path {pattern!r}: width {text!r} is not a positive integer")
    return int(text)


def _check_specs(pattern: str) -> bool:
    """Whether the pattern has a span spec (else a date); ValueError for specs TFX refuses."""
    spans = _SPAN.findall(pattern)
    versions = _VERSION.findall(pattern)
    dates = [pattern.count(spec) for spec in _DATE_SPECS]
    if spans and any(dates):
        raise ValueError(
            f"data path {pattern!r}: a date spec ({', '.join(_DATE_SPECS)}) cannot go with "
            "{SPAN}: give one or the other"
        )
    if len(spans) > 1 or len(versions) > 1:
        raise ValueError(f"data path {pattern!r}: {{SPAN}} and {{VERSION}} may appear once each")
    if any(dates) and dates != [1, 1, 1]:
        raise ValueError(
            f"data path {pattern!r}: a date needs {{YYYY}}, {{MM}} and {{DD}} once each"
        )
    if versions and not (spans or any(dates)):
        raise ValueError(f"data path {pattern!r}: {{VERSION}} needs {{SPAN}} or a date beside it")
    return bool(spans)


def _glob_and_regex(pattern: str) -> tuple[str, re.Pattern]:
    """The glob that lists candidates, and a regex capturing span (or year, month, day) and
    version from a path the glob found."""
    glob_parts, regex_parts, position = [], [], 0
    specs = [*_SPAN.finditer(pattern), *_VERSION.finditer(pattern)]
    specs += [re.search(re.escape(spec), pattern) for spec in _DATE_SPECS if spec in pattern]
    for match in sorted(specs, key=lambda m: m.start()):
        regex_parts.append(_glob_regex(pattern[position : match.start()]))
        glob_parts.append(pattern[position : match.start()])
        spec = match.group(0)
        name = {"{YYYY}": "year", "{MM}": "month", "{DD}": "day"}.get(spec)
        if name:
            digits = {"year": 4}.get(name, 2)
            regex_parts.append(f"(?P<{name}>[^/]{{{digits}}})")
            glob_parts.append("?" * digits)
        else:
            width = _width(match, pattern)
            name = "span" if spec.startswith("{SPAN") else "version"
            regex_parts.append(f"(?P<{name}>[^/]{{{width}}})" if width else f"(?P<{name}>[^/]*?)")
            glob_parts.append("?" * width if width else "*")
        position = match.end()
    glob_parts.append(pattern[position:])
    regex_parts.append(_glob_regex(pattern[position:]))
    return "".join(glob_parts), re.compile("".join(regex_parts))


def _glob_regex(text: str) -> str:
    """A glob fragment as a regex: `*` and `?` within one path component, `[...]` kept."""
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in text[i + 1 :]:
            end = text.index("]", i + 1)
            out.append(text[i : end + 1])
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _glob(pattern: str) -> list[str]:
    if "://" in pattern:
        import tensorflow as tf

        return tf.io.gfile.glob(pattern)
    return glob.glob(pattern)


def _is_dir(path: str) -> bool:
    if "://" in path:
        import tensorflow as tf

        return tf.io.gfile.isdir(path)
    return os.path.isdir(path)


@dataclasses.dataclass(frozen=True)
class Span:
    """One span as read: its number, version (None without a version spec) and the paths
    matched (files, or folders of *.csv files)."""

    number: int
    version: int | None
    paths: tuple[str, ...]
    dated: bool = False

    def files(self) -> list[str]:
        found = []
        for path in self.paths:
            found += sorted(_glob(os.path.join(path, "*.csv"))) if _is_dir(path) else [path]
        return found

    def describe(self) -> str:
        date = f" ({date_of_span(self.number).isoformat()})" if self.dated else ""
        version = "" if self.version is None else f" version {self.version}"
        return f"span {self.number}{date}{version}"


@dataclasses.dataclass(frozen=True)
class Window:
    """The spans a run reads, oldest first, from `pattern`."""

    pattern: str
    spans: tuple[Span, ...]

    @property
    def newest(self) -> Span:
        return self.spans[-1]

    def files(self) -> list[str]:
        return [path for span in self.spans for path in span.files()]

    def record(self) -> list[list]:
        """What the Examples artifact records (SPANS_PROPERTY): [[span, version], ...]."""
        return [[span.number, span.version] for span in self.spans]

    def describe(self) -> str:
        if len(self.spans) == 1:
            return self.newest.describe()
        return f"spans {self.spans[0].number}-{self.newest.number} ({len(self.spans)} spans)"


def _parse_bound(text: str, pattern: str) -> int:
    text = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return span_of_date(datetime.date.fromisoformat(text))
    if text.isdigit():
        return int(text)
    raise ValueError(
        f"data_spans {text!r}: a span number, or a date YYYY-MM-DD for a date pattern ({pattern!r})"
    )


def parse_window(text: str, pattern: str = "") -> tuple[int | None, tuple[int, int] | None]:
    """(newest N, None) for a rolling window `N`, (None, (first, last)) for `FIRST..LAST`;
    ValueError naming the setting for anything else."""
    text = str(text or DEFAULT_WINDOW).strip()
    if ".." in text:
        first, _, last = text.partition("..")
        bounds = (_parse_bound(first, pattern), _parse_bound(last, pattern))
        if bounds[0] > bounds[1]:
            raise ValueError(f"data_spans {text!r}: the first span is after the last")
        return None, bounds
    if text.isdigit() and int(text) >= 1:
        return int(text), None
    raise ValueError(
        f"data_spans {text!r}: give N (the newest N spans, e.g. 1 or 7) or FIRST..LAST "
        "(a fixed range of span numbers, or of dates YYYY-MM-DD)"
    )


def _match(path: str, regex: re.Pattern, dated: bool, pattern: str) -> tuple[int, int | None]:
    """(span, version) a found path holds; ValueError naming it when they are not numbers."""
    found = regex.fullmatch(path)
    if found is None:
        raise ValueError(f"{path} matches the glob of {pattern!r} but not its specs")
    groups = found.groupdict()
    try:
        if dated:
            span = span_of_date(
                datetime.date(int(groups["year"]), int(groups["month"]), int(groups["day"]))
            )
        else:
            span = int(groups["span"])
        version = int(groups["version"]) if groups.get("version") is not None else None
    except ValueError:
        raise ValueError(f"{path}: no span (or version) number where {pattern!r} has one") from None
    return span, version


def find_spans(pattern: str) -> list[Span]:
    """Every span `pattern` matches now, at its highest version, oldest first."""
    has_span = _check_specs(pattern)
    glob_pattern, regex = _glob_and_regex(pattern)
    found: dict[int, dict[int | None, list[str]]] = {}
    for path in _glob(glob_pattern):
        path = path.rstrip("/")
        span, version = _match(path, regex, not has_span, pattern)
        found.setdefault(span, {}).setdefault(version, []).append(path)
    spans = []
    for number in sorted(found):
        versions = found[number]
        version = max(versions, key=lambda v: -1 if v is None else v)
        spans.append(Span(number, version, tuple(sorted(versions[version])), not has_span))
    return spans


def resolve(pattern: str, window: str = DEFAULT_WINDOW) -> Window:
    """The spans `pattern` and `window` name now (module doc); ValueError when none does,
    or when their columns differ."""
    newest, bounds = parse_window(window, pattern)
    spans = find_spans(pattern)
    if not spans:
        raise ValueError(f"data path {pattern!r} matches nothing: no span found")
    if bounds is not None:
        chosen = [span for span in spans if bounds[0] <= span.number <= bounds[1]]
        if not chosen:
            raise ValueError(
                f"data path {pattern!r}: no span in {bounds[0]}..{bounds[1]}; spans found: "
                + ", ".join(str(span.number) for span in spans)
            )
        compared = chosen
    else:
        chosen = spans[-newest:]
        compared = spans[-newest - 1 :]  # with the span before the window
    _check_columns(compared, pattern)
    return Window(pattern, tuple(chosen))


def _header(span: Span) -> tuple[list[str] | None, str]:
    """The header of the first of `span`'s files with a line, and that file."""
    from components.example_gen.csv_text import read_header

    for path in span.files():
        header = read_header(path)
        if header is not None:
            return header, path
    return None, ""


def _check_columns(spans: list[Span], pattern: str) -> None:
    """Every span has its predecessor's columns; ValueError naming both spans otherwise."""
    if len(spans) < 2:
        return
    previous, previous_path = _header(spans[0])
    for before, span in itertools.pairwise(spans):
        header, path = _header(span)
        if header is None:
            raise ValueError(f"{span.describe()} of {pattern!r} has no CSV file with a line")
        if previous is not None and sorted(header) != sorted(previous):
            lost = [c for c in previous if c not in header]
            new = [c for c in header if c not in previous]
            change = "; ".join(
                part
                for part in (
                    lost and "without " + ", ".join(lost),
                    new and "with new " + ", ".join(new),
                )
                if part
            )
            raise ValueError(
                f"{span.describe()} ({path}) has other columns than {before.describe()} "
                f"({previous_path}): {change}. If the change is meant, run once with data_spans "
                f"{span.number}..{span.number}, after which a rolling window reads on from it"
            )
        previous, previous_path = header, path


def resolved_files(data_path: str, window: str = DEFAULT_WINDOW) -> list[str] | str:
    """The CSV files a span pattern's window holds now, or `data_path` itself when it is no
    pattern or is not readable here (a URL: the pre-check then does not read it)."""
    if not is_pattern(data_path) or "://" in data_path:
        return data_path
    return resolve(data_path, window).files()


def to_json(window: Window) -> str:
    """The window as the driver hands it to the executor: its spans and their paths."""
    return json.dumps(
        {
            "pattern": window.pattern,
            "spans": [[s.number, s.version, list(s.paths), s.dated] for s in window.spans],
        }
    )


def from_json(text: str) -> Window:
    found = json.loads(text)
    spans = (
        Span(number, version, tuple(paths), dated)
        for number, version, paths, dated in found["spans"]
    )
    return Window(found["pattern"], tuple(spans))


def is_rolling(window: str) -> bool:
    """Whether `window` is the newest N spans (not a fixed range)."""
    return parse_window(window)[1] is None


def _newest(record: list[list]) -> tuple[int, int]:
    number, version = record[-1]
    return number, -1 if version is None else version


def nothing_newer(read: list[list], trained: list[list]) -> bool:
    """Whether spans `read` ([[span, version], ...]) hold nothing newer than `trained`: their
    newest span (and version) is not above `trained`'s."""
    return bool(read and trained) and _newest(read) <= _newest(trained)


def copy_spans(source, target) -> None:
    """`source`'s span records (`span`, `version`, `spans`: ExampleGen's) onto `target`, an
    artifact made from it, as TFX's StatisticsGen passes the span on."""
    for name in (SPAN_PROPERTY, VERSION_PROPERTY):
        if source.has_custom_property(name):
            target.set_int_custom_property(name, source.get_int_custom_property(name))
    if source.has_custom_property(SPANS_PROPERTY):
        target.set_string_custom_property(
            SPANS_PROPERTY, source.get_string_custom_property(SPANS_PROPERTY)
        )


def describe_recorded(artifact) -> str:
    """The spans an artifact records (`copy_spans`) in words: "span 3", "spans 2-3 (the
    newest, 3, version 2)"; "" for data with no spans."""
    if not artifact.has_custom_property(SPANS_PROPERTY):
        return ""
    read = json.loads(artifact.get_string_custom_property(SPANS_PROPERTY))
    if not read:
        return ""
    number, version = read[-1]
    text = f"span {number}" if len(read) == 1 else f"spans {read[0][0]}-{number}"
    return text + ("" if version is None else f" (version {version})")
