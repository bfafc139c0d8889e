"""What a task in a given language needs installed: its toolchain as Debian packages.

swebench's images for other languages start from Docker Hub images (`maven:3.9-eclipse-temurin`,
`rust:`, `php:`, `ruby:`) or download a toolchain at build time (Go from dl.google.com, Node through
nvm); none of that is reachable where no registry is (these machines, air-gapped clusters). Debian
packages every one of these toolchains, and its mirror is reachable wherever `images bootstrap-base`
works, so the toolchain layer of an image is the base image plus the packages below, installed by apt.
A spec's own `apt-pkgs` (swebench's per-repository extras) come on top.

The packages are those of Debian bookworm (gcc 12, Go 1.19, OpenJDK 17, Node 18, rustc 1.63, PHP 8.2,
Ruby 3.1): an instance that needs a newer toolchain says so when it builds.

C and C++ compile through ccache: the image's build (the spec's `install` and `build`) fills its cache, so the build
each grading runs again in a fresh container of that image recompiles only what the patch changed (redis: every
file again otherwise, about a minute per grading on two cores). The cache is the image's, written before any agent
runs; a grading sandbox starts from the image, so nothing an agent does reaches another sandbox's cache.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from uni_agent_gym.errors import UniAgentGymError

if TYPE_CHECKING:
    from uni_agent_gym.datasets import Task

PYTHON = "python"
TOOLCHAIN_PYTHON = "3.11"  # the base image other languages' toolchains go on: bookworm's (its Python runs the gym's tools)
_C = ["build-essential", "libtool", "automake", "autoconf", "tcl", "bison", "flex", "cmake", "pkg-config", "ccache"]  # swebench's C base, in Debian
TOOLCHAINS: dict[str, list[str]] = {
    "c": _C,
    "cpp": [*_C, "googletest"],
    "go": ["golang-go"],
    "java": ["default-jdk-headless", "maven"],
    "javascript": ["nodejs", "npm"],
    "typescript": ["nodejs", "npm"],
    "rust": ["rustc", "cargo"],
    "php": ["php-cli", "php-xml", "php-mbstring", "php-curl", "phpunit"],
    "ruby": ["ruby", "ruby-dev", "bundler", "rake"],
}

# What a package of a toolchain sets in its image's environment: Debian's ccache puts its compiler wrappers (cc, gcc,
# g++, ...) in /usr/lib/ccache, used by whatever finds the compiler on PATH (make's `cc`, configure, cmake).
TOOLCHAIN_ENV: dict[str, dict[str, str]] = {"ccache": {"PATH": "/usr/lib/ccache:$PATH"}}
# Where a package of a toolchain keeps what it compiled, for root (who builds images): ccache's and Go's default
# directories. An instance image starts with these of the last image of its repository built here
# (`workspaces/build_caches.py`).
TOOLCHAIN_CACHES: dict[str, str] = {"ccache": "/root/.cache/ccache", "golang-go": "/root/.cache/go-build"}


class ToolchainError(UniAgentGymError, LookupError):
    """A task's language has no known toolchain; the message says which languages do."""


def language_of(task: Task) -> str:
    """The language of a task, lower case (a task with none is a Python task: every family before the multilingual
    ones)."""
    return (task.language or PYTHON).lower()


def toolchain_packages(language: str, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The Debian packages of `language`'s toolchain, then `extra` (a spec's `apt-pkgs`), without repeats."""
    if language not in TOOLCHAINS:
        known = ", ".join(sorted(TOOLCHAINS))
        raise ToolchainError(f"no toolchain is known for language {language!r} (known: python, {known})")
    return list(dict.fromkeys([*TOOLCHAINS[language], *extra]))


def toolchain_env(packages: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The environment a toolchain image of these packages sets (its Dockerfile's `ENV`s)."""
    return {key: value for package in packages for key, value in TOOLCHAIN_ENV.get(package, {}).items()}


def toolchain_caches(packages: list[str] | tuple[str, ...]) -> list[str]:
    """The compiler cache directories a toolchain image of these packages fills when it builds."""
    return [TOOLCHAIN_CACHES[package] for package in dict.fromkeys(packages) if package in TOOLCHAIN_CACHES]


# Install steps that fetch from a package registry: an image builds with the network off (only Debian's mirror,
# for the toolchain layer, is reached), so a spec that runs one cannot build here, and a row that needs one is not
# buildable offline. A step that says it works offline (`mvn -o`, `npm ci --offline`, `bundle install --local`,
# `cargo --offline`) is not one of them. Go in module mode (the default since Go 1.16) fetches the modules `go.mod`
# names for any command that loads packages (`go test -c`, `go build`, `go vet`, `go mod tidy`: swebench's Go specs
# run these), unless it builds in GOPATH mode (`GO111MODULE=off`) or from a vendor directory (`-mod=vendor`).
_NETWORK_STEPS = (
    ("composer", r"\bcomposer\s+(install|update|require|create-project)\b", None),
    ("npm", r"\bnpm\s+(install|i|ci|add)\b", r"--offline\b"),
    ("yarn", r"\byarn(\s+(install|add)\b|\s*($|[;&|]))", r"--offline\b"),
    ("pnpm", r"\bpnpm\s+(install|i|add)\b", r"--offline\b"),
    ("bundler", r"\bbundle\s+install\b", r"--local\b"),
    ("gem", r"\bgem\s+install\b", r"--local\b"),
    ("maven", r"\bmvnd?\s", r"(^|\s)(-o|--offline)\b"),
    ("gradle", r"(\bgradle|gradlew)\s", r"--offline\b"),
    ("cargo", r"\bcargo\s+(build|test|fetch|install)\b", r"--(offline|frozen)\b"),
    ("go", r"\bgo\s+(build|test|run|vet|list|get|install|mod\s+(download|tidy|vendor|verify|why|graph))\b", r"-mod[= ]vendor\b"),
    ("pip", r"\bpip3?\s+install\b", r"--no-index\b"),
    ("git", r"\bgit\s+(clone|fetch|pull|submodule\s+update)\b", None),
    ("a download", r"\b(curl|wget)\s", None),
)
# Settings that make a whole command or environment build Go offline: GOPATH mode, or a vendor directory through GOFLAGS.
_GO_OFFLINE_SETTING = re.compile(r"""\bGO111MODULE=["']?off\b|\bGOFLAGS=["']?[^;&|\n]*-mod=vendor\b""")
# How a step of a tool can be had offline, where the general advice (an environments file) needs more words.
_OFFLINE_WAYS = {
    "go": "build Go offline in GOPATH mode (the entry's `env`: GO111MODULE=off, GOPATH=/go:/usr/share/gocode; its "
    "dependencies as Debian's golang-*-dev packages in its `toolchain`; the row's `workdir` at its import path under "
    "/go/src) or from the repository's vendor directory (`-mod=vendor`, or GOFLAGS=-mod=vendor in `env`)",
}


def network_step(command: str, env: Mapping[str, str] | None = None) -> str | None:
    """The part of a shell command that fetches from a registry or the internet (`composer install`), or None. `env` is
    the environment the command runs in (an environments entry's `env`): it can put Go in GOPATH or vendor mode."""
    settings = "\n".join(f"{key}={value}" for key, value in (env or {}).items())
    go_offline = bool(_GO_OFFLINE_SETTING.search(command) or _GO_OFFLINE_SETTING.search(settings))
    for part in re.split(r"&&|\|\||;|\n", command):
        for tool, pattern, offline in _NETWORK_STEPS:
            found = re.search(pattern, part)
            if found and not (offline and re.search(offline, part)) and not (tool == "go" and go_offline):
                return part.strip()
    return None


def offline_way(step: str) -> str:
    """How the tool of a step `network_step` found can work offline, where there is more to say than "give offline
    steps in an environments file" ("" where not)."""
    return next((_OFFLINE_WAYS.get(tool, "") for tool, pattern, _ in _NETWORK_STEPS if re.search(pattern, step)), "")
