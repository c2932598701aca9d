"""Self-contained HTML pages of mismatches: the failure text, its frames and its plot, embedded.

:func:`render_page` lays out a list of :class:`Mismatch` entries, each with
its failure text and the plot of its diverging fields as a base64 PNG, so the
page needs no other file: the pytest plugin's ``--goldens-report`` and
``gym-goldens plot -o out.html`` both write one with :func:`write_page`.
"""

from __future__ import annotations

import base64
import dataclasses
import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from gym_goldens.format.files import atomic_write_bytes
from gym_goldens.present.text import printable

__all__ = ["Mismatch", "render_page", "write_page"]

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
.status.nondeterministic { background: #8250df; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; font-size: 13px; }
dt { color: #57606a; }
dd { margin: 0; font-family: ui-monospace, Menlo, monospace; word-break: break-all; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 12px;
      white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12.5px; line-height: 1.45; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; border-radius: 6px; }
.note { color: #57606a; font-size: 13px; }
.ok { font-size: 16px; color: #1a7f37; }
.frames { display: flex; flex-wrap: wrap; gap: 16px; margin: 12px 0; }
.frames figure { margin: 0; text-align: center; }
.frames img { image-rendering: pixelated; min-width: 192px; background: #fff; }
.frames figcaption { font-size: 13px; color: #57606a; }
"""


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """One recording that did not match its golden, as the page shows it.

    Attributes:
        title: What failed, such as the test's node id.
        status: ``failed``, ``missing`` or ``nondeterministic`` (shown as a badge;
            empty for none).
        message: The failure text.
        details: Label and value pairs shown above the text (recording,
            golden, actual recording, plot).
        plot_png: The plot of the diverging fields, as PNG bytes.
        note: A line shown instead of the plot when there is none.
        images: Pictures shown side by side above the plot, as ``(label,
            PNG bytes)``: the golden, actual and diff images of a frame.
    """

    title: str
    status: str
    message: str
    details: tuple[tuple[str, str], ...] = ()
    plot_png: bytes | None = None
    note: str | None = None
    images: tuple[tuple[str, bytes], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain data, to travel on a test report (and across xdist)."""
        return {
            "title": self.title,
            "status": self.status,
            "message": self.message,
            "details": [list(pair) for pair in self.details],
            "plot_png": base64.b64encode(self.plot_png).decode("ascii") if self.plot_png else None,
            "note": self.note,
            "images": [[name, base64.b64encode(png).decode("ascii")] for name, png in self.images],
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
            images=tuple(
                (str(label), base64.b64decode(png)) for label, png in data.get("images") or ()
            ),
        )


def write_page(path: Path, page: str) -> Path:
    """Write a page so that a reader sees the old file or the new one, never half.

    Written as goldens are (:func:`~gym_goldens.format.files.atomic_write_bytes`):
    to a temporary file created exclusively beside it, never through a link
    planted by its name, then renamed over ``path``. The page gets the usual
    permissions (the umask's), so a browser or a CI upload step run by
    another user can read it.

    Raises:
        GoldenWriteError: The file system refused (a folder named like the
            page, a read-only folder); ``path`` is as it was.
    """
    atomic_write_bytes(path, page.encode("utf-8"))
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
    escape = _html
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


def _html(text: str) -> str:
    """Text as HTML: its markup escaped, and no control character left raw in it."""
    return html.escape(printable(text))


def _section(number: int, mismatch: Mismatch) -> str:
    escape = _html
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
    if mismatch.images:
        parts.append('<div class="frames">')
        for label, png in mismatch.images:
            encoded = base64.b64encode(png).decode("ascii")
            parts.append(
                f'<figure><img alt="{escape(label)}: {escape(mismatch.title)}" '
                f'src="data:image/png;base64,{encoded}"><figcaption>{escape(label)}</figcaption>'
                "</figure>"
            )
        parts.append("</div>")
    if mismatch.plot_png:
        encoded = base64.b64encode(mismatch.plot_png).decode("ascii")
        alt = f"golden vs actual, diverging fields: {mismatch.title}"
        parts.append(f'<img alt="{escape(alt)}" src="data:image/png;base64,{encoded}">')
    elif mismatch.note:
        parts.append(f'<p class="note">{escape(mismatch.note)}</p>')
    parts.append("</section>")
    return "\n".join(parts)
