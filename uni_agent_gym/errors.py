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


# optional dependencies (their top-level import names) -> the extra of pyproject.toml that installs them
# (tests/test_packaging.py: each is declared in that extra; an import not named here is declared in the core)
EXTRA_OF = {"verl": "verl", "transformers": "verl", "torch": "verl", "hydra": "verl", "omegaconf": "verl", "ray": "ray",
            "modal": "modal", "fastapi": "view", "uvicorn": "view", "orjson": "view", "swesmith": "swesmith",
            "aiohttp": "verl", "jinja2": "verl", "tokenizers": "verl", "huggingface_hub": "verl", "httpx": "verl"}  # fmt: skip


class MissingExtraError(UniAgentGymError, ModuleNotFoundError):
    """A command needs an optional dependency that is not installed; the message names the extra that brings it."""

    @classmethod
    def of(cls, exc: ModuleNotFoundError, command: str) -> "MissingExtraError | None":
        """The error to show for `exc` raised by `command`, or None when the module is not an optional dependency."""
        module = (exc.name or "").partition(".")[0]
        if module not in EXTRA_OF:
            return None
        extra = EXTRA_OF[module]
        return cls(f"{command} needs {module}, which is not installed here: pip install -e '.[{extra}]' in a checkout "
                   f"(make test installs every extra), or pip install 'uni-agent-gym[{extra}]'", name=module)  # fmt: skip
