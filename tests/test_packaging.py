"""What a user gets from pip: the package's imports against the dependencies pyproject.toml declares, the
sdist and the wheel built from it, the command's version and `python -m`, and the toy's commit once pip has
byte-compiled it. (tests/test_wheel.py installs that wheel into a fresh venv and runs the docs' commands.)

The declared dependencies are read from the package's own imports with `ast`. Each third-party import is
declared in the extra that `errors.EXTRA_OF` names for it (the extra a user is told to install when it is
missing), or in the core when it names none; what `uni-agent-gym` imports to start (module level, from the
command and the package's front door) is in the core, or every command dies on a core install.
"""

from __future__ import annotations

import ast
import asyncio
import email
import functools
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from uni_agent_gym import toy
from uni_agent_gym.cli import main
from uni_agent_gym.errors import EXTRA_OF
from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "uni_agent_gym"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# files of the package that another process imports, not the gym's: their imports are that process's
NOT_THE_GYMS = {
    "toy/repo": "the toy's own repository, run by its tests in the sandbox",
    "rewards/guard/pytest_plugin.py": "loaded by the task's pytest in the sandbox",
    "gateway/mini_swe_agent.py": "mini-swe-agent's environment class, imported by mini's own process",
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _gyms_modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if not any(relative == place or relative.startswith(place + "/") for place in NOT_THE_GYMS):
            parts = ["uni_agent_gym", *path.relative_to(PACKAGE).with_suffix("").parts]
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = _gyms_modules()


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level) for each absolute import of a file; those under `if TYPE_CHECKING:`
    run for a type checker only and are left out."""
    tree = ast.parse(path.read_text(), filename=str(path))
    lazy, checking = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            lazy |= {id(inner) for inner in ast.walk(node)}
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            checking |= {id(inner) for child in node.body for inner in ast.walk(child)}
    found = []
    for node in ast.walk(tree):
        if id(node) in checking:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) not in lazy) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found += [(f"{node.module}.{alias.name}", id(node) not in lazy) for alias in node.names]
    return found


def third_party(name: str) -> str | None:
    top = name.partition(".")[0]
    return None if top in sys.stdlib_module_names or top in ("uni_agent_gym", "__future__") else top


@functools.cache
def distribution(module: str) -> str:
    """The distribution that installs a top-level module, as pip names it (tomli on 3.11+ is not installed: its own)."""
    return canonical(_installed().get(module, [module])[0])


@functools.cache
def _installed() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def declared() -> dict[str, set[str]]:
    """Distribution -> where pyproject.toml declares it: "core" or its extras (dev's own lines are dev only)."""
    where: dict[str, set[str]] = {}
    for extra, requirements in [("core", PYPROJECT["project"]["dependencies"]), *PYPROJECT["project"]["optional-dependencies"].items()]:
        for line in requirements:
            requirement = Requirement(line)
            if canonical(requirement.name) != "uni-agent-gym":  # dev's own extras are listed as extras, not as dev
                where.setdefault(canonical(requirement.name), set()).add(extra)
    return where


def undeclared_imports(modules: dict[str, Path], extra_of: dict[str, str], where: dict[str, set[str]]) -> list[str]:
    """Each import not declared where a user who lacks it is sent: its EXTRA_OF extra, else the core."""
    wrong = set()
    for module, path in modules.items():
        for name, _ in _imports(path):
            top = third_party(name)
            if top is None:
                continue
            wanted = extra_of.get(top, "core")
            places = where.get(distribution(top), set())
            if wanted not in places and "core" not in places:
                wrong.add(f"{module} imports {top} ({distribution(top)}): declare it in {wanted} (declared in: {', '.join(sorted(places)) or 'nothing'})")
    return sorted(wrong)


def start_imports(modules: dict[str, Path]) -> dict[str, str]:
    """Third-party module -> the gym's module that imports it at module level, over everything `uni-agent-gym`
    and `import uni_agent_gym` import at module level (a module's packages run first)."""
    seen, todo, found = set(), ["uni_agent_gym.__main__", "uni_agent_gym.cli", "uni_agent_gym"], {}
    while todo:
        module = todo.pop()
        if module in seen or module not in modules:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:depth]) for depth in range(1, len(parts))]
        for name, module_level in _imports(modules[module]):
            if not module_level:
                continue
            if (top := third_party(name)) is not None:
                found.setdefault(top, module)
                continue
            while name and name not in modules:  # `uni_agent_gym.toy.REPO` -> its module
                name = name.rpartition(".")[0]
            todo.append(name)
    return found


def test_every_import_is_declared_where_a_user_who_lacks_it_is_sent():
    assert undeclared_imports(MODULES, EXTRA_OF, declared()) == []


def test_what_the_command_imports_to_start_is_in_the_core():
    core = {name for name, places in declared().items() if "core" in places}
    found = start_imports(MODULES)
    assert {"rich", "pydantic", "yaml"} <= found.keys(), found  # the walk reaches the command's own imports
    assert {f"{top} (by {module})" for top, module in found.items() if distribution(top) not in core} == set()


def test_the_checks_see_an_undeclared_import_and_one_in_the_wrong_extra(tmp_path):
    """The rules on a package of two modules, as the real one would break them."""
    (tmp_path / "uni_agent_gym").mkdir()
    cli = tmp_path / "uni_agent_gym" / "cli.py"
    cli.write_text("import rich\nimport torch\n\ndef run():\n    import pyarrow\n    import omegaconf\n")
    where = declared()
    del where["pyarrow"]
    where["omegaconf"] = {"view"}
    wrong = undeclared_imports({"uni_agent_gym.cli": cli}, EXTRA_OF, where)
    assert [line.split(":")[0] for line in wrong] == ["uni_agent_gym.cli imports omegaconf (omegaconf)", "uni_agent_gym.cli imports pyarrow (pyarrow)"]
    assert "declare it in verl (declared in: view)" in wrong[0] and "declare it in core (declared in: nothing)" in wrong[1]
    assert start_imports({"uni_agent_gym.cli": cli}) == {"rich": "uni_agent_gym.cli", "torch": "uni_agent_gym.cli"}


def build_dists(out: Path) -> tuple[Path, Path]:
    """(sdist of this tree, the wheel built from that sdist), as pip builds a package from PyPI's sdist, with this
    venv's setuptools (nothing downloaded). The sdist is made from a copy of the files git would take (tracked, or
    new and not ignored): setuptools keeps in an sdist whatever a `*.egg-info/SOURCES.txt` left in the tree by an
    earlier build lists, which would hide a file pyproject.toml no longer ships."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, check=True, capture_output=True).stdout
    source = out / "source"
    for name in filter(None, files.decode().split("\0")):
        if (ROOT / name).is_file():  # not one deleted in the tree but not yet in git
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-c", f"import setuptools.build_meta as b; b.build_sdist({str(out)!r})"], cwd=source, check=True, capture_output=True)
    (sdist,) = out.glob("*.tar.gz")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(sdist)], check=True, capture_output=True)
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return build_dists(tmp_path_factory.mktemp("dist"))


def test_the_sdist_holds_what_builds_the_wheel_and_no_tests(built):
    sdist, _ = built
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "pyproject.toml", "uni_agent_gym/configs/settings.json", "uni_agent_gym/toy/repo/.gitignore"} <= names
    assert not [name for name in names if name.startswith("tests")], "the tests need the repository around them"


def test_the_wheel_carries_the_license_the_configs_and_the_declared_requirements(built):
    _, wheel = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(name.rpartition("/")[0] for name in names if name.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(archive.read(f"{info}/METADATA"))
        shipped = {name.removeprefix("uni_agent_gym/configs/"): archive.read(name) for name in names if name.startswith("uni_agent_gym/configs/")}
        assert archive.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert metadata["License-Expression"] == "Apache-2.0" and metadata["License-File"] == "LICENSE"
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200] and "END OF TERMS AND CONDITIONS" in (ROOT / "LICENSE").read_text()
    checkout = {path.relative_to(PACKAGE / "configs").as_posix(): path.read_bytes() for path in (PACKAGE / "configs").rglob("*") if path.is_file()}
    assert shipped == checkout and "deployment/docker.yaml" in shipped
    requirements = {Requirement(line) for line in metadata.get_all("Requires-Dist")}
    assert {canonical(r.name) for r in requirements if r.marker is None} == {canonical(Requirement(line).name) for line in PYPROJECT["project"]["dependencies"]} - {"tomli"}


def test_the_command_says_its_version_and_runs_as_python_m():
    done = subprocess.run([sys.executable, "-m", "uni_agent_gym", "--version"], capture_output=True, text=True, cwd=ROOT.parent)
    assert (done.returncode, done.stdout.strip()) == (0, f"uni-agent-gym {PYPROJECT['project']['version']}"), done.stderr
    assert importlib.metadata.version("uni-agent-gym") == PYPROJECT["project"]["version"]


def test_images_build_on_the_toy_says_it_needs_none(capsys):
    assert main(["images", "build", "--dataset", "toy"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{toy.INSTANCE_ID}: the toy needs no image: its tests need only python3" in out and "FAILED" not in out


def test_the_toy_pip_installed_and_byte_compiled_commits_as_the_checkouts(tmp_path):
    """pip byte-compiles the package data's .py files: the toy's commit leaves the bytecode out (also where a
    mirror was made with it before), and a plain directory outside a package keeps its own in its commit."""
    installed = tmp_path / "site-packages" / "uni_agent_gym" / "toy"
    shutil.copytree(toy.REPO.parent, installed, ignore=shutil.ignore_patterns("__pycache__"))
    (installed.parent / "__init__.py").touch()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(installed.parent)], check=True)
    assert list((installed / "repo" / "__pycache__").glob("stats.*.pyc"))

    async def commit(source: Path, cache: str) -> str:
        return await head_commit(await mirror_repository(toy.REPO_NAME, str(source), str(tmp_path / cache)))

    checkout = asyncio.run(toy.toy_instance(str(tmp_path / "checkout")))["base_commit"]
    assert asyncio.run(commit(installed / "repo", "installed")) == checkout
    stale = tmp_path / "stale" / "mirrors" / "uni-agent-gym__toy.git"  # made by a gym that committed the bytecode
    subprocess.run(["git", "init", "-q", "--bare", str(stale)], check=True)
    tree = ["git", "--git-dir", str(stale), "--work-tree", str(installed / "repo")]
    subprocess.run([*tree, "add", "-A", "-f"], check=True)
    subprocess.run([*tree, "-c", "user.name=old", "-c", "user.email=old@gym.invalid", "commit", "-q", "-m", "base"], check=True)
    assert asyncio.run(commit(installed / "repo", "stale")) == checkout
    plain = tmp_path / "plain"  # not package data: committed whole, as every mirror of a plain directory is
    shutil.copytree(installed / "repo", plain)
    assert asyncio.run(commit(plain, "plain")) != checkout
