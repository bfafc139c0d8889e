"""What keeping the future out of the repository costs (`env.history`), each against a baseline in the same run:

- per mirror start commit (once): the clean repository (`clean_history`) vs the mirror's own bare clone
  (what `mirror_repository` pays once per repository anyway);
- per docker mirror reset (host side): `fresh_checkout` from the clean repository vs the old
  `git clone --no-checkout <mirror cache>` + checkout, and the size of the `.git` that is uploaded;
- per local reset: `recreate_checkout` (fresh checkout + ignored-files snapshot) vs the old in-place
  reset (`git checkout --force` + `git clean` in the previous episode's checkout);
- per image build: `CLEAN_SCRIPT` on the build's clean checkout (the one step the build gains);
- per derived image (`--images`): deriving a clean image from one with the whole history in /testbed vs
  a `docker build` of a no-op layer on the same image, and the layer it adds.

Mirrors: the toy repository; `--mirror PATH` adds a real upstream clone (its commit `--back` commits
before HEAD is the start, so it has a future).

Usage: python bench/history_cost.py [--mirror PATH ...] [--back 500] [--runs 20] [--images]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from uni_agent_gym.workspaces.history import CLEAN_SCRIPT, clean_history, fresh_checkout
from uni_agent_gym.workspaces.local_checkout import ensure_trusted_repository, recreate_checkout, snapshot_path
from uni_agent_gym.workspaces.host_git import git
from uni_agent_gym.workspaces.mirrors import mirror_repository

TOY = Path(__file__).resolve().parents[1] / "uni_agent_gym" / "toy" / "repo"


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


async def compare(ours, baseline, runs: int) -> tuple[list[float], list[float]]:
    """Seconds of each call of `ours()` and `baseline()`, alternating, so both see the same machine load."""
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for call, into in ((ours, samples[0]), (baseline, samples[1])):
            started = time.perf_counter()
            await call()
            into.append(time.perf_counter() - started)
    return samples


async def old_checkout(cache: Path, commit: str, target: Path) -> None:
    """What a mirror workspace was before: a clone of the whole mirror cache, checked out at the commit."""
    await git("clone", "--quiet", "--no-checkout", str(cache), str(target))
    await git("-C", str(target), "checkout", "--quiet", "--detach", commit)


async def old_reset(commit: str, repo_dir: Path) -> None:
    """What a local reset was before: the previous checkout, forced back to the commit and cleaned."""
    await git("-C", str(repo_dir), "checkout", "--quiet", "--force", "--detach", commit)
    await git("-C", str(repo_dir), "clean", "-fdq")


def row(name: str, ours: float, baseline: float, unit: str = "ms", note: str = "") -> None:
    print(f"| {name} | {ours:.1f} {unit} | {baseline:.1f} {unit} | {ours / baseline:.2f}x | {note} |")


async def bench_mirror(name: str, source: str, back: int, runs: int, scratch: Path) -> None:
    cache_dir = scratch / name / "cache"
    started = time.perf_counter()
    cache = await mirror_repository(f"bench/{name}", source, str(cache_dir))
    clone_seconds = time.perf_counter() - started
    commit = (await git("--git-dir", str(cache), "rev-parse", f"HEAD~{back}" if back else "HEAD")).strip()
    commits = len((await git("--git-dir", str(cache), "rev-list", "--all")).split())
    for mode in ("ancestry", "none"):
        started = time.perf_counter()
        history = await clean_history(cache, commit, mode, name)
        once = time.perf_counter() - started
        row(f"{name} ({commits} commits): clean repository, {mode} (once per start commit)", once * 1000, clone_seconds * 1000,
            note=f"baseline: the mirror's bare clone; clean repo {size_mb(history.git_dir):.1f} MB, mirror {size_mb(cache):.1f} MB")  # fmt: skip

        counter = iter(range(10**6))

        async def fresh() -> None:
            await fresh_checkout(history.git_dir, history.start, scratch / name / f"fresh-{mode}-{next(counter)}")

        async def old() -> None:
            await old_checkout(cache, commit, scratch / name / f"old-{mode}-{next(counter)}")

        ours, baseline = await compare(fresh, old, runs)
        fresh_git = size_mb(next((scratch / name).glob(f"fresh-{mode}-*")) / ".git")
        old_git = size_mb(next((scratch / name).glob(f"old-{mode}-*")) / ".git")
        row(f"{name}: docker mirror reset, host checkout, {mode}", median_ms(ours), median_ms(baseline),
            note=f"baseline: clone of the mirror cache + checkout; .git uploaded {fresh_git:.1f} MB vs {old_git:.1f} MB")  # fmt: skip

        workspace = scratch / name / f"workspace-{mode}"
        await ensure_trusted_repository(workspace, history)
        repo_dir = workspace / "testbed"
        await recreate_checkout(workspace, history.start, repo_dir)
        egg = repo_dir / "src" / "bench.egg-info"  # an install's ignored output, as the snapshot holds it
        egg.mkdir(parents=True)
        (egg / "PKG-INFO").write_text("Name: bench\n")
        subprocess.run(["tar", "-cf", str(snapshot_path(workspace)), "-C", str(repo_dir), "src/bench.egg-info"], check=True)

        async def recreate() -> None:
            await recreate_checkout(workspace, history.start, repo_dir)

        async def reset_in_place() -> None:
            await old_reset(history.start, repo_dir)

        ours, baseline = await compare(recreate, reset_in_place, runs)
        row(f"{name}: local reset, {mode}", median_ms(ours), median_ms(baseline), note="baseline: checkout --force + clean in place")

        build_checkout = scratch / name / f"build-{mode}"
        await fresh_checkout(history.git_dir, history.start, build_checkout)
        (build_checkout / "installed.txt").write_text("what the install added\n")
        identity = ["-c", "user.name=bench", "-c", "user.email=bench@invalid"]
        started = time.perf_counter()
        subprocess.run(["git", "-C", str(build_checkout), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(build_checkout), *identity, "commit", "-qm", "environment"], check=True)
        commit_step = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run(["sh", "-c", CLEAN_SCRIPT, "clean-history", str(build_checkout), "ancestry"], check=True, capture_output=True)
        script = time.perf_counter() - started
        row(f"{name}: image build, clean step, {mode}", script * 1000, commit_step * 1000, note="baseline: the build's environment commit step")


def bench_derived_images(source: str, back: int, scratch: Path) -> None:
    """Derive a clean image from one whose /testbed holds the whole history of `source`, vs a no-op build."""
    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.workspaces.base_images import base_image_name
    from uni_agent_gym.workspaces.history_images import clean_image
    from uni_agent_gym.workspaces.image_builder import docker_build

    def build(context: Path, dockerfile: str, name: str) -> float:
        (context / "Dockerfile").write_text(dockerfile)
        started = time.perf_counter()
        docker_build(context, name, lambda message: None)
        made.append(name)
        return time.perf_counter() - started

    def added_mb(image: str, below: str) -> float:
        layers, lower = docker_client().api.history(image), docker_client().api.history(below)
        return sum(layer["Size"] for layer in layers[: len(layers) - len(lower)]) / 1e6

    label = Path(source).resolve().parent.name if Path(source).name == "repo" else Path(source).name
    pulled, made = scratch / "pulled", []
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", source, str(pulled / "testbed")], check=True)
    subprocess.run(["git", "-C", str(pulled / "testbed"), "checkout", "--quiet", "--detach", f"HEAD~{back}"], check=True)
    start = subprocess.run(["git", "-C", str(pulled / "testbed"), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    image = f"uni-agent-gym-bench/pulled-{re.sub('[^a-z0-9._-]+', '-', label.lower())}:latest"
    try:
        build(pulled, f"FROM {base_image_name('3.11')}\nCOPY testbed /testbed\nWORKDIR /testbed\n", image)
        (scratch / "noop").mkdir()
        baseline = build(scratch / "noop", f"FROM {image}\nRUN true\nLABEL bench=noop\n", f"{image}-noop")
        for mode in ("ancestry", "none"):
            started = time.perf_counter()
            derived = clean_image(image, mode, start, "/testbed", "never", lambda message: None)
            seconds = time.perf_counter() - started
            made.append(derived)
            row(f"{label}: derived image, {mode} (once per source image)", seconds, baseline, unit="s",
                note=f"baseline: a no-op layer on the same image; the derived layer is {added_mb(derived, image):.1f} MB")  # fmt: skip
    finally:
        for name in reversed(made):
            subprocess.run(["docker", "rmi", "-f", name], capture_output=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", action="append", default=[], help="a git repository with history (bare or not)")
    parser.add_argument("--back", type=int, default=500, help="the start commit is HEAD~BACK of each --mirror")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--images", action="store_true", help="also derive clean images (needs Docker and the py3.11 base)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="uni-agent-gym-bench-history-"))
    try:
        print("| | ours (median) | baseline | ratio | |\n|---|---|---|---|---|")
        await bench_mirror("toy", str(TOY), 0, args.runs, scratch)
        for source in args.mirror:
            await bench_mirror(Path(source).resolve().parent.name if Path(source).name == "repo" else Path(source).name, source, args.back, args.runs, scratch)
        if args.images:
            for source in args.mirror:
                bench_derived_images(source, args.back, scratch / f"images-{Path(source).parent.name}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
