"""`make bench` on a machine that lacks some bench's prerequisites: that bench says "skipped: why" and exits 0,
and the Makefile runs every bench, failing at the end only where one failed."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench_module(name: str):
    """A bench script as a module (bench/ is no package), without running its `__main__` block."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reward_overhead_without_fixture_images_says_skipped_and_exits_0(monkeypatch, capsys):
    module = bench_module("reward_overhead")
    monkeypatch.setattr(module, "docker_client", lambda: None)
    monkeypatch.setattr(module, "image_exists", lambda name: False)
    asyncio.run(module.main(6))
    assert capsys.readouterr().out.startswith("skipped: ")


def test_viewer_render_without_chromium_says_skipped_before_writing_records(monkeypatch, capsys, tmp_path):
    module = bench_module("viewer_render")
    monkeypatch.setattr(module, "CHROMIUM", tmp_path / "chromium")
    monkeypatch.setattr(sys, "argv", ["viewer_render.py"])
    monkeypatch.setattr(module, "write", lambda *args, **kwargs: pytest.fail("records written"))
    module.main()
    assert capsys.readouterr().out == f"skipped: {tmp_path / 'chromium'} missing: run scripts/ensure-chromium.sh (make setup does)\n"


@pytest.mark.parametrize("name", ["rollout_cache", "gateway_overhead"])
def test_a_tokenizer_bench_without_its_tokenizer_says_skipped_and_exits_0(name, tmp_path):
    run = subprocess.run([sys.executable, f"bench/{name}.py", "--tokenizer", str(tmp_path / "absent")], cwd=ROOT, capture_output=True, text=True)
    assert (run.returncode, run.stdout.splitlines()[0]) == (0, f"skipped: no tokenizer directory {tmp_path / 'absent'} "
                                                               "(../shared/tokenizers beside the checkout, or --tokenizer DIR)")  # fmt: skip


def test_make_bench_runs_every_bench_and_fails_at_the_end_where_one_failed(tmp_path):
    """A stand-in python (fails bench/b.py) in place of the venv's; setup and docker-engine left out (-o)."""
    python = tmp_path / "python"
    python.write_text('#!/bin/sh\necho "ran $1"\n[ "$1" != bench/b.py ]\n')
    python.chmod(0o755)
    make = ["make", "--no-print-directory", "-o", "setup", "-o", "docker-engine", "bench", f"BIN={tmp_path}"]
    failed = subprocess.run([*make, "BENCHES=a b c"], cwd=ROOT, capture_output=True, text=True)
    assert failed.returncode != 0
    assert [line for line in failed.stdout.splitlines() if not line.startswith("==")] == [
        "ran bench/a.py", "ran bench/b.py", "make bench: bench/b.py failed", "ran bench/c.py"]  # fmt: skip
    assert subprocess.run([*make, "BENCHES=a c"], cwd=ROOT, capture_output=True).returncode == 0
