"""Write the viewer into ``RUN_DIR/viewer/``: three static pages, their scripts, and the data.

    viewer/index.html        charts per framework x ticker, the decisions table
    viewer/decision.html     one decision's trace (?framework=..&ticker=..&date=..&seed=..)
    viewer/compare.html      one ticker and day, two frameworks side by side (?ticker=..&date=..&a=..&b=..)
    viewer/assets/           plotly.min.js (from the plotly package), viewer.css, the pages' scripts
    viewer/data/run.js       the run's facts (`export.ViewerData.meta`)
    viewer/data/index.js     the table's columns and the charts' series
    viewer/data/decisions/<framework>/<ticker>/<date>_s<seed>.js   one decision each, loaded lazily

Browsers refuse ``fetch()`` of local files from a page opened from disk, so every data file is
a script that hands its JSON to ``TD.put(name, data)`` and is loaded with a ``<script>`` tag:
the pages open from ``file://`` with no server and no network. All text of the run reaches the
page as JSON data and is put there with ``textContent`` (never as HTML); the pages' own
strings go through Jinja2 with autoescaping.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from plotly.offline import get_plotlyjs

from harness.run_directory import load_run
from metrics.viewer.export import ViewerData, build

VIEWER_DIR = "viewer"
PAGES = ("index", "decision", "compare")
ASSETS = ("viewer.css", "viewer.js", "index.js", "decision.js", "compare.js")


def data_script(name: str, data: Any) -> str:
    """The text of a data file: one call `TD.put(name, data)` with `data` as JSON (ASCII only,
    so that no byte of model output can change the file's encoding; a NaN stays NaN, which is
    JavaScript)."""
    return f"TD.put({json.dumps(name)}, {json.dumps(data, separators=(',', ':'))});\n"


def _write_data(folder: Path, name: str, data: Any) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data_script(name, data), encoding="ascii")


def _pages(data: ViewerData) -> dict[str, str]:
    """Each page's HTML from its Jinja2 template."""
    environment = Environment(loader=PackageLoader("metrics.viewer"), autoescape=select_autoescape(["html", "j2"]),
                              trim_blocks=True, lstrip_blocks=True)
    window = data.meta["test_window"] or ["", ""]
    title = f"TradeDuel · {data.meta['suite'] or 'run'} · {window[0]} .. {window[1]}"
    return {page: environment.get_template(f"{page}.html.j2").render(title=title, meta=data.meta, page=page)
            for page in PAGES}


def write_site(folder: Path, data: ViewerData) -> Path:
    """Write the viewer of `data` into `folder` (emptied first); returns index.html's path."""
    if folder.exists():
        shutil.rmtree(folder)
    assets = folder / "assets"
    assets.mkdir(parents=True)
    (assets / "plotly.min.js").write_text(get_plotlyjs(), encoding="utf-8")
    static = resources.files("metrics.viewer") / "static"
    for name in ASSETS:
        (assets / name).write_text(static.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    for page, html in _pages(data).items():
        (folder / f"{page}.html").write_text(html, encoding="utf-8")
    _write_data(folder, "data/run.js", data.meta)
    _write_data(folder, "data/index.js", data.index)
    for path, record in data.decisions:
        _write_data(folder, path, record)
    return folder / "index.html"


def write_viewer(run_dir: Path | str) -> Path:
    """Write ``RUN_DIR/viewer/`` from the run directory's files; returns index.html's path."""
    run_dir = Path(run_dir)
    return write_site(run_dir / VIEWER_DIR, build(load_run(run_dir)))
