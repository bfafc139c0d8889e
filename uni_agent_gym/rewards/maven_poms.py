"""Maven's own JVM kept out of the code under test's reach: no agent attaches to it, and a pom cannot move the tests in.

Surefire runs the tests in a JVM it forks, so what Maven prints and how it exits are out of the tests' hands, but for
two ways round that, each shown on the Java toy (`tests/test_language_attacks.py`) to earn 1.0 without its defence:

- the JDK's attach API: the forked JVM loads an agent into Maven's JVM (same user, no privilege needed), which prints a
  passing verdict and halts with 0. The grading starts Maven with `-XX:+DisableAttachMechanism` (`MAVEN_OPTS`,
  which `mvn` and `mvnw` pass to Maven's JVM and not to the forked one): it takes no agent.
- the pom: `<forkCount>0</forkCount>` (surefire's `<configuration>`, or the `forkCount` property) runs the tests in
  Maven's own JVM, where they can print the verdict and halt; a plugin in `<build>` (exec, antrun) can run code there
  too. A pom keeps the patch's changes (a fix may need a dependency), so when a patch changes what in a pom is not a
  dependency or a description (`<build>`, `<profiles>`, `<parent>`, `<modules>`, a property whose name is about
  tests, forks or the JVM), the tests are graded a second time with those poms as at the start commit, and the
  instance is resolved only if both gradings resolve it, as for a Python runner's modules (`runner_modules.py`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import PurePosixPath

from uni_agent_gym.deployments import Deployment
from uni_agent_gym.instances import patch_files
from uni_agent_gym.rewards.runner_files import at_start_and_now

ATTACH_CLOSED = 'export MAVEN_OPTS="${MAVEN_OPTS:+$MAVEN_OPTS }-XX:+DisableAttachMechanism"; '
# What a fix may change in a pom without a second grading: its dependencies, and what only describes the project.
_FIX_SECTIONS = frozenset({"dependencies", "dependencyManagement", "repositories", "pluginRepositories", "version", "name", "description",
                           "url", "developers", "contributors", "scm", "issueManagement", "ciManagement", "distributionManagement"})  # fmt: skip
_RUNNER_PROPERTY = re.compile(r"test|fork|argline|surefire|failsafe|skip|jvm|junit|agent", re.IGNORECASE)


def runner_view(text: str | None) -> str | None:
    """What in a pom configures the build and the test run, comparable (None: no pom; whitespace and comments aside)."""
    if text is None:
        return None
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return "<unparseable>"  # Maven would refuse it too; a changed one is graded again with the start's
    parts = []
    for child in root:
        name = _local(child.tag)
        if name == "properties":
            parts += [f"{_local(p.tag)}={(p.text or '').strip()}" for p in child if _RUNNER_PROPERTY.search(_local(p.tag))]
        elif isinstance(name, str) and name not in _FIX_SECTIONS:
            parts.append(ET.canonicalize(ET.tostring(child, encoding="unicode"), strip_text=True, with_comments=False))
    return repr(sorted(parts))


async def poms_with_runner_changes(deployment: Deployment, repo_dir: str, start: str, patch: str) -> list[str]:
    """The poms (`pom.xml` anywhere, Debian's `.debian-pom.xml`) whose build or test configuration the patch changed,
    added or deleted."""
    changed = []
    for path in patch_files(patch):
        if not PurePosixPath(path).name.endswith("pom.xml"):
            continue
        before, after = await at_start_and_now(deployment, repo_dir, start, path)
        if runner_view(before) != runner_view(after):
            changed.append(path)
    return changed


def _local(tag: object) -> object:
    """An element's name without its namespace (a comment's tag is a function: returned as it is)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else tag
