"""The served viewer at training scale (issue 41): 100,000 synthetic token records of 1,000 response tokens each
(about 2 GB, made in a temporary directory and removed) plus four of 32k tokens. Measures, in one run:

    index       building the index from nothing, reading it again with nothing new, 1,000 new records
    server      its memory (RSS, peak) serving 100,000 records against 1,000 (flat: about the same)
    Chromium    first paint of the run page (the table; then the charts) and of a 32k-token trajectory's
                first tokens, and all 32k drawn (milliseconds from navigation, headless)

and prints each against its target: first paint < 1 s, index < 60 s for 100k, update < 2 s per 1,000,
memory flat in the number of records.

    python bench/viewer_render.py [--records 100000]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from selenium import webdriver
from selenium.webdriver.support.ui import WebDriverWait

from uni_agent_gym.viewer.index import Index

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")  # scripts/ensure-chromium.sh
EXITS = ["finished"] * 6 + ["max_turns", "format_error", "env_error", "timeout", "aborted"]


def record(index: int, rng: random.Random, size: int, versions: int) -> dict:
    """A token record as UniAgentLoop writes it (ids, mask, logprobs, spans, weight versions, a short report)."""
    exit_reason = rng.choice(EXITS)
    masked = exit_reason in ("env_error", "timeout", "aborted")
    turns = rng.randint(2, 12)
    chunk = max(1, size // (2 * turns))
    spans = [{"start": start, "end": min(start + chunk, size), "role": "assistant" if (start // chunk) % 2 == 0 else "tool"}
             for start in range(0, size, chunk)]  # fmt: skip
    mask = [0] * size if masked else [1 if span["role"] == "assistant" else 0 for span in spans for _ in range(span["start"], span["end"])]
    version = index * versions // 100_000
    resolved = exit_reason == "finished" and rng.random() < 0.2 + 0.4 * version / versions
    return {
        "instance_id": f"repo__pkg-{index % 500}", "exit_reason": exit_reason, "masked": masked, "reward": float(resolved), "turns": 2 * turns,
        "prompt_ids": list(range(300)), "response_ids": [rng.randrange(150_000) for _ in range(size)], "response_mask": mask,
        "response_logprobs": [round(-rng.random() * 3, 5) - 1e-5 if bit else 0.0 for bit in mask], "spans": spans,
        "min_global_steps": max(0, version - rng.randint(0, 2)), "max_global_steps": version, "seconds": rng.uniform(20, 900),
        "reward_report": {"resolved": resolved, "reward": float(resolved), "status": "resolved" if resolved else "unresolved", "patch": ""},
        "language": rng.choice(["python", "python", "go", "rust"]),
    }  # fmt: skip


def write(directory: Path, indexes: range, size: int, seed: int, versions: int = 200, prefix: str = "r") -> None:
    rng = random.Random(seed)
    for index in indexes:
        (directory / f"{prefix}{index:07d}.json").write_bytes(orjson.dumps(record(index, rng, size, versions)))


def rss_mb(pid: int) -> tuple[float, float]:
    """(resident, peak resident) MB of a process."""
    status = Path(f"/proc/{pid}/status").read_text()
    return tuple(int(re.search(rf"{key}:\s+(\d+)", status).group(1)) / 1024 for key in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


class Server:
    """`uni-agent-gym view DIR --serve --port 0` in its own process."""

    def __init__(self, directory: Path) -> None:
        started = time.perf_counter()
        self.process = subprocess.Popen([sys.executable, "-m", "uni_agent_gym.cli", "view", str(directory), "--serve", "--port", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip
        for _ in range(10_000):
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the server ended before it served")
            if line.startswith("serving "):
                self.url = line.split()[1]
                break
        self.start_seconds = time.perf_counter() - started

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=30)
        self.process.stdout.close()


def browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(flag)
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)), options=options)


def paint(driver: webdriver.Chrome, url: str, *marks: str) -> list[float]:
    """Milliseconds from navigation to each `window.<mark>` the page sets (a fresh document each time)."""
    driver.get("about:blank")
    driver.get(url)
    found = []
    for mark in marks:
        WebDriverWait(driver, 300).until(lambda d: d.execute_script(f"return window.{mark}"))
        found.append(driver.execute_script(f"return window.{mark}"))
    return found


def look(driver: webdriver.Chrome, server: Server, big_id: int) -> dict[str, float]:
    """The run page cold (the server's first queries) and again, then the 32k-token trajectory."""
    table, charts = paint(driver, server.url, "__uagRendered", "__uagChartsRendered")
    table_again, charts_again = paint(driver, server.url, "__uagRendered", "__uagChartsRendered")
    first, whole = paint(driver, f"{server.url}#t={big_id}", "__uagTokensFirstPaint", "__uagTokensRendered")
    return {"table": table, "charts": charts, "table_again": table_again, "charts_again": charts_again, "tokens_first": first, "tokens_all": whole}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    count = parser.parse_args().records
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:  # checked before the 2 GB of records are written; `make bench` goes on with the next bench
        print(f"skipped: {', '.join(missing)} missing: run scripts/ensure-chromium.sh (make setup does)")
        return
    with tempfile.TemporaryDirectory(prefix="uag-viewer-bench-") as scratch:
        big, small = Path(scratch) / "run", Path(scratch) / "small"
        big.mkdir()
        small.mkdir()
        started = time.perf_counter()
        write(big, range(count), 1000, seed=0)
        write(big, range(4), 32_768, seed=1, prefix="big-")
        write(small, range(1000), 1000, seed=2)
        write(small, range(1), 32_768, seed=3, prefix="big-")
        on_disk = sum(entry.stat().st_size for entry in os.scandir(big)) / 1e9
        print(f"{count:,} records of 1,000 response tokens + 4 of 32,768: {on_disk:.2f} GB written in {time.perf_counter() - started:.0f} s")

        started = time.perf_counter()
        index = Index(big)
        read = index.update()
        build = time.perf_counter() - started
        os.utime(big)  # the directory looks changed: every file is listed and compared, none read
        started = time.perf_counter()
        index.update()
        listing = time.perf_counter() - started
        started = time.perf_counter()
        index.update()
        nothing = time.perf_counter() - started
        write(big, range(count, count + 1000), 1000, seed=4, prefix="new-")
        started = time.perf_counter()
        added = index.update()
        update = time.perf_counter() - started
        big_id = index.query("SELECT id FROM trajectories WHERE response_tokens = 32768 LIMIT 1")[0][0]
        index.close()
        print(f"index: {read:,} files in {build:.1f} s ({read / build:,.0f} files/s; target < 60 s: {build / 60:.2f} of it); "
              f"nothing new: {listing * 1000:.0f} ms listing the files, {nothing * 1000:.1f} ms by the directory's mtime; {added:,} new records in {update:.2f} s (target < 2 s: {update / 2:.2f} of it)")  # fmt: skip
        small_index = Index(small)
        small_index.update()
        small_big = small_index.query("SELECT id FROM trajectories WHERE response_tokens = 32768 LIMIT 1")[0][0]
        small_index.close()

        driver = browser()
        try:
            figures = {}
            for name, directory, identifier in (("1,001", small, small_big), (f"{count + 1004:,}", big, big_id)):
                server = Server(directory)
                try:
                    shown = look(driver, server, identifier)
                    figures[name] = (rss_mb(server.process.pid), shown, server.start_seconds)
                finally:
                    server.stop()
        finally:
            driver.quit()
        for name, ((resident, peak), shown, start) in figures.items():
            print(f"server over {name} records: started in {start:.1f} s with its index ready; RSS {resident:.0f} MB (peak {peak:.0f} MB)")
            print(f"  run page: table {shown['table']:.0f} ms, charts {shown['charts']:.0f} ms (again: {shown['table_again']:.0f} / "
                  f"{shown['charts_again']:.0f} ms); 32k-token trajectory: first tokens {shown['tokens_first']:.0f} ms, "
                  f"all {shown['tokens_all']:.0f} ms (target first paint < 1000 ms)")  # fmt: skip
        (small_rss, _), (large_rss, _) = (figures[name][0] for name in figures)
        print(f"memory: {large_rss:.0f} MB for {count + 1004:,} records / {small_rss:.0f} MB for 1,001: {large_rss / small_rss:.2f}x "
              f"for {(count + 1004) / 1001:.0f}x the records (target: flat)")  # fmt: skip


if __name__ == "__main__":
    main()
