"""How long the viewer's run table takes to appear in headless Chromium for 2,000 trajectories, against
100 in the same run (the ratio is what to watch: the table is built at load, trajectories' tokens only on
click). Prints milliseconds from navigation start to `window.__uagRendered`, and the file sizes.

    python bench/viewer_render.py
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.support.ui import WebDriverWait

from uni_agent_gym.viewer.html import write_html
from uni_agent_gym.viewer.records import Trajectory


def synthetic(count: int, seed: int = 0) -> list[Trajectory]:
    """`count` token records of 2k-8k response tokens, two turns each, a third of them resolved."""
    rng = random.Random(seed)
    records = []
    for index in range(count):
        size = rng.randint(2000, 8000)
        mask = [1 if (position // 500) % 2 == 0 else 0 for position in range(size)]
        records.append(Trajectory(
            source=f"synthetic:{index}", kind="tokens", instance_id=f"repo__pkg-{index}", exit_reason=rng.choice(["finished", "max_turns", "format_error"]),
            reward=float(index % 3 == 0), resolved=index % 3 == 0, masked=False, turns=rng.randint(1, 40), seconds=rng.uniform(10, 600),
            prompt_ids=list(range(300)), response_ids=[rng.randrange(150000) for _ in range(size)], response_mask=mask,
            response_logprobs=[-rng.random() if m else 0.0 for m in mask],
        ))  # fmt: skip
    return records


def render_ms(driver: webdriver.Chrome, path: Path) -> float:
    driver.get(path.as_uri())
    WebDriverWait(driver, 120).until(lambda d: d.execute_script("return window.__uagRendered"))
    return driver.execute_script("return window.__uagRendered")


def main() -> None:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        with tempfile.TemporaryDirectory() as directory:
            results = {}
            for count in (100, 2000):
                started = time.perf_counter()
                path = write_html(synthetic(count), Path(directory) / f"view-{count}.html", f"{count} synthetic trajectories")
                written = time.perf_counter() - started
                results[count] = render_ms(driver, path)
                print(f"{count:5d} trajectories: {path.stat().st_size / 1e6:7.1f} MB written in {written:5.1f} s, "
                      f"run table rendered {results[count]:8.0f} ms after navigation")  # fmt: skip
            print(f"ratio 2000/100: {results[2000] / results[100]:.1f}x for 20x the trajectories")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
