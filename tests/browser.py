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
def chrome(size: tuple[int, int] = PHONE, *, javascript: bool = True) -> Iterator:
    """A headless Chromium at ``size``; ``javascript=False`` is a browser with scripts turned
    off in its settings (WebDriver's own commands still run, as the browser's devtools do)."""
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
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2})
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


def sticking_out(browser, width: int) -> list[str]:
    """What a person at ``width`` px could not see without scrolling sideways: the page laid out
    wider than the screen, an element reaching past either edge, or a box that scrolls sideways.
    Empty when everything fits."""
    return browser.execute_script("""
        const width = arguments[0], root = document.documentElement, out = [];
        if (root.clientWidth !== width) out.push(`laid out ${root.clientWidth} px wide, not ${width}`);
        if (root.scrollWidth > root.clientWidth) out.push(`the page scrolls to ${root.scrollWidth} px`);
        const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
            (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ').join('.') : '');
        for (const e of document.body.querySelectorAll('*')) {
          const r = e.getBoundingClientRect();
          if (!r.width || !r.height) continue;
          if (r.right > root.clientWidth + 0.5 || r.left < -0.5)
            out.push(`${name(e)} spans ${Math.round(r.left)}..${Math.round(r.right)} px`);
          if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
            out.push(`${name(e)} scrolls sideways (${e.scrollWidth} in ${e.clientWidth} px)`);
        }
        return out;""", width)
