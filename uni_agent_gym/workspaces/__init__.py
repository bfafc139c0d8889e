"""From a task to a ready sandbox: the repository at its start commit, with nothing past it.

Bottom to top: `host_git` (the host's git, run with nothing of a repository's configuration), `mirrors`
(a bare clone per repository), `history` (the clean history the agent may see), `base_images`,
`image_builder`, `history_images` and `hidden_images` (instance images, and the clean-history and
hidden-test images derived from them), `recorded_environment` (what an image built here records of its
task's environment, checked against the task when a sandbox opens on it), `validated` (the environments that
passed `uni-agent-gym validate`) and `validations_file` (its report beside a dataset, merged with them),
`local_checkout` and `local_venv` (the local deployment's checkouts and venvs), `episode` (`Episode`: what an opened
sandbox holds, which every layer above reads), `open` (`open_workspace`: a started sandbox at the start commit) and
`start_state` (`open_task`: a task's start state on top). Nothing here imports `envs` or `rewards`: both sit on this
package.
"""

from __future__ import annotations

from uni_agent_gym.workspaces.episode import Episode
from uni_agent_gym.workspaces.host_git import WorkspaceError
from uni_agent_gym.workspaces.open import open_workspace

__all__ = ["Episode", "WorkspaceError", "open_workspace"]
