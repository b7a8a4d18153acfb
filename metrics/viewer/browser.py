"""Headless Chromium driven by Selenium, for the viewer's browser tests, screenshots and load times.

Needs the `dev` extra (selenium) and Debian's ``chromium`` and ``chromium-driver`` packages
(``/usr/bin/chromium``, ``/usr/bin/chromedriver``; other paths through ``$CHROMIUM`` and
``$CHROMEDRIVER``). The driver's path is handed to Selenium, so Selenium Manager never tries to
download one, and Chromium starts with a fresh profile and its background networking off (on a
machine without network it would otherwise wait on it).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars")


def executables() -> tuple[str | None, str | None]:
    """The Chromium and chromedriver executables ($CHROMIUM, $CHROMEDRIVER, else on the PATH); None where missing."""
    return (os.environ.get("CHROMIUM") or shutil.which("chromium"),
            os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver"))


@contextmanager
def headless_chromium(width: int = 1400, height: int = 1000) -> Iterator["WebDriver"]:
    """A Selenium driver of a headless Chromium with a `width` x `height` window, quit on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = executables()
    if chromium is None or driver_path is None:
        raise RuntimeError("headless Chromium needs Debian's chromium and chromium-driver: "
                           "apt-get install -y chromium chromium-driver")
    with tempfile.TemporaryDirectory(prefix="tradeduel-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console, for driver.get_log("browser")
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def page_url(path: Path, **query: str) -> str:
    """The file:// address of a page, with a query string."""
    from urllib.parse import urlencode

    url = Path(path).resolve().as_uri()
    return f"{url}?{urlencode(query)}" if query else url
