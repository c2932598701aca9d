"""One self-contained HTML page with every golden mismatch of a session.

``pytest --goldens-report=DIR`` writes ``DIR/index.html``: the artifact a CI
job uploads. Each mismatch shows the failure text and the plot of its
diverging fields, embedded as a base64 PNG, so the page needs no other file.

The data travels on test reports (the ``gym_goldens_mismatches`` attribute,
plain strings), so the page is the same whether tests ran in this process or
on pytest-xdist workers: workers attach it, the controller writes the page.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import html
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from gym_goldens.check import CheckResult

__all__ = [
    "MISMATCH_ATTRIBUTE",
    "REPORT_FILE",
    "HtmlReport",
    "Mismatch",
    "mismatches_of",
    "render_page",
    "write_page",
]

MISMATCH_ATTRIBUTE: Final = "gym_goldens_mismatches"
"""The test report attribute that carries the mismatches of a test, as dicts."""

REPORT_FILE: Final = "index.html"

_REPORTED: Final = frozenset({"failed", "missing"})

_STYLE: Final = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1b1f24;
       background: #f6f8fa; }
header { background: #24292f; color: #fff; padding: 18px 32px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; color: #c9d1d9; font-size: 14px; }
main { max-width: 1100px; margin: 0 auto; padding: 16px 32px 48px; }
nav ol { padding-left: 22px; line-height: 1.7; }
nav a, h2 a { color: #0550ae; text-decoration: none; }
section { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; margin: 22px 0;
          padding: 4px 20px 18px; }
h2 { font-size: 16px; font-family: ui-monospace, "SFMono-Regular", Menlo, monospace;
     word-break: break-all; }
.status { display: inline-block; font: 600 12px system-ui, sans-serif; border-radius: 10px;
          padding: 1px 8px; margin-right: 8px; color: #fff; background: #cf222e;
          vertical-align: 2px; }
.status.missing { background: #9a6700; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; font-size: 13px; }
dt { color: #57606a; }
dd { margin: 0; font-family: ui-monospace, Menlo, monospace; word-break: break-all; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 12px;
      overflow-x: auto; font-size: 12.5px; line-height: 1.45; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; border-radius: 6px; }
.note { color: #57606a; font-size: 13px; }
.ok { font-size: 16px; color: #1a7f37; }
"""


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """One recording that did not match its golden, as the page shows it.

    Attributes:
        title: What failed, such as the test's node id.
        status: ``failed`` or ``missing`` (shown as a badge; empty for none).
        message: The failure text.
        details: Label and value pairs shown above the text (recording,
            golden, actual recording, plot).
        plot_png: The plot of the diverging fields, as PNG bytes.
        note: A line shown instead of the plot when there is none.
    """

    title: str
    status: str
    message: str
    details: tuple[tuple[str, str], ...] = ()
    plot_png: bytes | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain data, to travel on a test report (and across xdist)."""
        return {
            "title": self.title,
            "status": self.status,
            "message": self.message,
            "details": [list(pair) for pair in self.details],
            "plot_png": base64.b64encode(self.plot_png).decode("ascii") if self.plot_png else None,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Mismatch:
        """Read back what :meth:`to_json` wrote."""
        plot = data.get("plot_png")
        return cls(
            title=str(data["title"]),
            status=str(data["status"]),
            message=str(data["message"]),
            details=tuple((str(label), str(value)) for label, value in data.get("details") or ()),
            plot_png=base64.b64decode(plot) if plot else None,
            note=data.get("note"),
        )


def mismatches_of(
    nodeid: str, results: Iterable[CheckResult], display: Callable[[Path], str]
) -> list[dict[str, Any]]:
    """The report data of a test's failed and missing recordings."""
    found = []
    for result in results:
        if result.status not in _REPORTED or result.message is None:
            continue
        details = [("recording", result.name), ("golden", display(result.golden_dir))]
        if result.actual_dir is not None:
            details.append(("actual recording", display(result.actual_dir)))
        plot_png = note = None
        if result.plot is not None:
            try:
                plot_png = result.plot.read_bytes()
                details.append(("plot", display(result.plot)))
            except OSError as error:
                note = f"the plot {display(result.plot)} could not be read ({error.strerror})"
        elif result.status == "failed":
            note = "no plot: no numeric field diverges, or matplotlib is not installed"
        mismatch = Mismatch(nodeid, result.status, result.message, tuple(details), plot_png, note)
        found.append(mismatch.to_json())
    return found


def write_page(path: Path, page: str) -> Path:
    """Write a page so that a reader sees the old file or the new one, never half.

    Unlike goldens, the page gets the usual permissions (the umask's), so a
    browser or a CI upload step run by another user can read it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(page, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def render_page(
    title: str, intro: Sequence[str], mismatches: Sequence[Mismatch], *, empty: str
) -> str:
    """A self-contained HTML page listing ``mismatches``.

    Args:
        title: The page title.
        intro: Lines under the title.
        mismatches: The entries.
        empty: What the page says when there are none.
    """
    escape = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<header><h1>{escape(title)}</h1>",
        *(f"<p>{escape(line)}</p>" for line in intro),
        "</header><main>",
    ]
    if not mismatches:
        parts.append(f'<p class="ok">{escape(empty)}</p>')
    elif len(mismatches) > 1:
        parts.append("<nav><ol>")
        parts += [
            f'<li><a href="#m{number}">{escape(m.title)}</a> '
            f'<span class="note">{escape(m.status)}</span></li>'
            for number, m in enumerate(mismatches, 1)
        ]
        parts.append("</ol></nav>")
    for number, mismatch in enumerate(mismatches, 1):
        parts.append(_section(number, mismatch))
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def _section(number: int, mismatch: Mismatch) -> str:
    escape = html.escape
    status = escape(mismatch.status)
    badge = f'<span class="status {status}">{status}</span>' if status else ""
    parts = [
        f'<section id="m{number}">',
        f'<h2>{badge}<a href="#m{number}">{escape(mismatch.title)}</a></h2>',
    ]
    if mismatch.details:
        parts.append("<dl>")
        parts += [
            f"<dt>{escape(label)}</dt><dd>{escape(value)}</dd>" for label, value in mismatch.details
        ]
        parts.append("</dl>")
    parts.append(f"<pre>{escape(mismatch.message)}</pre>")
    if mismatch.plot_png:
        encoded = base64.b64encode(mismatch.plot_png).decode("ascii")
        alt = f"golden vs actual, diverging fields: {mismatch.title}"
        parts.append(f'<img alt="{escape(alt)}" src="data:image/png;base64,{encoded}">')
    elif mismatch.note:
        parts.append(f'<p class="note">{escape(mismatch.note)}</p>')
    parts.append("</section>")
    return "\n".join(parts)


class HtmlReport:
    """The plugin object behind ``--goldens-report``: gathers, then writes the page.

    Registered on the controller only; on pytest-xdist workers the mismatches
    travel to it on the test reports.

    Args:
        report_dir: The folder that receives ``index.html``.
        display: Turns a path into the text shown.
    """

    def __init__(self, report_dir: Path, display: Callable[[Path], str] = str) -> None:
        self.path = report_dir / REPORT_FILE
        self.display = display
        self.mismatches: list[Mismatch] = []
        self.tests = 0
        self.written = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.tests += 1
        for data in getattr(report, MISMATCH_ATTRIBUTE, ()):
            self.mismatches.append(Mismatch.from_json(data))

    def pytest_sessionfinish(self) -> None:
        count = len(self.mismatches)
        noun = "mismatch" if count == 1 else "mismatches"
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        page = render_page(
            f"gym-goldens: {count} golden {noun}",
            [f"{self.tests} test{'' if self.tests == 1 else 's'} ran; report written {now}."],
            sorted(self.mismatches, key=lambda m: m.title),
            empty="Every recorded trajectory matched its golden.",
        )
        write_page(self.path, page)
        self.written = True

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.written:
            terminalreporter.write_sep("-", f"gym-goldens report: {self.display(self.path)}")
