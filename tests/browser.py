"""Headless Chromium for the tests that look at pages (Debian's chromium and chromedriver, installed by
scripts/ensure-chromium.sh, which `make setup` runs), driven by selenium."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def browser():
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing: run scripts/ensure-chromium.sh (make setup does) to install headless Chromium")
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def artifacts() -> Path:
    directory = Path(os.environ.get("UAG_ARTIFACTS") or Path(__file__).parent / "artifacts")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def wait_for(driver, script: str, timeout: float = 10.0):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(lambda d: d.execute_script(script))
