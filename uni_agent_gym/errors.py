"""One exception tree for the whole package.

Subclasses also inherit the builtin they resemble, so callers may catch ours or the builtin
(`except TimeoutError` catches `CommandTimeoutError`)."""


class UniAgentGymError(Exception):
    """Base of every error raised on purpose by uni-agent-gym."""


class ConfigError(UniAgentGymError, ValueError):
    """A config file or value is invalid; the message names the field and never shows a secret."""


class DeploymentError(UniAgentGymError, RuntimeError):
    """The sandbox could not be created, reached or used (an infrastructure fault, not the agent's)."""


class DeploymentNotStartedError(DeploymentError):
    """A deployment method was called before `start()` or after `stop()`."""


class ImageNotFoundError(DeploymentError, LookupError):
    """The image a deployment needs is not present and could not be pulled."""


class SandboxDiedError(DeploymentError):
    """The sandbox (container, process or Modal sandbox) is gone in the middle of the work."""


class SandboxFileNotFoundError(UniAgentGymError, FileNotFoundError):
    """A file asked of the sandbox does not exist there."""


class ToolCallFormatError(UniAgentGymError, ValueError):
    """The model's call cannot be run as written (no call, malformed, unknown tool, missing or mistyped argument)."""
