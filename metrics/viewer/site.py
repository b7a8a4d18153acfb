"""Write the viewer into ``RUN_DIR/viewer/``: three static pages, their scripts, and the data.

    viewer/index.html        charts per framework x ticker, the decisions table
    viewer/decision.html     one decision's trace (?framework=..&ticker=..&date=..&seed=..)
    viewer/compare.html      one ticker and day, two frameworks side by side (?ticker=..&date=..&a=..&b=..)
    viewer/assets/           plotly.min.js (from the plotly package), viewer.css, the pages' scripts
    viewer/data/run.js       the run's facts (`export.ViewerData.meta`)
    viewer/data/index.js     the table's columns and the charts' series
    viewer/data/decisions/<framework>/<ticker>/s<seed>_<chunk>.js   the decisions, a few per file, loaded lazily

Browsers refuse ``fetch()`` of local files from a page opened from disk, so every data file is
a script that hands its JSON to ``TD.put(name, data)`` and is loaded with a ``<script>`` tag:
the pages open from ``file://`` with no server and no network. The decisions of one episode
go into files of `chunk` consecutive bars each (chunk i holds bars i·chunk .. (i+1)·chunk − 1
of the ticker's dates), `chunk` per framework: as many decisions as fit in `CHUNK_BYTES` on the
framework's mean record size, 1 to `MAX_CHUNK` (a decision page loads one file of about
`CHUNK_BYTES` or less, one larger record aside; a run of thousands of decisions writes hundreds
of files, not thousands). All text of the run reaches the page as JSON data and is put there
with ``textContent`` (never as HTML); the pages' own strings go through Jinja2 with
autoescaping.
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
from metrics.viewer.export import DecisionRecord, ViewerData, build

VIEWER_DIR = "viewer"
PAGES = ("index", "decision", "compare")
ASSETS = ("viewer.css", "viewer.js", "index.js", "decision.js", "compare.js")
CHUNK_BYTES = 200_000
"""Bytes of decision records a data file aims at (on its framework's mean record size)."""
MAX_CHUNK = 64
"""Most decisions in one data file."""


def as_json(data: Any) -> str:
    """Compact JSON, ASCII only (no byte of model output can change a file's encoding); a NaN
    stays NaN, which is JavaScript."""
    return json.dumps(data, separators=(",", ":"))


def data_script(name: str, data_json: str) -> str:
    """The text of a data file: one call `TD.put(name, data)`, `data_json` being the data as JSON."""
    return f"TD.put({json.dumps(name)},{data_json});\n"


def chunk_path(framework: int, ticker: int, seed: int, chunk: int) -> str:
    """The data file of one chunk of an episode's decisions (viewer.js builds the same name)."""
    return f"data/decisions/{framework}/{ticker}/s{seed}_{chunk}.js"


def chunk_sizes(dumped: list[tuple[DecisionRecord, str]], frameworks: int) -> list[int]:
    """Decisions per data file of each framework: CHUNK_BYTES / its mean record size, within 1 .. MAX_CHUNK."""
    totals, counts = [0] * frameworks, [0] * frameworks
    for decision, text in dumped:
        totals[decision.framework] += len(text)
        counts[decision.framework] += 1
    return [max(1, min(MAX_CHUNK, CHUNK_BYTES * n // total)) if total else MAX_CHUNK
            for total, n in zip(totals, counts)]


def _write(folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="ascii")


def _write_decisions(folder: Path, data: ViewerData) -> list[int]:
    """Write the decisions' data files, each `{date: record, ...}`; returns each framework's chunk size."""
    dumped = [(decision, as_json(decision.record)) for decision in data.decisions]
    sizes = chunk_sizes(dumped, len(data.meta["frameworks"]))
    chunks: dict[str, list[str]] = {}
    for decision, text in dumped:
        name = chunk_path(decision.framework, decision.ticker, decision.seed, decision.bar // sizes[decision.framework])
        chunks.setdefault(name, []).append(f"{json.dumps(decision.record['summary']['date'])}:{text}")
    for name, records in chunks.items():
        _write(folder, name, data_script(name, "{" + ",".join(records) + "}"))
    return sizes


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
    sizes = _write_decisions(folder, data)
    meta = {**data.meta, "frameworks": [{**f, "chunk": sizes[f["index"]]} for f in data.meta["frameworks"]]}
    _write(folder, "data/run.js", data_script("data/run.js", as_json(meta)))
    _write(folder, "data/index.js", data_script("data/index.js", as_json(data.index)))
    return folder / "index.html"


def write_viewer(run_dir: Path | str) -> Path:
    """Write ``RUN_DIR/viewer/`` from the run directory's files; returns index.html's path."""
    run_dir = Path(run_dir)
    return write_site(run_dir / VIEWER_DIR, build(load_run(run_dir)))
