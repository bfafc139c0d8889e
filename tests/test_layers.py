"""The package's layers, read from its imports with `ast`: each package imports only packages below it,
and no module imports itself back through others (no circle). The order is the README's Layout section;
a new package gets a line here and there.

Every import counts, at module level or inside a function (a lazy import is still an arrow), except those
under `if TYPE_CHECKING:` (they run only for a type checker).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "uni_agent_gym"

# Top to bottom; a name imports only names on later lines. `__init__` is the package's own front door
# (`make_env`, re-exports), `cli` the command line.
LAYERS = [
    ["__main__"],
    ["cli", "__init__"],
    ["viewer"],
    ["demo", "dataset_summary", "validation"],
    ["eval", "verl"],
    ["gateway"],
    ["agent", "tokens", "advantages"],
    ["envs"],
    ["toy"],
    ["rewards"],
    ["tools", "workspaces"],
    ["deployments"],
    ["instances", "specs"],
    ["datasets", "toolcalls", "config", "named_locks", "arguments"],
    ["files", "seed_vocabulary", "diffs", "toolchains", "tokenizer_loading", "swebench4"],
    ["errors"],
]
LAYER_OF = {name: depth for depth, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = ["uni_agent_gym", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def area(module: str) -> str:
    """The top-level name a module belongs to: `uni_agent_gym.envs.spaces` -> `envs`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Line numbers of the imports under `if TYPE_CHECKING:`."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            lines |= {inner.lineno for child in node.body for inner in ast.walk(child) if isinstance(inner, (ast.Import, ast.ImportFrom))}
    return lines


def imports_of(module: str) -> set[str]:
    """The package's modules that `module` imports (a name imported from a package counts as its submodule
    when there is one, else as the package)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), filename=str(path))
    skipped = _type_checking_only(tree)
    targets: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, one level up per extra dot
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            submodules = {f"{base}.{alias.name}" for alias in node.names} & MODULES.keys()
            targets |= submodules or {base}
    resolved = set()
    for target in targets:
        while target and target not in MODULES:  # `uni_agent_gym.deployments.docker.image_exists` -> its module
            target = target.rpartition(".")[0]
        if target and target != module:
            resolved.add(target)
    return resolved


GRAPH = {module: imports_of(module) for module in MODULES}


def arrows_up() -> list[str]:
    """Every import from a package to one that is not below it."""
    wrong = []
    for module, targets in sorted(GRAPH.items()):
        for target in sorted(targets):
            source_area, target_area = area(module), area(target)
            if source_area != target_area and LAYER_OF[target_area] <= LAYER_OF[source_area]:
                wrong.append(f"{module} -> {target} ({source_area} is not above {target_area})")
    return wrong


def circles() -> list[list[str]]:
    """Import circles among modules (Tarjan's strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def test_every_package_has_a_layer():
    unplaced = sorted({area(module) for module in MODULES} - LAYER_OF.keys())
    assert not unplaced, f"packages with no line in LAYERS (and the README's Layout): {unplaced}"


def test_no_package_imports_one_above_it():
    wrong = arrows_up()
    assert not wrong, "imports that run back up the layers:\n" + "\n".join(wrong)


def test_no_import_circle():
    found = circles()
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(component) for component in found)


def test_workspaces_know_nothing_of_envs_or_rewards():
    reached = {target for module, targets in GRAPH.items() if area(module) == "workspaces" for target in targets}
    assert not {area(target) for target in reached} & {"envs", "rewards"}


def test_the_checker_sees_an_arrow_up_and_a_circle(monkeypatch):
    """The checks above can fail: an import from `errors` up to `envs`, and a circle of two modules."""
    monkeypatch.setitem(GRAPH, "uni_agent_gym.errors", GRAPH["uni_agent_gym.errors"] | {"uni_agent_gym.envs.spaces"})
    assert any(line.startswith("uni_agent_gym.errors -> uni_agent_gym.envs.spaces") for line in arrows_up())
    monkeypatch.setitem(GRAPH, "uni_agent_gym.files", GRAPH["uni_agent_gym.files"] | {"uni_agent_gym.config"})
    assert ["uni_agent_gym.config", "uni_agent_gym.files"] in circles()


@pytest.mark.parametrize(
    "module, names",
    [
        ("uni_agent_gym.deployments", ["make_deployment"]),
        ("uni_agent_gym", ["make_env", "SWEEnv", "AsyncSWEEnv"]),
        ("uni_agent_gym.instances", ["load_instances"]),
        ("uni_agent_gym.rewards.swebench", ["SWEBenchReward"]),
        ("uni_agent_gym.verl.rollout_cache", ["RolloutCache", "MaxTokenExceededError"]),
        ("uni_agent_gym.verl.agent_loop", ["UniAgentLoop"]),
        ("uni_agent_gym.verl.gateway_loop", ["GatewayAgentLoop"]),
        ("uni_agent_gym.envs", ["CommandReward", "Reward"]),
    ],
)
def test_the_public_entry_points_import(module, names):
    """DESIGN.md's entry points keep their addresses across the moves."""
    imported = importlib.import_module(module)
    for name in names:
        assert getattr(imported, name) is not None


def test_the_rollout_cache_has_one_class_at_both_addresses():
    from uni_agent_gym.tokens.rollout_cache import RolloutCache
    from uni_agent_gym.verl.rollout_cache import RolloutCache as OldAddress

    assert OldAddress is RolloutCache


def test_the_readme_stays_a_front_page():
    """README.md is the front page (what it is, the two commands, a tour, links); the rest belongs in docs/."""
    lines = (Path(__file__).resolve().parents[1] / "README.md").read_text().splitlines()
    assert len(lines) < 150, f"README.md has {len(lines)} lines: move detail into docs/"
