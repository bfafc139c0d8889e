"""`uni-agent-gym images build`: SWE-bench instance images made offline, without a registry.

Each image is the base image of the spec's Python, a venv at /opt/venv with the spec's exact
packages, and the repository at /testbed (from a mirror, at `base_commit`, installed the spec's way).
Packages are downloaded on the host into a wheelhouse (wheels for the image's Python and glibc; an
sdist where a release has no wheel) and installed during `docker build` with the network off. Like
the official images, /testbed ends with one commit on top of `base_commit` that holds the
`pre_install` edits, so `git diff HEAD` is the agent's work alone. Images get the official names
(`swebench/sweb.eval.x86_64.<id>:latest`), so a docker env finds them as it would pulled ones.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


from uni_agent_gym.config import GymConfig
from uni_agent_gym.deployments.docker import docker_client, image_exists
from uni_agent_gym.deployments.images import DEBIAN_SUITE_BY_PYTHON, GLIBC_MINOR_BY_PYTHON, base_image_name
from uni_agent_gym.envs.workspace import checkout, mirror_repository
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.instances import image_name
from uni_agent_gym.specs import EnvironmentSpec, environment_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_BUILD_REQUIREMENTS = ["setuptools", "wheel"]
_wheelhouse_locks: dict[str, asyncio.Lock] = {}
OFFLINE_PIP = "PIP_NO_INDEX=1 PIP_FIND_LINKS=/opt/wheelhouse PIP_DISABLE_PIP_VERSION_CHECK=1"


class ImageBuildError(UniAgentGymError, RuntimeError):
    """An instance image could not be built; the message names the instance and the step."""


def pip_target_flags(python: str) -> list[str]:
    """`pip download` flags that pick wheels for the base image's CPython and glibc, not the host's."""
    abi = "cp" + python.replace(".", "")
    platforms = ["manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64"]
    platforms += [f"manylinux_2_{minor}_x86_64" for minor in range(5, GLIBC_MINOR_BY_PYTHON[python] + 1)]
    flags = ["--python-version", python, "--implementation", "cp", "--abi", abi, "--abi", "abi3", "--abi", "none"]
    for platform in platforms:
        flags += ["--platform", platform]
    return flags


def download_wheelhouse(requirements: list[str], python: str, wheelhouse: Path, log: Callable[[str], None]) -> None:
    """Wheels for `python` where they exist, sdists otherwise, for every requirement (no dependencies)."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check", "-d", str(wheelhouse)]
    pending = list(dict.fromkeys(requirements))
    while pending:
        done = subprocess.run(base + ["--only-binary=:all:", *pip_target_flags(python), *pending], capture_output=True, text=True)
        if done.returncode == 0:
            return
        missing = re.search(r"No matching distribution found for (\S+)", done.stderr)
        if not missing or missing.group(1) not in pending:
            raise ImageBuildError(f"pip download failed:\n{done.stderr.strip()[-2000:]}")
        sdist = missing.group(1)
        pending.remove(sdist)
        log(f"  no wheel of {sdist} for Python {python}: taking its sdist (built offline in the image)")
        fallback = subprocess.run(base + ["--no-binary", ":all:", sdist], capture_output=True, text=True)
        if fallback.returncode != 0:
            raise ImageBuildError(f"pip download of {sdist} failed:\n{fallback.stderr.strip()[-2000:]}")


def project_build_requirements(repo_dir: Path) -> list[str]:
    """The `[build-system] requires` of the repository's pyproject.toml (setuptools + wheel without one)."""
    pyproject = repo_dir / "pyproject.toml"
    if not pyproject.exists():
        return list(DEFAULT_BUILD_REQUIREMENTS)
    try:
        requires = tomllib.loads(pyproject.read_text()).get("build-system", {}).get("requires")
    except tomllib.TOMLDecodeError:
        return list(DEFAULT_BUILD_REQUIREMENTS)
    return list(requires) if requires else list(DEFAULT_BUILD_REQUIREMENTS)


def dockerfile(base: str, spec: EnvironmentSpec) -> str:
    """The build recipe; every pip call in it is offline (no index, the wheelhouse only)."""
    lines = [f"FROM {base}", "COPY wheelhouse /opt/wheelhouse", "COPY requirements.txt /opt/requirements.txt", "COPY testbed /testbed", "WORKDIR /testbed"]
    lines += [f"ENV {key}={shlex.quote(value)}" for key, value in spec.env.items()]
    lines += [
        "RUN python3 -m venv /opt/venv",
        "ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        f"RUN {OFFLINE_PIP} python -m pip install -r /opt/requirements.txt",
    ]
    if spec.pre_install:
        lines.append("RUN " + " && ".join(spec.pre_install))
    lines += [
        f"RUN {OFFLINE_PIP} {spec.install}",
        "RUN git config --global user.email env@uni-agent-gym.invalid && git config --global user.name uni-agent-gym "
        "&& git config --global --add safe.directory '*' && git add -A && git commit --allow-empty -qm 'uni-agent-gym environment'",
    ]
    return "\n".join(lines) + "\n"


def _require_base(python: str, instance_id: str) -> str:
    base = base_image_name(python)
    if python not in DEBIAN_SUITE_BY_PYTHON:
        raise ImageBuildError(
            f"Instance {instance_id!r} needs Python {python}, which has no base image "
            f"(bootstrap-base makes {', '.join(DEBIAN_SUITE_BY_PYTHON)}); give it another Python in an environments file"
        )
    if not image_exists(base):
        raise ImageBuildError(
            f"Instance {instance_id!r} needs the base image {base}, which is missing: "
            f"run `uni-agent-gym images bootstrap-base --python {python}`"
        )
    return base


def docker_build(context: Path, name: str, log: Callable[[str], None]) -> None:
    """`docker build` of `context` with the network off; `ImageBuildError` with the end of its output."""
    last = []
    for chunk in docker_client().api.build(path=str(context), tag=name, network_mode="none", rm=True, forcerm=True, decode=True):
        if "error" in chunk:
            raise ImageBuildError(f"docker build of {name} failed: {chunk['error'].strip()}\n{''.join(last)[-3000:]}")
        text = chunk.get("stream", "")
        if text.startswith("Step "):
            log(f"  {text.strip()[:120]}")
        last = (last + [text])[-60:]


async def build_instance_image(
    instance: dict[str, Any],
    config: GymConfig,
    environments: dict[str, dict[str, Any]],
    *,
    force: bool = False,
    log: Callable[[str], None] = print,
) -> str:
    """Build the image of one instance unless it exists (or `force`); return its name."""
    instance_id, name = instance["instance_id"], instance.get("image_name") or image_name(instance["instance_id"])
    if instance.get("hidden_paths"):
        raise ImageBuildError(
            f"Instance {instance_id!r}: {instance.get('family')} keeps its tests only in its image {name}, which no row "
            "carries: pull the image where a registry is reachable"
        )
    if not force and await asyncio.to_thread(image_exists, name):
        log(f"{instance_id}: {name} exists, skipped")
        return name
    spec = environment_spec(instance, environments)
    base = await asyncio.to_thread(_require_base, spec.python, instance_id)
    source = config.env.mirrors.get(instance["repo"]) or instance.get("mirror")
    if not source:
        raise ImageBuildError(f"Instance {instance_id!r}: no mirror of {instance['repo']} (env.mirrors or --mirror)")
    started = time.monotonic()
    cache_dir = Path(config.env.cache_dir).expanduser()
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="build-", dir=cache_dir) as scratch:  # beside the wheelhouse: hard links work
        context = Path(scratch)
        cache = await mirror_repository(instance["repo"], source, config.env.cache_dir, instance["base_commit"])
        await checkout(cache, instance["base_commit"], context / "testbed", instance_id)
        build_requirements = spec.build_requirements or project_build_requirements(context / "testbed")
        wheelhouse = cache_dir / "wheelhouse" / f"py{spec.python}"
        log(f"{instance_id}: Python {spec.python} ({spec.source}), {len(spec.requirements)} packages + {len(build_requirements)} for the build")
        async with _wheelhouse_locks.setdefault(str(wheelhouse), asyncio.Lock()):  # parallel builds share it
            for requirements in (spec.requirements, build_requirements):  # apart: they may pin different versions
                await asyncio.to_thread(download_wheelhouse, requirements, spec.python, wheelhouse, log)
            await asyncio.to_thread(shutil.copytree, wheelhouse, context / "wheelhouse", copy_function=os.link)
        (context / "requirements.txt").write_text("\n".join(spec.requirements) + "\n")
        (context / "Dockerfile").write_text(dockerfile(base, spec))
        log(f"{instance_id}: docker build {name} (network off)")
        await asyncio.to_thread(docker_build, context, name, log)
    log(f"{instance_id}: built {name} in {time.monotonic() - started:.0f} s")
    return name


async def build_instance_images(
    instances: list[dict[str, Any]],
    config: GymConfig,
    environments: dict[str, dict[str, Any]],
    *,
    force: bool = False,
    workers: int = 1,
    log: Callable[[str], None] = print,
) -> tuple[list[str], dict[str, str]]:
    """Build the instances' images, `workers` at a time; (built or present names in the instances' order,
    {instance_id: error}) at the end. A failure costs only its own image."""
    names: dict[str, str] = {}
    failures: dict[str, str] = {}
    limit = asyncio.Semaphore(max(1, workers))

    async def one(number: int, instance: dict[str, Any]) -> None:
        async with limit:
            log(f"[{number}/{len(instances)}] {instance['instance_id']}")
            try:
                names[instance["instance_id"]] = await build_instance_image(instance, config, environments, force=force, log=log)
            except UniAgentGymError as exc:
                failures[instance["instance_id"]] = str(exc)
                log(f"{instance['instance_id']}: FAILED: {exc}")

    await asyncio.gather(*(one(number, instance) for number, instance in enumerate(instances, 1)))
    return [names[i["instance_id"]] for i in instances if i["instance_id"] in names], failures
