"""The task prompt an episode starts with: the issue, where the repository is, how to work."""

from __future__ import annotations

from uni_agent_gym.datasets import Task

TEMPLATE = """\
<uploaded_files>
{repo_dir}
</uploaded_files>
I've uploaded a code repository in the directory {repo_dir}. Consider the following issue description:

<issue_description>
{problem_statement}
</issue_description>

Make the minimal changes to non-test files in {repo_dir} so that the requirements of the <issue_description> are met.
Tests for the issue are already taken care of: you do not need to modify any tests.

Work with the tools ({tools}), one tool call per turn:
1. Explore the repository to find the code relevant to the issue.
2. Reproduce the problem (e.g. a small script run with execute_bash).
3. Edit the source code to fix it (str_replace_editor), and check that your script now behaves correctly.
4. Think about edge cases, then call `finish` when you are done.
"""


def task_prompt(instance: Task, repo_dir: str, tools: list[str]) -> str:
    """The first observation of an episode."""
    return TEMPLATE.format(repo_dir=repo_dir, problem_statement=instance.problem_statement.strip(), tools=", ".join(tools))
