"""The trace viewer: a static site in ``RUN_DIR/viewer/`` that shows why each decision was made.

    python -m metrics.viewer RUN_DIR            # write RUN_DIR/viewer/ (every run does, unless viewer=false)
    python -m metrics.viewer RUN_DIR --serve    # ... and serve it on 127.0.0.1

`index.html` draws, per framework x ticker, the price with each decision and fill marked, the
shares held and the equity curve, above a table of every decision (filtered and sorted by
framework, ticker, date, action, regime label, right/wrong, fallbacks, parse failures,
look-ahead flags, tokens, latency, wall time). `decision.html` shows one decision's whole
trace in reading order, the raw model text beside what was parsed from it; `compare.html`
two frameworks on the same ticker and day. The pages open from disk (``file://``) without a
server or network: plotly's script is written beside them, the data is in script files loaded
with ``<script>`` tags, a decision's file (a few consecutive decisions of one episode) loaded
only when its page opens.

Parts: `export` (the data, from the run directory's readers and the journal), `reading_order`
(a trace as the blocks of a decision page), `site` (templates, assets, data files), `serve`
(the local server), `browser` (headless Chromium, for tests and measurements).
"""

from metrics.viewer.site import write_viewer

__all__ = ["write_viewer"]
