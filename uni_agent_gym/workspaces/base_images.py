"""Base images without a registry: a minimal Debian with a given Python, built by debootstrap and
imported into Docker.

Where Docker Hub is out of reach (air-gapped clusters, these machines) this is how the first image
gets onto a machine: `debootstrap` needs only a Debian mirror. Each supported Python is the system
Python of one Debian release. These are command-line tools (blocking), not used on an event loop.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from uni_agent_gym.deployments.docker import docker_client, image_exists, image_labels
from uni_agent_gym.errors import DeploymentError
from uni_agent_gym.named_locks import blocking_machine_lock

DEBIAN_SUITE_BY_PYTHON = {"3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}
GLIBC_MINOR_BY_PYTHON = {"3.9": 31, "3.11": 36, "3.13": 41}  # the glibc 2.x of each base: newest manylinux wheel it runs
# A compiler and headers too: releases without a wheel for the image's Python (cffi 1.14 on 3.11) build from source.
BASE_PACKAGES = ["python3", "python3-venv", "python3-dev", "git", "ca-certificates", "patch", "build-essential", "libffi-dev"]
RECIPE_LABEL = "uni-agent-gym.base-recipe"
DEFAULT_MIRROR = "http://deb.debian.org/debian"


class BootstrapUnavailable(DeploymentError):
    """This host cannot run debootstrap (not installed, or not root): the message says what would let it."""


def base_image_name(python: str) -> str:
    """The local name of the base image for a Python version, e.g. `uni-agent-gym/base:py3.11`."""
    return f"uni-agent-gym/base:py{python}"


def base_recipe(python: str) -> str:
    """A short hash of what goes into a base image, stored as its label: a changed recipe rebuilds it."""
    return hashlib.sha256(f"{DEBIAN_SUITE_BY_PYTHON[python]} {' '.join(BASE_PACKAGES)}".encode()).hexdigest()[:12]


def host_debian_mirror(apt_dir: Path = Path("/etc/apt")) -> str:
    """The Debian mirror this host's apt uses (it is reachable when apt works), else deb.debian.org."""
    for source in sorted(apt_dir.glob("sources.list.d/*")) + [apt_dir / "sources.list"]:
        try:
            text = source.read_text()
        except OSError:
            continue
        for match in re.finditer(r"^(?:URIs:\s*|deb\s+(?:\[[^]]*\]\s+)?)(\S+/debian)/?\s", text, re.MULTILINE):
            return match.group(1)
    return DEFAULT_MIRROR


def bootstrap_base(
    python: str,
    *,
    mirror: str | None = None,
    name: str | None = None,
    force: bool = False,
    log: Callable[[str], None] = print,
) -> str:
    """Build the base image for `python` unless it exists (or `force`); return its name."""
    if python not in DEBIAN_SUITE_BY_PYTHON:
        supported = ", ".join(DEBIAN_SUITE_BY_PYTHON)
        raise DeploymentError(f"Expects --python one of {supported} (the Pythons of Debian releases), got {python!r}")
    name = name or base_image_name(python)
    with blocking_machine_lock(f"base image {name}"):  # another process bootstrapping it: wait, then find it built
        return _bootstrap(python, name, mirror, force, log)


def _bootstrap(python: str, name: str, mirror: str | None, force: bool, log: Callable[[str], None]) -> str:
    client = docker_client()
    recipe = base_recipe(python)
    labels = None if force else image_labels(name)
    if labels is not None:
        if labels.get(RECIPE_LABEL) == recipe:
            log(f"{name} exists; nothing to do (--force rebuilds it)")
            return name
        log(f"{name} was made by another recipe; rebuilding it")
    if shutil.which("debootstrap") is None:
        raise BootstrapUnavailable("debootstrap is not installed: `apt-get install -y debootstrap` (Debian/Ubuntu)")
    if os.geteuid() != 0:
        raise BootstrapUnavailable("debootstrap needs root: run `uni-agent-gym images bootstrap-base` as root")
    suite, mirror = DEBIAN_SUITE_BY_PYTHON[python], mirror or host_debian_mirror()
    with tempfile.TemporaryDirectory(prefix="uni-agent-gym-rootfs-") as workdir:
        rootfs, archive = Path(workdir) / "rootfs", Path(workdir) / "rootfs.tar"
        log(f"debootstrap {suite} (Python {python}) from {mirror} ...")
        command = [
            "debootstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}", suite, str(rootfs), mirror,
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise DeploymentError(f"debootstrap failed ({done.returncode}):\n{(done.stdout + done.stderr)[-2000:]}")
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (rootfs / cache).glob("*"):
                if entry.is_file():
                    entry.unlink()
        subprocess.run(["tar", "-C", str(rootfs), "-cf", str(archive), "."], check=True)
        log(f"docker import as {name} ...")
        repository, _, tag = name.partition(":")
        client.api.import_image(
            src=str(archive),
            repository=repository,
            tag=tag or "latest",
            changes=[
                "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "ENV LANG=C.UTF-8",
                "WORKDIR /",
                f"LABEL {RECIPE_LABEL}={recipe}",
                'CMD ["bash"]',
            ],
        )
    if not image_exists(name):
        raise DeploymentError(f"docker import did not produce {name}")
    log(f"built {name}")
    return name
