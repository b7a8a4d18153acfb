"""The trace viewer of a run directory: its sizes, its load times in headless Chromium, screenshots.

    PYTHONPATH=. python benchmarks/viewer_pages.py RUN_DIR                  # sizes and load times
    PYTHONPATH=. python benchmarks/viewer_pages.py RUN_DIR --loads 5
    PYTHONPATH=. python benchmarks/viewer_pages.py RUN_DIR --screenshots docs/images

Writes RUN_DIR/viewer/ (timing `write_viewer`), then prints the sizes of index.html, the index's
data file, the assets, the decision files (count, total, largest) and the whole folder. Then it
opens, in one headless Chromium with a fresh profile, `--loads` times each: index.html, the
decision page of the largest decision record, and the side-by-side page of that ticker and day.
Each load is timed by the page's Navigation Timing (`loadEventEnd`) and by the page's own
`viewer-ready` mark (performance.mark: the table and chart drawn, or the trace drawn); the first
load of a page runs without any code cache, the later ones with Chromium's caches warm. Load
times depend on the machine and its load: compare them within one run of this script.

With --screenshots DIR: PNG screenshots of the index (its chart on --ma and the last ticker), of the busiest decision page (most tool
calls, else most LLM calls) of --sa and of --ma, quantised to 256 colours to stay small.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pandas as pd

from metrics.viewer.browser import headless_chromium, page_url
from metrics.viewer.site import write_viewer

READY = "return performance.getEntriesByName('viewer-ready').length > 0"
TIMES = """const n = performance.getEntriesByType('navigation')[0];
const ready = performance.getEntriesByName('viewer-ready')[0];
const table = performance.getEntriesByName('table-ready')[0];
return {load_ms: n.loadEventEnd, ready_ms: ready.startTime, table_ms: table ? table.startTime : null};"""


def size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder."""
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def read_data(path: Path):
    """The data of a viewer data file `TD.put(name,data);`."""
    text = path.read_text(encoding="ascii")
    return json.loads(text[text.index(",") + 1:-len(");\n")])


def sizes(folder: Path) -> dict[str, object]:
    """Bytes of the viewer's parts; the decisions' data files counted and their largest."""
    decisions = list((folder / "data" / "decisions").rglob("*.js"))
    return {"index.html": size(folder / "index.html"), "data/index.js": size(folder / "data" / "index.js"),
            "data/run.js": size(folder / "data" / "run.js"), "assets": size(folder / "assets"),
            "decision files": len(decisions), "decision files total": sum(p.stat().st_size for p in decisions),
            "largest decision file": max((p.stat().st_size for p in decisions), default=0), "viewer": size(folder)}


def wait_ready(driver, timeout_s: float = 60.0) -> None:
    start = time.perf_counter()
    while not driver.execute_script(READY):
        if time.perf_counter() - start > timeout_s:
            raise TimeoutError(f"{driver.current_url}: no viewer-ready mark after {timeout_s:.0f} s")
        time.sleep(0.02)


def busiest(run_dir: Path, framework: str) -> pd.Series:
    """The decision of `framework` with the most tool calls (then LLM calls), first by date."""
    table = pd.read_parquet(run_dir / "decisions.parquet")
    mine = table[table["framework"] == framework]
    if mine.empty:
        raise SystemExit(f"error: {run_dir}: no decisions of {framework}")
    return mine.sort_values(["tool_calls", "llm_calls", "date"], ascending=[False, False, True]).iloc[0]


def screenshot(driver, url: str, path: Path, width: int, max_height: int) -> None:
    """A PNG of the page at `url`, as tall as its content up to `max_height`, quantised to 256 colours."""
    from PIL import Image

    driver.set_window_size(width, 900)
    driver.get(url)
    wait_ready(driver)
    time.sleep(0.3)
    height = min(max_height, driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(width, height)
    time.sleep(0.3)
    driver.save_screenshot(str(path))
    Image.open(path).convert("RGB").quantize(colors=256).save(path, optimize=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--loads", type=int, default=3, help="loads of each page (the first is cold)")
    parser.add_argument("--screenshots", type=Path, default=None, help="write index.png, single_agent.png, multi_agent.png here")
    parser.add_argument("--sa", default="single_agent", help="framework of the single-agent screenshot")
    parser.add_argument("--ma", default="multi_agent", help="framework of the multi-agent screenshot")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    index = write_viewer(args.run_dir)
    written_s = time.perf_counter() - started
    folder = index.parent
    print(f"write_viewer: {written_s:.2f} s")
    print(json.dumps(sizes(folder), indent=1))

    meta = read_data(folder / "data" / "run.js")
    largest_file = max((folder / "data" / "decisions").rglob("*.js"), key=lambda p: p.stat().st_size)
    records = read_data(largest_file)
    largest = max(records.values(), key=lambda record: len(json.dumps(record)))["summary"]
    names = {"framework": largest["framework"], "ticker": largest["ticker"]}
    date, seed = largest["date"], str(largest["seed"])
    pages = {
        "index": page_url(index),
        "decision (largest record)": page_url(folder / "decision.html", **names, date=date, seed=seed),
        "side by side": page_url(folder / "compare.html", ticker=names["ticker"], date=date, a=names["framework"],
                                 seed=seed),
    }
    with headless_chromium() as driver:
        for name, url in pages.items():
            for load in range(args.loads):
                driver.get(url)
                wait_ready(driver)
                times = driver.execute_script(TIMES)
                table = f", table drawn {times['table_ms']:.0f} ms" if times["table_ms"] is not None else ""
                print(f"{name} load {load + 1}{' (cold)' if load == 0 else ''}: load event {times['load_ms']:.0f} ms, "
                      f"ready {times['ready_ms']:.0f} ms{table}")
        if args.screenshots:
            args.screenshots.mkdir(parents=True, exist_ok=True)
            chart = {"framework": args.ma, "ticker": meta["tickers"][-1]["name"]}  # the debate trades: fills, shares
            screenshot(driver, page_url(index, **chart), args.screenshots / "viewer_index.png", 1400, 1500)
            for framework_name, file_name in ((args.sa, "viewer_single_agent.png"), (args.ma, "viewer_multi_agent.png")):
                row = busiest(args.run_dir, framework_name)
                url = page_url(folder / "decision.html", framework=framework_name, ticker=row["ticker"],
                               date=f"{row['date']:%Y-%m-%d}", seed=str(row["seed"]))
                screenshot(driver, url, args.screenshots / file_name, 1400, 2600)
            for path in sorted(args.screenshots.glob("viewer_*.png")):
                print(f"{path}: {path.stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
