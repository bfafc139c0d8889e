"""mini-swe-agent's Docker environment, pointed at the container the gym already runs for the episode.

mini-swe-agent stays unmodified; this is its own extension point (`environment.environment_class`):

    mini ... -c environment.environment_class=uni_agent_gym.gateway.mini_swe_agent.GymContainerEnvironment \\
             -c environment.container=$UNI_AGENT_GYM_CONTAINER -c environment.cwd=$UNI_AGENT_GYM_REPO_DIR

It runs each command with `docker exec` in that container (mini's own way) instead of starting one from
an image, and leaves the container to the gym, which grades and releases it. On a local deployment use
mini's `local` environment with `cwd=$UNI_AGENT_GYM_REPO_DIR` instead. Imported only by mini's process.
"""

from __future__ import annotations

from minisweagent.environments.docker import DockerEnvironment, DockerEnvironmentConfig


class GymContainerEnvironmentConfig(DockerEnvironmentConfig):
    image: str = ""  # the container exists already
    container: str
    """Id or name of the running container (the gym's sandbox)."""


class GymContainerEnvironment(DockerEnvironment):
    """mini's `DockerEnvironment` on an existing container it does not own."""

    def __init__(self, **kwargs) -> None:
        super().__init__(config_class=GymContainerEnvironmentConfig, **kwargs)

    def _start_container(self) -> None:
        self.container_id = self.config.container

    def cleanup(self) -> None:
        """The gym releases the container after grading it."""
