"""Compiler caches carried from one instance image to the next of the same repository.

An instance image's build compiles its repository, C through ccache and Go into Go's build cache
(`toolchains.TOOLCHAIN_CACHES`), and keeps the cache, so that each grading's rebuild compiles only what the patch
changed. Instances of one repository share most of their sources, so the next image of a repository starts with
the caches of the last one built here (a first stage of its Dockerfile, then `COPY --from`) and compiles only what
differs: redis 7.0.15's `make distclean && make` took 77 s with an empty cache and 12 s with another instance's (262
of 265 compilations hit); gin's `go test -run '^$' .` 11.6 s and 0.7 s. ccache and Go key every entry by what was
compiled and how, so a seed changes how fast an image builds, never what it does: the image's inputs digest
(`image_builder.inputs_digest`) leaves it out, and an image built with or without one is the same image to it.

A seed is an image this builder made for that repository on the same toolchain: each carries `CACHES_LABEL`, its
repository and its own name, so the images made from it (workspace and history images inherit the label under other
names) are never taken. Its caches hold what the dataset's install compiled, before any agent ran.
"""

from __future__ import annotations

import json

from uni_agent_gym.deployments.docker import docker_client

CACHES_LABEL = "uni-agent-gym.build-caches"
SEED_STAGE = "uag-build-caches"


def caches_label(repo: str, name: str) -> str:
    """The Dockerfile line that makes image `name` a seed for the next image of `repo`."""
    return f"LABEL {CACHES_LABEL}={json.dumps(f'{repo} {tagged_name(name)}')}\n"


def seed_image(repo: str, toolchain_label: str) -> str | None:
    """The newest image built here for `repo` carrying `toolchain_label` ("key=value"), by name; None if none is."""
    images = docker_client().api.images(filters={"label": [toolchain_label, CACHES_LABEL]})
    seeds = []
    for image in images:
        seed_repo, _, name = (image.get("Labels") or {}).get(CACHES_LABEL, "").partition(" ")
        if seed_repo == repo and name in (image.get("RepoTags") or []):
            seeds.append((image.get("Created", 0), name))
    return max(seeds)[1] if seeds else None


def directories_in(image: str, directories: list[str]) -> list[str]:
    """Those of `directories` that `image` holds (read from a container created for it, never started)."""
    if not directories:
        return []
    api = docker_client().api
    container = api.create_container(image, command=["true"], network_disabled=True)["Id"]
    try:
        present = []
        for directory in directories:  # the Engine API's HEAD of a path: its stat, never the archive (docker-py has no call for it)
            with api.head(api._url("/containers/{0}/archive", container), params={"path": directory}) as response:
                if response.status_code == 200:
                    present.append(directory)
                elif response.status_code != 404:
                    api._raise_for_status(response)
        return present
    finally:
        api.remove_container(container, force=True)


def seeded(dockerfile: str, seed: str, directories: list[str]) -> str:
    """`dockerfile` (an instance layer: `FROM` its environment or toolchain first) starting with `directories` as
    they are in image `seed`."""
    first, _, rest = dockerfile.partition("\n")
    copies = "".join(f"COPY --from={SEED_STAGE} {directory} {directory}\n" for directory in directories)
    return f"FROM {seed} AS {SEED_STAGE}\n{first}\n{copies}{rest}"


def with_caches(dockerfile: str, repo: str, toolchain_label: str, directories: list[str]) -> tuple[str, str | None]:
    """`dockerfile` seeded with the caches of the last image of `repo` on this toolchain where one has them, and the
    seed's name (None: built as it is). Blocking: call it through a thread from async code."""
    seed = seed_image(repo, toolchain_label) if directories else None
    present = directories_in(seed, directories) if seed else []
    return (seeded(dockerfile, seed, present), seed) if present else (dockerfile, None)


def tagged_name(name: str) -> str:
    """`name` as the engine lists it among an image's tags (`:latest` where it names no tag)."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"
