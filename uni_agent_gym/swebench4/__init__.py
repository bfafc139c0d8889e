"""What rows written for swebench 4.x need and swebench 5.x no longer ships: the spec tables (repository and version ->
Python or toolchain packages, install, build and test commands) and the rule that names a row's tests from its test
patch.

swebench 5.x grades rows that carry their own `log_parser`, `eval_type`, `image` and `eval_script`; SWE-bench Lite and
Verified as published, SWE-Gym and SWE-rebench rows carry none of them, so the gym keeps 4.1.0's tables for them. The
`specs_*.py` modules are swebench 4.1.0's `harness/constants/<language>.py` unchanged, and `test_commands.py` holds
the few functions of its `harness/test_spec/` these rows use; swebench is MIT-licensed (`LICENSE` beside this file,
Copyright (c) 2023 Carlos E Jimenez, John Yang, Alexander Wettig, Shunyu Yao, Kexin Pei, Ofir Press, Karthik R
Narasimhan). Parsers and grading are not here: 5.x's decide every row.
"""

from __future__ import annotations

from typing import Any

from uni_agent_gym.swebench4.specs_c import MAP_REPO_VERSION_TO_SPECS_C
from uni_agent_gym.swebench4.specs_go import MAP_REPO_VERSION_TO_SPECS_GO
from uni_agent_gym.swebench4.specs_java import MAP_REPO_VERSION_TO_SPECS_JAVA
from uni_agent_gym.swebench4.specs_javascript import MAP_REPO_VERSION_TO_SPECS_JS
from uni_agent_gym.swebench4.specs_php import MAP_REPO_VERSION_TO_SPECS_PHP
from uni_agent_gym.swebench4.specs_python import MAP_REPO_VERSION_TO_SPECS_PY
from uni_agent_gym.swebench4.specs_ruby import MAP_REPO_VERSION_TO_SPECS_RUBY
from uni_agent_gym.swebench4.specs_rust import MAP_REPO_VERSION_TO_SPECS_RUST

# swebench 4.1.0's harness/constants/__init__.py: the tables by language, and the language of each repository as the
# extension it filed the repository under
_BY_EXTENSION = {"c": MAP_REPO_VERSION_TO_SPECS_C, "go": MAP_REPO_VERSION_TO_SPECS_GO, "java": MAP_REPO_VERSION_TO_SPECS_JAVA,
                 "js": MAP_REPO_VERSION_TO_SPECS_JS, "php": MAP_REPO_VERSION_TO_SPECS_PHP, "py": MAP_REPO_VERSION_TO_SPECS_PY,
                 "rb": MAP_REPO_VERSION_TO_SPECS_RUBY, "rs": MAP_REPO_VERSION_TO_SPECS_RUST}  # fmt: skip
MAP_REPO_VERSION_TO_SPECS: dict[str, dict[str, dict[str, Any]]] = {repo: specs for table in _BY_EXTENSION.values() for repo, specs in table.items()}
MAP_REPO_TO_EXT: dict[str, str] = {repo: extension for extension, table in _BY_EXTENSION.items() for repo in table}


def spec(repo: str, version: str) -> dict[str, Any] | None:
    """swebench 4.1.0's spec of a repository at a version, or None."""
    return MAP_REPO_VERSION_TO_SPECS.get(repo, {}).get(version)
