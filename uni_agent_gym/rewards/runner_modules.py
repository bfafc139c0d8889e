"""The test runner's implementation where it lives in the repository under test.

sympy's `bin/test` runs `sympy/testing/runtests.py` (`sympy/utilities/runtests.py` before 1.6); Django's
`tests/runtests.py` runs `django/test/runner.py`; sphinx's conftest loads its own pytest plugin,
`sphinx/testing/fixtures.py`. A patch that edits those modules changes how the tests are judged: a result
that only such changes produce (failures reported as passes) would otherwise be a reward. When a patch touches
them, the reward grades the tests a second time with those modules as at the start commit, and the instance
is resolved only if both gradings resolve it (`RewardResult.runner_rerun` holds the second one).

The pytest repository is the exception: its runner *is* the code under test (each of the six pytest fixtures'
gold patches edits `src/_pytest`, and the tests exercise that code in the runner's own process), so a second
run with the runner at the start commit would fail every real fix. There the guard and the canary tests
(`canaries.py`) are what stand between a forged verdict and the reward.
"""

from __future__ import annotations

from uni_agent_gym.instances import patch_files

RUNNER_MODULES: dict[str, tuple[str, ...]] = {
    "django/django": ("django/test/runner.py",),
    "sympy/sympy": ("sympy/testing/runtests.py", "sympy/utilities/runtests.py"),
    "sphinx-doc/sphinx": ("sphinx/testing/fixtures.py",),
}


def runner_modules_touched(repo: str, patch: str) -> list[str]:
    """The modules of `repo`'s runner implementation that `patch` changes (or adds or deletes)."""
    modules = RUNNER_MODULES.get(repo, ())
    return [path for path in patch_files(patch) if path in modules]
