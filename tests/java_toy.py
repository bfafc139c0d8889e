"""A task in Java graded the way SWE-bench Multilingual grades its Maven rows: `tests/java_toy_repo/` (a bug in
`Arith.add`), one `mvn test -Dtest=X` run per graded test class (swebench's Java specs run one per test), read by
swebench's `parse_log_maven`, which names each test by the `-Dtest=` of the traced command before its run. Real
Maven, offline: Debian's (`java_toy_environments.json`). A grading takes about 20 s where jackson-core's whole suite
takes one to two minutes, so the attack suite's classes run on Java here (`test_language_attacks.py`)."""

from __future__ import annotations

from pathlib import Path

from tests.fixture_sources import BUILD_CACHE
from uni_agent_gym.instances import normalise
from uni_agent_gym.workspaces.mirrors import head_commit, mirror_repository

HERE = Path(__file__).resolve().parent
REPO = HERE / "java_toy_repo"
REPO_NAME = "uag-tests/java-toy"
ENVIRONMENTS = HERE / "java_toy_environments.json"
MAVEN = "mvn -o -B -s /etc/maven/settings-debian.xml"  # Debian's offline Maven: plugins and JUnit from /usr/share/maven-repo

GOLD_PATCH = """\
diff --git a/src/main/java/toy/Arith.java b/src/main/java/toy/Arith.java
--- a/src/main/java/toy/Arith.java
+++ b/src/main/java/toy/Arith.java
@@ -3,6 +3,6 @@ package toy;
 public class Arith {
     /** The sum of a and b. */
     public static int add(int a, int b) {
-        return a - b;
+        return a + b;
     }
 }
"""


async def java_toy_row() -> Task:
    """The Java toy as a normalised row (its mirror is its directory)."""
    base_commit = await head_commit(await mirror_repository(REPO_NAME, str(REPO), str(BUILD_CACHE)))
    return normalise({
        "instance_id": "uag-tests__java-toy-1", "repo": REPO_NAME, "base_commit": base_commit, "version": "1",
        "problem_statement": "Arith.add(2, 3) returns -1: add() must return the sum of its arguments.",
        "patch": GOLD_PATCH, "test_patch": "", "language": "java", "family": "swe-bench", "log_parser": "parse_log_maven",
        "test_command": [f"{MAVEN} test -Dtest={test}" for test in ("toy.AddTest", "toy.ZeroTest")],
        "FAIL_TO_PASS": ["toy.AddTest"], "PASS_TO_PASS": ["toy.ZeroTest"], "mirror": str(REPO),
    })  # fmt: skip


def build_config():
    """The config that builds the toy's image: its mirror, the test build cache, the bookworm base."""
    from uni_agent_gym.config import GymConfig
    from uni_agent_gym.toolchains import TOOLCHAIN_PYTHON
    from uni_agent_gym.workspaces.base_images import bootstrap_base

    bootstrap_base(TOOLCHAIN_PYTHON, log=lambda message: None)
    return GymConfig.model_validate({"env": {"cache_dir": str(BUILD_CACHE), "mirrors": {REPO_NAME: str(REPO)}}})


async def java_toy_task() -> tuple[dict, dict, dict]:
    """The toy's row, its image built where missing, and the deployment and env sections that grade it on docker."""
    from uni_agent_gym.specs import load_environments
    from uni_agent_gym.workspaces.image_builder import build_instance_images

    row = await java_toy_row()
    _, failures = await build_instance_images([row], build_config(), load_environments(ENVIRONMENTS), log=lambda message: None)
    if failures:
        raise RuntimeError(f"the Java toy's image failed to build: {failures}")
    return row, {"type": "docker"}, {"workspace": "image", "environments": str(ENVIRONMENTS)}
