"""`uni-agent-gym images build`: instance images made offline, without a registry.

As SWE-bench's harness does, an image is three layers deep: the base image of the spec's Python
(`images bootstrap-base`), an *environment* image shared by every instance with the same Python and
exact packages (a venv at /opt/venv; `uni-agent-gym/env:py3.9-<digest>`), and the *instance* layer:
the repository at /testbed (from a mirror, at `base_commit`, installed the spec's way). Thousands of
dataset rows share a few hundred environments, so each added instance costs its repository and its
install only. Packages are downloaded on the host (wheels for the image's Python and glibc; an sdist
where a release has no wheel) and installed during `docker build` with the network off. Like the
official images, /testbed ends with one commit on top of `base_commit` that holds the `pre_install`
edits (the tracked files it and the install changed; what they made is recorded as ignored, never committed:
`RECORD_OUTPUTS`), so `git diff HEAD` is the agent's work alone. The repository is built clean (`env.history`,
see `history.py`: a checkout of the clean repository, then the in-place clean script after the
environment commit) and the image labelled with the mode, so it needs no derivation. Images get their
family's names (SWE-bench's
`swebench/sweb.eval.x86_64.<id>:latest`, SWE-Gym's, SWE-rebench's, SWE-smith's repository image), so a
docker env finds them as it would pulled ones.

A task in another language takes a *toolchain* image in place of the environment: the bookworm base
plus its language's Debian packages (`toolchains.py`; `uni-agent-gym/toolchain:c-<digest>`), installed
by apt from the Debian mirror, the one step with the network on. Its instance layer runs the spec's
install and build offline, as the Python layer runs pip.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
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
from uni_agent_gym.datasets import Task
from uni_agent_gym.datasets.base import IMAGE_REPO_DIR
from uni_agent_gym.deployments.docker import docker_client, image_exists, image_labels
from uni_agent_gym.workspaces.base_images import DEBIAN_SUITE_BY_PYTHON, GLIBC_MINOR_BY_PYTHON, base_image_name
from uni_agent_gym.workspaces.build_caches import caches_label, with_caches
from uni_agent_gym.workspaces.history import CLEAN_SCRIPT, HISTORY_LABEL, SCRIPT_PATH, clean_history, fresh_checkout, history_mode
from uni_agent_gym.workspaces.mirrors import mirror_repository
from uni_agent_gym.workspaces.recorded_environment import environment_labels
from uni_agent_gym.errors import UniAgentGymError
from uni_agent_gym.named_locks import machine_lock
from uni_agent_gym.specs import EnvironmentSpec, environment_spec
from uni_agent_gym.toolchains import PYTHON, toolchain_caches, toolchain_env

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_BUILD_REQUIREMENTS = ["setuptools", "wheel"]
ENVIRONMENT_LABEL = "uni-agent-gym.environment"
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


def download_wheelhouse(
    requirements: list[str], python: str, wheelhouse: Path, log: Callable[[str], None], *, dependencies: bool = False
) -> None:
    """Wheels for `python` where they exist, sdists otherwise, for every requirement; their dependencies
    too with `dependencies` (build requirements: a project names them unpinned, pip's isolated build
    resolves them, so the wheelhouse needs what they depend on)."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "pip", "download", "--quiet", *([] if dependencies else ["--no-deps"]), "--disable-pip-version-check", "-d", str(wheelhouse)]
    pending = list(dict.fromkeys(requirements))
    while pending:
        done = subprocess.run(base + ["--only-binary=:all:", *pip_target_flags(python), *pending], capture_output=True, text=True)
        if done.returncode == 0:
            break
        missing = re.search(r"No matching distribution found for (\S+)", done.stderr)
        if not missing or missing.group(1) not in pending:
            raise ImageBuildError(f"pip download failed:\n{done.stderr.strip()[-2000:]}")
        sdist = missing.group(1)
        pending.remove(sdist)
        log(f"  no wheel of {sdist} for Python {python}: taking its sdist (built offline in the image)")
        fallback = subprocess.run(base + ["--no-binary", ":all:", sdist], capture_output=True, text=True)
        if fallback.returncode != 0:
            raise ImageBuildError(f"pip download of {sdist} failed:\n{fallback.stderr.strip()[-2000:]}")
    if dependencies:
        missing = _missing_dependencies(wheelhouse, python)
        if missing:  # pip evaluates markers for the host's Python, not the image's: fetch what only the image's needs
            download_wheelhouse(missing, python, wheelhouse, log, dependencies=True)


def _missing_dependencies(wheelhouse: Path, python: str) -> list[str]:
    """Requirements of the wheelhouse's wheels that apply on `python` (their markers evaluated for it)
    and that no file of the wheelhouse provides."""
    import zipfile
    from email.parser import HeaderParser

    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    environment = {**default_environment(), "python_version": python, "python_full_version": f"{python}.0", "extra": ""}
    wheels = list(wheelhouse.glob("*.whl"))
    provided = {canonicalize_name(path.name.split("-")[0]) for path in wheelhouse.iterdir()}
    missing = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            name = next((entry for entry in archive.namelist() if entry.endswith(".dist-info/METADATA")), None)
            metadata = HeaderParser().parsestr(archive.read(name).decode("utf-8", errors="replace")) if name else None
        for line in metadata.get_all("Requires-Dist") or [] if metadata else []:
            requirement = Requirement(line)
            if requirement.marker is not None and not requirement.marker.evaluate(environment):
                continue
            if canonicalize_name(requirement.name) not in provided:
                missing[canonicalize_name(requirement.name)] = f"{requirement.name}{requirement.specifier}"
    return sorted(missing.values())


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


def environment_key(spec: EnvironmentSpec) -> str:
    """What an environment image is made of (its Python and exact packages), as a short digest."""
    return hashlib.sha256(json.dumps([spec.python, sorted(spec.requirements)]).encode()).hexdigest()[:16]


def environment_image_name(spec: EnvironmentSpec) -> str:
    """The environment image instances with this Python and these packages share."""
    return f"uni-agent-gym/env:py{spec.python}-{environment_key(spec)}"


def environment_dockerfile(base: str, spec: EnvironmentSpec) -> str:
    """The environment layer: a venv at /opt/venv with the exact packages, installed offline (no index,
    the wheelhouse only); the wheelhouse stays for the instance layers' installs."""
    return "\n".join([
        f"FROM {base}",
        "COPY wheelhouse /opt/wheelhouse",
        "COPY requirements.txt /opt/requirements.txt",
        "RUN python3 -m venv /opt/venv",
        "ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        f"RUN {OFFLINE_PIP} python -m pip install -r /opt/requirements.txt",
        f'LABEL {ENVIRONMENT_LABEL}="{environment_key(spec)}"',
    ]) + "\n"  # fmt: skip


TOOLCHAIN_LABEL = "uni-agent-gym.toolchain"


def toolchain_key(spec: EnvironmentSpec) -> str:
    return hashlib.sha256(json.dumps([spec.python, spec.toolchain, *([spec.toolchain_setup] if spec.toolchain_setup else [])]).encode()).hexdigest()[:16]


def toolchain_image_name(spec: EnvironmentSpec) -> str:
    """The toolchain image every instance of a language with the same packages shares."""
    return f"uni-agent-gym/toolchain:{spec.language}-{toolchain_key(spec)}"


def toolchain_dockerfile(base: str, spec: EnvironmentSpec) -> str:
    """The toolchain layer: the language's Debian packages from the base image's own apt sources, then the
    spec's `toolchain_setup` (still with the network)."""
    packages = " ".join(shlex.quote(package) for package in spec.toolchain)
    return "\n".join([
        f"FROM {base}",
        "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
        f"{packages} && rm -rf /var/lib/apt/lists/*",
        *(f"ENV {key}={value}" for key, value in toolchain_env(spec.toolchain).items()),
        *(f"RUN {command}" for command in spec.toolchain_setup),
        f'LABEL {TOOLCHAIN_LABEL}="{toolchain_key(spec)}"',
    ]) + "\n"  # fmt: skip


async def ensure_toolchain_image(spec: EnvironmentSpec, base: str, cache_dir: Path, log: Callable[[str], None]) -> str:
    """The toolchain image of `spec`, built once (apt needs the network: the Debian mirror)."""
    name = toolchain_image_name(spec)
    async with machine_lock(f"toolchain {name}"):
        if await asyncio.to_thread(image_exists, name):
            return name
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="toolchain-", dir=cache_dir) as scratch:
            context = Path(scratch)
            (context / "Dockerfile").write_text(toolchain_dockerfile(base, spec))
            log(f"toolchain {name}: {' '.join(spec.toolchain)} (apt, from the base image's Debian mirror)")
            await asyncio.to_thread(docker_build, context, name, log, "default")
        log(f"toolchain {name}: built in {time.monotonic() - started:.0f} s")
    return name


def dockerfile(environment: str, spec: EnvironmentSpec, history: str = "ancestry", repo_dir: str = IMAGE_REPO_DIR) -> str:
    """The instance layer on its environment (or toolchain) image: the repository at `repo_dir` (the task's
    `workdir`: /testbed, or where its toolchain expects it, such as a GOPATH) with the spec's build
    requirements, variables, `pre_install` and install (offline), and the environment commit. The checkout
    arrives clean (`history`); the environment commit's reflog and leftovers go in the last step."""
    wheels = ["COPY wheelhouse /opt/wheelhouse"] if spec.language == PYTHON else []
    lines = [f"FROM {environment}", *wheels, f"COPY testbed {repo_dir}", f"COPY clean-history.sh {SCRIPT_PATH}", f"WORKDIR {repo_dir}"]
    lines += [f"ENV {key}={shlex.quote(value)}" for key, value in spec.env.items()]
    if spec.pre_install:
        lines.append("RUN " + " && ".join(spec.pre_install))
    lines += [
        f"RUN {OFFLINE_PIP} {spec.install}" if spec.language == PYTHON else f"RUN {spec.install}",
        "RUN git config --global user.email env@uni-agent-gym.invalid && git config --global user.name uni-agent-gym "
        f"&& git config --global --add safe.directory '*' && git add -u && {RECORD_OUTPUTS} && git commit --allow-empty -qm 'uni-agent-gym environment' "
        f"&& sh {SCRIPT_PATH} {repo_dir} ancestry && rm -f {SCRIPT_PATH}",
        f'LABEL {HISTORY_LABEL}="{history}"',
    ]
    return "\n".join(lines) + "\n"


# The environment commit holds the tracked files `pre_install` and the install changed (`git add -u`, as swebench's
# `git commit -am`), never what they made: a build's outputs committed there made an agent's rebuild a change of its
# own (gin's 19 MB test binary in the patch). What they left untracked is written into `.git/info/exclude` instead,
# one anchored literal pattern a path (a directory whole), so the agent's `git status` is clean and the capture
# leaves those paths out (`rewards/capture.py`). A name holding a newline (which no pattern can hold) stays untracked:
# the capture still leaves it out on docker and ray, where it sees that the image holds it.
RECORD_OUTPUTS = (
    "mkdir -p .git/info && { echo '# uni-agent-gym: what the image build made (untracked at the environment commit)'; "
    "git ls-files -z --others --exclude-standard --directory | tr '\\n\\0' '\\1\\n' | { grep -v \"$(printf '\\1')\" || true; } "
    "| sed -e 's/[][*?\\\\]/\\\\&/g' -e 's/ $/\\\\ /' -e 's|^|/|'; } >> .git/info/exclude"
)


async def ensure_environment_image(spec: EnvironmentSpec, base: str, cache_dir: Path, log: Callable[[str], None]) -> str:
    """The environment image of `spec`, built once (instances sharing Python and packages share it)."""
    name = environment_image_name(spec)
    async with machine_lock(f"environment {name}"):
        if await asyncio.to_thread(image_exists, name):
            return name
        started = time.monotonic()
        wheelhouse = cache_dir / "wheelhouse" / f"py{spec.python}" / f"env-{environment_key(spec)}"
        async with machine_lock("pip download"):  # one download at a time: pip's cache and the index are shared
            await asyncio.to_thread(download_wheelhouse, spec.requirements, spec.python, wheelhouse, log)
            await asyncio.to_thread(download_wheelhouse, DEFAULT_BUILD_REQUIREMENTS, spec.python, wheelhouse / "build", log, dependencies=True)
        with tempfile.TemporaryDirectory(prefix="env-", dir=cache_dir) as scratch:  # beside the wheelhouse: hard links work
            context = Path(scratch)
            await asyncio.to_thread(_link_wheels, [wheelhouse, wheelhouse / "build"], context / "wheelhouse")
            (context / "requirements.txt").write_text("\n".join(spec.requirements) + "\n")
            (context / "Dockerfile").write_text(environment_dockerfile(base, spec))
            log(f"environment {name}: Python {spec.python}, {len(spec.requirements)} packages (network off)")
            await asyncio.to_thread(docker_build, context, name, log)
        log(f"environment {name}: built in {time.monotonic() - started:.0f} s")
    return name


def _link_wheels(sources: list[Path], target: Path) -> None:
    """The files of `sources` hard-linked (copied across file systems) into one directory."""
    target.mkdir(parents=True, exist_ok=True)
    for source in sources:
        for item in source.iterdir() if source.is_dir() else []:
            if item.is_file() and not (target / item.name).exists():
                try:
                    os.link(item, target / item.name)
                except OSError:
                    shutil.copy2(item, target / item.name)


def _digest(requirements: list[str]) -> str:
    return hashlib.sha256(json.dumps(sorted(requirements)).encode()).hexdigest()[:16]


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


def docker_build(context: Path, name: str, log: Callable[[str], None], network: str = "none", labels: dict[str, str] | None = None) -> None:
    """`docker build` of `context` (with the network off unless named, `labels` added); `ImageBuildError` with the end
    of its output."""
    last = []
    chunks = docker_client().api.build(path=str(context), tag=name, network_mode=network, rm=True, forcerm=True, decode=True, labels=labels)
    for chunk in chunks:
        if "error" in chunk:
            raise ImageBuildError(f"docker build of {name} failed: {chunk['error'].strip()}\n{''.join(last)[-3000:]}")
        text = chunk.get("stream", "")
        if text.startswith("Step "):
            log(f"  {text.strip()[:120]}")
        last = (last + [text])[-60:]


INPUTS_LABEL = "uni-agent-gym.inputs"  # on an instance image built here: the digest of what it was built from


def inputs_digest(dockerfile_text: str, base_commit: str) -> str:
    """What an instance image is built from: its Dockerfile (the environment or toolchain image, named by the digest
    of its own inputs, and every step), the repository's commit and the history script."""
    return hashlib.sha256(json.dumps([dockerfile_text, base_commit, CLEAN_SCRIPT]).encode()).hexdigest()[:16]


def _instance_dockerfile(instance: Task, spec: EnvironmentSpec, config: GymConfig) -> str:
    environment = environment_image_name(spec) if spec.language == PYTHON else toolchain_image_name(spec)
    return dockerfile(environment, spec, history_mode(instance, config), instance.workdir or IMAGE_REPO_DIR)


async def build_instance_image(
    instance: Task,
    config: GymConfig,
    environments: dict[str, dict[str, Any]],
    *,
    force: bool = False,
    log: Callable[[str], None] = print,
) -> str:
    """Build the image of one instance unless it exists (or `force`); return its name."""
    instance_id, name = instance.instance_id, instance.image
    if instance.hidden_paths:
        raise ImageBuildError(
            f"Instance {instance_id!r}: {instance.family} keeps its tests only in its image {name}, which no row "
            "carries: pull the image where a registry is reachable"
        )
    async with machine_lock(f"instance image {name}"):  # another process building it: wait, then find it built
        labels = None if force else await asyncio.to_thread(image_labels, name)
        if labels is not None:  # it exists: kept if built from these inputs, or elsewhere (pulled) or before the label
            built_from = labels.get(INPUTS_LABEL)
            spec = None if built_from is None else environment_spec(instance, environments)
            wanted = None if spec is None else inputs_digest(_instance_dockerfile(instance, spec, config), instance.base_commit)
            if built_from == wanted:
                recorded = {} if spec is None else _environment_labels(instance, spec, name)  # None: pulled, or built before the labels
                if any(labels.get(key) != value for key, value in recorded.items()):
                    log(f"{instance_id}: {name} exists; its commands or environment record changed: labelled again")
                    await asyncio.to_thread(_relabel, name, recorded)
                else:
                    log(f"{instance_id}: {name} exists, skipped")
                return name
            log(f"{instance_id}: {name} was built from other inputs (its spec, toolchain or environment changed): built again")
        return await _build_instance_image(instance, name, config, environments, log)


async def _build_instance_image(
    instance: Task, name: str, config: GymConfig, environments: dict[str, dict[str, Any]], log: Callable[[str], None]
) -> str:
    instance_id = instance.instance_id
    spec = environment_spec(instance, environments)
    base = await asyncio.to_thread(_require_base, spec.python, instance_id)
    source = config.env.mirrors.get(instance.repo) or instance.mirror
    if not source:
        raise ImageBuildError(f"Instance {instance_id!r}: no mirror of {instance.repo} (env.mirrors or --mirror)")
    started = time.monotonic()
    cache_dir = Path(config.env.cache_dir).expanduser()
    cache_dir.mkdir(parents=True, exist_ok=True)
    python = spec.language == PYTHON
    environment = await (ensure_environment_image if python else ensure_toolchain_image)(spec, base, cache_dir, log)
    with tempfile.TemporaryDirectory(prefix="build-", dir=cache_dir) as scratch:  # beside the wheelhouse: hard links work
        context = Path(scratch)
        cache = await mirror_repository(instance.repo, source, config.env.cache_dir, instance.base_commit)
        history = await clean_history(cache, instance.base_commit, history_mode(instance, config), instance_id)
        await fresh_checkout(history.git_dir, history.start, context / "testbed")
        if python:
            build_requirements = spec.build_requirements or project_build_requirements(context / "testbed")
            wheelhouse = cache_dir / "wheelhouse" / f"py{spec.python}" / "build"
            log(f"{instance_id}: on {environment} ({spec.source}), {len(build_requirements)} packages for the build")
            async with machine_lock("pip download"):
                await asyncio.to_thread(download_wheelhouse, build_requirements, spec.python, wheelhouse / _digest(build_requirements), log, dependencies=True)
            await asyncio.to_thread(_link_wheels, [wheelhouse / _digest(build_requirements)], context / "wheelhouse")
        else:
            log(f"{instance_id}: on {environment} ({spec.language}, {spec.source})")
        text = _instance_dockerfile(instance, spec, config)
        labels = f'LABEL {INPUTS_LABEL}="{inputs_digest(text, instance.base_commit)}"\n'
        caches = [] if python else toolchain_caches(spec.toolchain)
        if caches:
            toolchain = f"{TOOLCHAIN_LABEL}={toolchain_key(spec)}"
            text, seed = await asyncio.to_thread(with_caches, text, instance.repo, toolchain, caches)
            labels += caches_label(instance.repo, name)
            log(f"{instance_id}: compiler caches from {seed}" if seed else f"{instance_id}: no image of {instance.repo} to take compiler caches from")
        (context / "Dockerfile").write_text(text + labels)
        (context / "clean-history.sh").write_text(CLEAN_SCRIPT)
        log(f"{instance_id}: docker build {name} (network off)")
        await _build_adding_what_the_install_lacks(context, name, spec.python, log, _environment_labels(instance, spec, name))
    log(f"{instance_id}: built {name} in {time.monotonic() - started:.0f} s")
    return name


MISSING_DISTRIBUTION = re.compile(r"No matching distribution found for (\S+)")
MAX_ADDED_REQUIREMENTS = 10


def _environment_labels(instance: Task, spec: EnvironmentSpec, name: str) -> dict[str, str]:
    return environment_labels(spec, instance, instance.workdir or IMAGE_REPO_DIR, name)


def _relabel(name: str, labels: dict[str, str]) -> None:
    """`name` again with `labels`: one metadata-only layer, no step run (what the image holds did not change)."""
    with tempfile.TemporaryDirectory(prefix="relabel-") as scratch:
        (Path(scratch) / "Dockerfile").write_text(f"FROM {name}\n")
        docker_build(Path(scratch), name, lambda line: None, labels=labels)


async def _build_adding_what_the_install_lacks(
    context: Path, name: str, python: str, log: Callable[[str], None], labels: dict[str, str] | None = None
) -> None:
    """`docker build`; where the project's own install needs a package its pins lack (pytest 6.2's `toml`,
    sphinx 3's `typed_ast`: dependencies of the repository, not of its environment), that package and its
    dependencies go into the instance's wheelhouse and the build runs again (its cached steps are free)."""
    added: list[str] = []
    while True:
        try:
            await asyncio.to_thread(docker_build, context, name, log, "none", labels)
            return
        except ImageBuildError as error:
            missing = MISSING_DISTRIBUTION.search(str(error))
            if not missing or missing.group(1) in added or len(added) >= MAX_ADDED_REQUIREMENTS:
                raise
            requirement = missing.group(1)
            added.append(requirement)
            log(f"  the install needs {requirement}, which the pins lack: adding it to the instance's wheelhouse")
            async with machine_lock("pip download"):
                await asyncio.to_thread(download_wheelhouse, [requirement], python, context / "wheelhouse", log, dependencies=True)


async def build_instance_images(
    instances: list[Task],
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

    async def one(number: int, instance: Task) -> None:
        async with limit:
            log(f"[{number}/{len(instances)}] {instance.instance_id}")
            try:
                names[instance.instance_id] = await build_instance_image(instance, config, environments, force=force, log=log)
            except UniAgentGymError as exc:
                failures[instance.instance_id] = str(exc)
                log(f"{instance.instance_id}: FAILED: {exc}")

    await asyncio.gather(*(one(number, instance) for number, instance in enumerate(instances, 1)))
    return [names[i.instance_id] for i in instances if i.instance_id in names], failures
