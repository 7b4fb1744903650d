"""A headless Chromium driven by Selenium through Debian's chromedriver, for the console tests.

Tests skip cleanly where chromium or chromedriver is missing (scripts/test.sh installs both)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PHONE = (390, 844)
LAPTOP = (1366, 900)


def _paths() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium "
                    "chromium-driver)")
    return chromium, driver


@contextmanager
def chrome(size: tuple[int, int] = PHONE) -> Iterator:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    chromium, driver = _paths()
    profile = tempfile.mkdtemp(prefix="bunco-chrome-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        resize(browser, size)
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


def resize(browser, size: tuple[int, int]) -> None:
    """Make the page's viewport exactly ``size``, as a phone or a laptop shows it."""
    browser.set_window_size(size[0], size[1] + 200)
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": size[0], "height": size[1], "deviceScaleFactor": 1,
        "mobile": size[0] < 600})
