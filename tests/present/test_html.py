"""The HTML page: data that survives the trip from an xdist worker, escaped markup."""

from __future__ import annotations

import base64
import json
import os
import re
import stat
from pathlib import Path

from gym_goldens.present.html import Mismatch, render_page, write_page

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def test_a_mismatch_travels_as_plain_json_data() -> None:
    mismatch = Mismatch(
        title="tests/test_x.py::test_y[a]",
        status="failed",
        message="golden mismatch: ...\n  first divergence: ...",
        details=(("recording", "CartPole-v1"), ("golden", "goldens/x")),
        plot_png=PNG,
    )
    data = json.loads(json.dumps(mismatch.to_json()))
    assert Mismatch.from_json(data) == mismatch
    assert (
        Mismatch.from_json(Mismatch(title="t", status="missing", message="m").to_json()).plot_png
        is None
    )


def test_the_page_escapes_everything_it_shows() -> None:
    mismatch = Mismatch(
        title='test_x[<img src=x onerror="alert(1)">]',
        status="failed",
        message="golden 'a<b'  actual \"a&b\"",
        details=(("golden", "goldens/<x>"),),
        plot_png=PNG,
    )
    page = render_page("a <title>", ["<intro>"], [mismatch, mismatch], empty="none")
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "golden &#x27;a&lt;b&#x27;  actual &quot;a&amp;b&quot;" in page
    assert "<title>a &lt;title&gt;</title>" in page
    assert "<p>&lt;intro&gt;</p>" in page
    assert page.count(f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"') == 2
    assert page.count("<li>") == 2  # a table of contents for more than one entry


def test_an_empty_page_says_why() -> None:
    page = render_page("report", [], [], empty="Every recorded trajectory matched its golden.")
    assert '<p class="ok">Every recorded trajectory matched its golden.</p>' in page
    assert "<nav>" not in page


def test_a_note_stands_in_for_a_missing_plot() -> None:
    page = render_page("r", [], [Mismatch("t", "failed", "m", note="no plot: <reason>")], empty="")
    assert '<p class="note">no plot: &lt;reason&gt;</p>' in page
    assert "<img" not in page


def test_write_page_replaces_the_file_with_the_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "report" / "index.html"
    write_page(target, "old")
    write_page(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert [p.name for p in target.parent.iterdir()] == ["index.html"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_a_mismatch_s_frames_travel_and_show_as_images_side_by_side() -> None:
    frames = (("golden", PNG), ("actual", PNG[:-1]), ("diff", PNG[:-2]))
    mismatch = Mismatch(title="t", status="failed", message="m", images=frames)
    data = json.loads(json.dumps(mismatch.to_json()))
    assert Mismatch.from_json(data) == mismatch
    page = render_page("p", [], [mismatch], empty="none")
    shown = [
        base64.b64decode(src)
        for src in re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([^"]+)"', page)
    ]
    assert shown == [png for _, png in frames]
    assert [f"<figcaption>{label}</figcaption>" in page for label, _ in frames] == [True] * 3
