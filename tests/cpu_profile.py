"""Where the suite's CPU goes, test by test: a pytest plugin, loaded on request, and its summary.

The suite is CPU-bound on 2 cores, so a test's wall time says little (it includes waiting for the CPU the other
worker holds); what shortens `make test` is CPU taken out. For each test (its setup, call and teardown, so a module
or session fixture counts where it is made) this writes one JSON line: the wall seconds, the CPU seconds of the test
worker's own process, of the child processes it waited for (the CLI runs, pytest inside a checkout, Maven, cargo...)
and, machine-wide in the same span, of Docker's containers (cgroup v1 `cpuacct`, where present) and of the whole
machine (`/proc/stat`). The last two also hold the other worker's work of that span: read them summed per file.

    UAG_CPU_PROFILE=/tmp/cpu.jsonl make test TEST_ARGS="-p tests.cpu_profile"
    python -m tests.cpu_profile /tmp/cpu.jsonl
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from pathlib import Path

import pytest

DOCKER_CPUACCT = Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage")  # nanoseconds, dead containers included
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _machine_busy() -> float:
    """CPU seconds every core spent not idle since boot."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / CLOCK_TICKS


def _docker_cpu() -> float | None:
    try:
        return int(DOCKER_CPUACCT.read_text()) / 1e9
    except (OSError, ValueError):
        return None


def _sample() -> dict:
    times = os.times()
    return {"wall": time.monotonic(), "own": times.user + times.system, "children": times.children_user + times.children_system,
            "docker": _docker_cpu(), "machine": _machine_busy()}  # fmt: skip


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("UAG_CPU_PROFILE")
    if not path:
        yield
        return
    before = _sample()
    yield
    after = _sample()
    line = {"test": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main")}
    for key in before:
        line[key] = None if before[key] is None or after[key] is None else round(after[key] - before[key], 3)
    with open(path, "a") as out:
        out.write(json.dumps(line) + "\n")


def summarize(path: str, top: int = 40) -> str:
    """Per file and for the costliest tests: wall, the worker's own CPU, its children's, Docker's in the span."""
    lines = [json.loads(text) for text in Path(path).read_text().splitlines() if text.strip()]
    files: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for line in lines:
        for key in ("wall", "own", "children", "docker", "machine"):
            files[line["test"].split("::")[0]][key] += line[key] or 0
    total = collections.Counter()
    for counts in files.values():
        total.update(counts)
    out = [f"{len(lines)} tests; seconds: wall, own CPU, children's CPU, Docker's CPU (both workers), machine CPU (both)",
           f"{'total':52} {total['wall']:7.0f} {total['own']:7.0f} {total['children']:7.0f} {total['docker']:7.0f} {total['machine']:7.0f}"]  # fmt: skip
    for name, counts in sorted(files.items(), key=lambda item: -(item[1]["own"] + item[1]["children"] + item[1]["docker"])):
        out.append(f"{name:52} {counts['wall']:7.0f} {counts['own']:7.0f} {counts['children']:7.0f} {counts['docker']:7.0f} {counts['machine']:7.0f}")
    out.append("")
    for line in sorted(lines, key=lambda line: -((line["own"] or 0) + (line["children"] or 0)))[:top]:
        out.append(f"{line['wall']:7.1f} {line['own']:7.1f} {line['children']:7.1f} {line['docker'] or 0:7.1f}  {line['test']}")
    return "\n".join(out)


if __name__ == "__main__":
    print(summarize(sys.argv[1]))
