"""python -m metrics.viewer RUN_DIR [--serve] [--port N]: write (and serve) a run's viewer."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.errors import ConfigError, DataError, one_line
from metrics.viewer.serve import serve
from metrics.viewer.site import write_viewer


def main(argv: list[str] | None = None) -> int:
    """Write RUN_DIR/viewer/; exit code 2 with one `error:` line when the run directory is unusable."""
    parser = argparse.ArgumentParser(prog="python -m metrics.viewer",
                                     description="Write a run directory's trace viewer into RUN_DIR/viewer/.")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--serve", action="store_true", help="then serve it on 127.0.0.1 until Ctrl-C")
    parser.add_argument("--port", type=int, default=8000, help="port for --serve (0: any free port; default 8000)")
    args = parser.parse_args(argv)
    try:
        index = write_viewer(args.run_dir)
    except (DataError, ConfigError) as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        return 2
    print(f"wrote {index} (open it from disk, no server needed)")
    if args.serve:
        serve(index.parent, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
