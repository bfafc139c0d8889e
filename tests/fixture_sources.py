"""Sources of the offline SWE-bench fixtures (../shared/swebench): the PyPI sdists their bases are made of.

An sdist unpacked into a plain directory is a mirror whose commit (fixed identity and date) is the
row's `base_commit` (see ../shared/swebench/README.md). Downloads are cached between runs.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

from uni_agent_gym.datasets import Task, normalise
from uni_agent_gym.named_locks import blocking_machine_lock

SHARED = Path(__file__).resolve().parents[2] / "shared" / "swebench"
CACHE = Path.home() / ".cache" / "uni-agent-gym-tests"


def derived_rows() -> dict[str, dict]:
    rows = [json.loads(line) for line in (SHARED / "derived.jsonl").read_text().splitlines() if line.strip()]
    return {row["instance_id"]: row for row in rows}


def fixtures() -> dict[str, dict]:
    return {item["instance_id"]: item for item in json.loads((SHARED / "fixtures.json").read_text())["instances"]}


def download_sdist(requirement: str) -> Path:
    """The sdist file of `name==version`, found on PyPI's simple index (pip download would build its
    metadata, which fails for some old releases until their spec's pre_install fixes them)."""
    import re
    import urllib.request

    name, version = requirement.split("==")
    downloads = CACHE / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(f"https://pypi.org/simple/{name.lower()}/", timeout=60) as response:
        page = response.read().decode()
    wanted = re.compile(rf"^{re.escape(name)}-{re.escape(version)}\.(tar\.gz|zip)$", re.IGNORECASE)
    links = [(url, filename) for url, filename in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', page) if wanted.match(filename.replace("_", "-"))]
    if not links:
        raise FileNotFoundError(f"no sdist of {requirement} on PyPI")
    url, filename = links[0]
    archive = downloads / filename
    if not archive.exists():
        urllib.request.urlretrieve(url.split("#")[0], archive)
    return archive


def sdist_directory(requirement: str) -> Path:
    """`Flask==2.2.3` -> the unpacked sdist (downloaded from PyPI once)."""
    target = CACHE / "sdists" / requirement.replace("==", "-")
    with blocking_machine_lock(f"fixture sdist {target}"):  # parallel test workers: one unpacks, the others wait
        return _unpacked(requirement, target)


def _unpacked(requirement: str, target: Path) -> Path:
    if (target / ".complete").exists():
        return target / "src"
    archive = download_sdist(requirement)
    (target / "src").mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            member.name = member.name.split("/", 1)[1] if "/" in member.name else ""
        tar.extractall(target / "src", members=[m for m in tar.getmembers() if m.name], filter="fully_trusted")
    (target / ".complete").touch()
    return target / "src"


FIXED_IDENTITY = {
    "GIT_AUTHOR_NAME": "uni-agent-gym fixtures", "GIT_AUTHOR_EMAIL": "fixtures@uni-agent-gym.invalid",
    "GIT_COMMITTER_NAME": "uni-agent-gym fixtures", "GIT_COMMITTER_EMAIL": "fixtures@uni-agent-gym.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}  # fmt: skip


def repo_mirror(repo: str) -> Path:
    """A git repository holding the base of every derived instance of `repo` as a branch named by its id
    (the README's "mirror"); each branch's commit is the row's base_commit. Built once."""
    mirror = CACHE / "mirrors" / repo.replace("/", "__")
    with blocking_machine_lock(f"fixture mirror {mirror}"):  # parallel test workers: one builds, the others wait
        return _built_mirror(repo, mirror)


def _built_mirror(repo: str, mirror: Path) -> Path:
    rows = [row for row in derived_rows().values() if row["repo"] == repo]
    return mirror_of(mirror, rows, lambda row: sdist_directory(row["derived_from"]["sdist"]), lambda row: row["base_commit"])


def mirror_of(mirror: Path, rows: list[dict], source_of, base_commit_of_row) -> Path:
    """`mirror` made (again, unless it holds exactly these rows) from each row's source directory, committed as
    its base (which must be the row's) on a branch named by its instance id. The caller holds the mirror's lock."""
    done = mirror / ".complete"
    if done.exists() and done.read_text() == ",".join(sorted(row["instance_id"] for row in rows)):
        return mirror
    subprocess.run(["rm", "-rf", str(mirror)], check=True)
    subprocess.run(["git", "init", "--quiet", "--bare", str(mirror)], check=True)
    for row in rows:
        commit, expected = base_commit_of(source_of(row), mirror, row["instance_id"]), base_commit_of_row(row)
        assert commit == expected, f"{row['instance_id']}: rebuilt {commit}, expected {expected}"
        subprocess.run(["git", "--git-dir", str(mirror), "branch", "--force", row["instance_id"], commit], check=True)
    done.write_text(",".join(sorted(row["instance_id"] for row in rows)))
    return mirror


def base_commit_of(source: Path, git_dir: Path, name: str) -> str:
    """The commit of every file of `source` (fixed identity and date, no parent) written into `git_dir`."""
    import os

    env = {**os.environ, **FIXED_IDENTITY, "GIT_INDEX_FILE": str(git_dir / f"index-{name}")}
    git = ["git", "-c", "safe.directory=*", "-c", "core.autocrlf=false", "--git-dir", str(git_dir), "--work-tree", str(source)]
    subprocess.run(git + ["add", "-A", "-f"], check=True, env=env)
    tree = subprocess.run(git + ["write-tree"], check=True, env=env, capture_output=True, text=True).stdout.strip()
    os.remove(env["GIT_INDEX_FILE"])
    return subprocess.run(git + ["commit-tree", tree, "-m", "base"], check=True, env=env, capture_output=True, text=True).stdout.strip()


BUILD_CACHE = CACHE / "build-cache"  # wheelhouse, mirrors and local venvs kept between runs
INTERPRETERS = {  # the host's Pythons that local venvs are made from (pyenv on these machines)
    "3.9": Path.home() / ".pyenv" / "versions" / "3.9.18" / "bin" / "python3.9",
    "3.11": Path.home() / ".pyenv" / "versions" / "3.11.7" / "bin" / "python3.11",
}


def env_section(deployment: str, rows: list[dict]) -> dict:
    """The env config of fixture episodes: on docker and ray, their offline images; on local, venvs and checkouts in
    the test build cache, the host's Pythons and the fixture mirrors (the test skips without those Pythons)."""
    from tests.conftest import require

    if deployment in ("docker", "ray"):
        return {"workspace": "image", "environments": str(SHARED / "fixtures.json")}
    require(all(path.exists() for path in INTERPRETERS.values()), "host Pythons 3.9 and 3.11 for local grading (pyenv on these machines)")
    return {"environments": str(SHARED / "fixtures.json"), "cache_dir": str(BUILD_CACHE),
            "interpreters": {version: str(path) for version, path in INTERPRETERS.items()},
            "mirrors": {repo: str(repo_mirror(repo)) for repo in sorted({normalise(row).repo for row in rows})}}  # fmt: skip


def _build_config(instances: list[Task]):
    """The config that builds fixture images: one git mirror per repository (a branch per instance), the
    test build cache; the base images the instances need are made first."""
    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.workspaces.base_images import bootstrap_base

    environments = fixtures()
    for python in sorted({".".join(environments[task.instance_id]["python"].split(".")[:2]) for task in instances}):
        bootstrap_base(python, log=lambda message: None)
    mirrors = {repo: str(repo_mirror(repo)) for repo in sorted({task.repo for task in instances})}
    return GymConfig.model_validate({"env": {"cache_dir": str(BUILD_CACHE), "mirrors": mirrors}})


async def ensure_images(instances: list[dict | Task], *, workers: int = 1, log=lambda message: None) -> list[str]:
    """The offline images of fixture instances (rows or tasks), built where missing, `workers` at a time; their names."""
    from uni_agent_gym.workspaces.image_builder import build_instance_images

    instances = [normalise(row) for row in instances]
    names, failures = await build_instance_images(instances, _build_config(instances), fixtures(), workers=workers, log=log)
    if failures:
        raise RuntimeError(f"fixture images failed to build: {failures}")
    return names


async def ensure_image(instance: dict | Task, *, force: bool = False, log=lambda message: None) -> str:
    """The offline image of one fixture instance (a row or a task), built unless present (or `force`); its name."""
    from uni_agent_gym.workspaces.image_builder import build_instance_image

    instance = normalise(instance)
    return await build_instance_image(instance, _build_config([instance]), fixtures(), force=force, log=log)
