"""Every config of uni-agent-gym as pydantic models, loaded from YAML, JSON or TOML.

String values may say `${VAR}` or `${VAR:-default}`; they are filled from the environment when the
file is loaded. An unset variable is an error that names it. Values that came from the environment
are treated as secrets: they never appear in an error message, and no error shows an input value.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from uni_agent_gym.errors import ConfigError
from uni_agent_gym.files import read_text
from uni_agent_gym.seed_vocabulary import translate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TOOL_FORMATS = Literal[
    "auto", "lenient", "hermes", "hermes-xml", "xml", "glm-4.5", "llama3-json", "json", "mistral", "mistral-args",
    "deepseek-v3", "deepseek-v3.1",
]  # fmt: skip  # uni_agent_gym.toolcalls.FORMATS, plus auto; a test keeps them equal
# top-level tables of verl's trainer config (and the TOML's `[rollouter]`) that no gym settings file has
VERL_TABLES = frozenset({"actor_rollout_ref", "algorithm", "async_training", "critic", "custom_reward_function", "data", "ray_kwargs",
                         "reward_model", "rollouter", "trainer"})  # fmt: skip
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _Strict(BaseModel):
    """Base for config sections: unknown keys are errors, so a typo fails at load time."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class _SandboxOptions(_Strict):
    """Options every deployment has: how its shell session runs commands."""

    command_timeout: float = Field(
        120.0, gt=0, description="Seconds a command may run before it is interrupted inside the sandbox."
    )
    output_limit: int = Field(
        100_000,
        ge=1_000,
        description="Bytes of command output kept (head and tail halves); the rest is elided with a count.",
    )
    startup_timeout: float = Field(60.0, gt=0, description="Seconds to wait for the sandbox and its shell.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment variables set in the sandbox.")

    # The deployment this config makes (`module:Class`, imported when first made) and the extra that installs its SDK.
    implementation: ClassVar[str] = "uni_agent_gym.deployments.local:LocalDeployment"
    # Where its images live (`module:Class`, `deployments/sites.py`): what differs between deployments for everything
    # above them (workspaces, image derivation, validation, pools, cleanup), asked of the site, never of the type.
    site: ClassVar[str] = "uni_agent_gym.deployments.sites:NoImages"
    extra: ClassVar[str | None] = None


# Host variables that change how Python and test runners behave (shell-style patterns): a local sandbox does
# not inherit them by default, and local venvs are made without them.
PYTHON_AND_TEST_RUNNER_VARIABLES = ("PYTHON*", "PYTEST_*", "VIRTUAL_ENV")


class LocalDeploymentConfig(_SandboxOptions):
    """A shell on this host in a working directory. NOT a security boundary: the agent can touch anything
    the host user can."""

    type: Literal["local"] = "local"
    workdir: str | None = Field(
        None, description="Host directory the shell starts in; a fresh temporary directory, removed on stop, when unset."
    )
    host_env_excluded: list[str] = Field(
        default_factory=lambda: list(PYTHON_AND_TEST_RUNNER_VARIABLES),
        description="Host variables (shell-style patterns) the sandbox does not inherit: they change how Python and "
        "test runners behave (a host's PYTEST_ADDOPTS would reach the graded tests). `env` can still set any of them.",
    )


class DockerDeploymentConfig(_SandboxOptions):
    """A container started with the docker SDK, one per deployment, removed on stop."""

    type: Literal["docker"] = "docker"
    implementation: ClassVar[str] = "uni_agent_gym.deployments.docker:DockerDeployment"
    site: ClassVar[str] = "uni_agent_gym.deployments.sites:HereImages"
    extra: ClassVar[str | None] = "docker"
    image: str = Field("uni-agent-gym/base:py3.11", description="Image to run; must exist locally or be pullable.")
    pull: Literal["missing", "never", "always"] = Field(
        "missing", description="Pull the image when it is missing (default), never, or before every start."
    )
    workdir: str | None = Field(None, description="Directory the shell starts in; the image's WORKDIR when unset.")
    cpus: float | None = Field(2.0, ge=0.01, description="CPU limit in cores; none when null.")
    memory: str | None = Field("4g", description="Memory limit (docker syntax: 512m, 4g); none when null.")
    pids_limit: int | None = Field(1024, gt=0, description="Maximum number of processes in the container.")
    network: Literal["bridge", "none"] = Field("bridge", description="`none` cuts the container off any network.")
    cap_add: list[str] = Field(
        default_factory=lambda: ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID"],
        description="Linux capabilities kept; all others are dropped (a root shell can still own and edit files).",
    )
    run_id: str | None = Field(
        None,
        description="Label value that groups containers of one run for `uni-agent-gym cleanup --run-id`; "
        "$UNI_AGENT_GYM_RUN_ID when null and set, else one per process.",
    )
    pool_size: int = Field(
        0, ge=0, description="Idle containers kept per image, scrubbed and verified clean, for later resets to reuse; 0: off."
    )
    read_only_root: bool = Field(
        False, description="Mount the root filesystem read-only; the workdir (a volume seeded from the image) and /tmp stay writable."
    )

    @field_validator("memory", "cpus", "pids_limit", mode="wrap")
    @classmethod
    def _docker_accepts(cls, value: Any, handler: Any, info: Any) -> Any:
        """Docker's own rules for its limits, checked when the config loads instead of when a container starts."""
        from docker.errors import DockerException
        from docker.utils import parse_bytes

        try:
            value = handler(value)
            if info.field_name == "memory" and value is not None and parse_bytes(value) < _DOCKER_MIN_MEMORY:
                raise ValueError("below Docker's minimum")
        except (ValueError, DockerException):  # pydantic's ValidationError is a ValueError
            raise PydanticCustomError("docker_limit", "expects " + _DOCKER_LIMITS[info.field_name]) from None
        return value


_DOCKER_MIN_MEMORY = 6 * 1024 * 1024  # the engine refuses a smaller memory limit
_DOCKER_LIMITS = {
    "memory": "a size Docker reads, a number with the unit b, k, m or g of at least 6m, e.g. 512m or 4g (null: no limit)",
    "cpus": "a number of CPU cores of at least 0.01, e.g. 2 or 0.5 (null: no limit)",
    "pids_limit": "a whole number of processes of at least 1, e.g. 1024 (null: no limit)",
}


class ModalDeploymentConfig(_SandboxOptions):
    """A `modal.Sandbox` in Modal's cloud, from an image in a registry."""

    type: Literal["modal"] = "modal"
    implementation: ClassVar[str] = "uni_agent_gym.deployments.modal:ModalDeployment"
    site: ClassVar[str] = "uni_agent_gym.deployments.sites:RemoteImages"
    extra: ClassVar[str | None] = "modal"
    image: str = Field("python:3.11-slim", description="Registry image name (it must contain bash).")
    app_name: str = Field("uni-agent-gym", description="Modal app the sandboxes are created under.")
    workdir: str | None = Field(None, description="Directory the shell starts in; the image's WORKDIR when unset.")
    sandbox_timeout: int = Field(3600, gt=0, description="Lifetime of the sandbox in seconds (Modal's default is 300).")
    cpu: float | None = Field(None, gt=0, description="CPU cores requested; Modal's default when null.")
    memory_mb: int | None = Field(None, gt=0, description="Memory requested in MiB; Modal's default when null.")
    block_network: bool = Field(False, description="Cut the sandbox off any network.")


class RayDeploymentConfig(DockerDeploymentConfig):
    """A docker sandbox on a node of a Ray cluster that offers `resource`: the node's sandbox host (one actor per
    node) drives that node's own container engine with every docker option above (the socket never leaves the node)."""

    type: Literal["ray"] = "ray"  # type: ignore[assignment]
    implementation: ClassVar[str] = "uni_agent_gym.deployments.ray:RayDeployment"
    site: ClassVar[str] = "uni_agent_gym.deployments.sites:NodeImages"
    extra: ClassVar[str | None] = "ray"
    address: str = Field(
        "auto",
        description="The cluster to connect to: `auto` (the one this process is in, or $RAY_ADDRESS), or HOST:PORT of its head. "
        "Inside verl's workers Ray is already connected and this is not used.",
    )
    resource: str = Field(
        "uni_agent_gym_sandbox", description="Custom resource a node offers per sandbox it can hold (`ray start --resources`); the node's host counts it."
    )
    per_sandbox: float = Field(1.0, gt=0, description="How much of `resource` one sandbox takes.")
    scheduling: Literal["SPREAD", "DEFAULT"] = Field(
        "SPREAD", description="SPREAD: each sandbox starts on the next node round (a group lands on every node); DEFAULT: fill the nodes in one order."
    )
    node: str | None = Field(
        None, description="A node id to place the sandbox on (the reward sets it: a grading sandbox sits beside the agent's); any node when null."
    )
    call_timeout: float = Field(
        60.0, gt=0, description="Seconds a call to the sandbox's node may take beyond the command's own timeout; past it the node is taken as dead."
    )
    start_timeout: float = Field(
        600.0, gt=0, description="Seconds start() waits for a node with a free `resource`, then fails naming it."
    )
    registry: str | None = Field(
        None, description="HOST:PORT of a registry a node pulls an image it lacks from (`uni-agent-gym images push` fills it); none when null."
    )


_DEPLOYMENT_MODELS = (LocalDeploymentConfig, DockerDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig)
DEFAULT_DEPLOYMENT_TYPE = "docker"
_OPTIONS_BY_TYPE = {model.model_fields["type"].default: set(model.model_fields) for model in _DEPLOYMENT_MODELS}
DEPLOYMENT_TYPES = tuple(_OPTIONS_BY_TYPE)  # local, docker, modal, ray


def _listed(names: list[str], conjunction: str) -> str:
    """["a", "b", "c"] -> "a, b and c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def _misplaced_options(selected: str, options: Iterable[str], chosen_by: str) -> list[str]:
    """What is wrong with deployment `options` under type `selected`: options no type has, and options of
    other types only (`chosen_by` says where `selected` came from, for the message)."""
    problems = []
    for option in options:
        if option in _OPTIONS_BY_TYPE[selected]:
            continue
        owners = [name for name, fields in _OPTIONS_BY_TYPE.items() if option in fields]
        if owners:
            problems.append(
                f"{option} is an option of {_listed(owners, 'and')}, not of {selected} ({chosen_by}): "
                f"set deployment.type to {_listed(owners, 'or')}, or remove {option}"
            )
            continue
        known = sorted(set().union(*_OPTIONS_BY_TYPE.values()))
        close = difflib.get_close_matches(option, known, n=1)
        hint = f"did you mean {close[0]}?" if close else f"{selected} has: {', '.join(sorted(_OPTIONS_BY_TYPE[selected]))}"
        problems.append(f"{option} is not an option of any deployment type ({hint})")
    return problems


def _choose_deployment_type(data: Any) -> Any:
    """Before `type` picks the model: fill in the default type, and refuse every option the type lacks,
    naming the types that have it (options a later layer's switch of `type` left behind are dropped by
    `load_config` before this sees them)."""
    if not isinstance(data, dict) or data.get("type", DEFAULT_DEPLOYMENT_TYPE) not in _OPTIONS_BY_TYPE:
        return data  # the discriminator's own error names the valid types
    selected = data.get("type", DEFAULT_DEPLOYMENT_TYPE)
    problems = _misplaced_options(selected, [key for key in data if key != "type"], "deployment.type" if "type" in data else "the default type")
    if problems:
        raise PydanticCustomError("deployment_option", "; ".join(problems))
    return {"type": selected, **data}


DeploymentConfig = Annotated[
    Union[LocalDeploymentConfig, DockerDeploymentConfig, ModalDeploymentConfig, RayDeploymentConfig],
    Field(discriminator="type"),
    BeforeValidator(_choose_deployment_type),
]


class EnvConfig(_Strict):
    """The episode: which rows, which tools, how long, where the repository comes from."""

    dataset: str | None = Field(
        None,
        description="Rows for reset(options={'instance_id': ...}): a .json/.jsonl/.parquet file or a datasets name; "
        "the built-in toy task when null or `toy` (as `--dataset toy`).",
    )
    split: str = Field("test", description="Dataset split, for datasets names.")
    dataset_format: Literal["auto", "swe-bench", "swe-gym", "swe-rebench", "swe-smith", "r2e-gym", "multi-swe-bench"] = Field(
        "auto", description="The dataset family of the rows; auto: recognised per row by its columns (uni_agent_gym.datasets)."
    )
    max_turns: int = Field(50, gt=0, description="Steps before the episode is truncated (and graded).")
    timings_in_info: bool = Field(
        False,
        description="Also put each reset's and step's wall-clock timings in info['timings'] (always in env.last_timings). "
        "They never repeat, so with this on Gymnasium's determinism checks fail.",
    )
    tools: list[Literal["execute_bash", "str_replace_editor", "search", "finish"]] = Field(
        default_factory=lambda: ["execute_bash", "str_replace_editor", "search", "finish"],
        description="Tools offered to the agent, in this order.",
    )
    repo_dir: str = Field(
        "/testbed", description="Where a mirror checkout goes in docker and modal sandboxes (instance images: /testbed)."
    )
    workspace: Literal["auto", "image", "mirror"] = Field(
        "auto",
        description="image: the instance's image holds the repo (SWE-bench images); mirror: the deployment's image "
        "plus the repo checked out from a mirror; auto: the instance image when it is present (docker) or no mirror "
        "is known, else the mirror. The local deployment always uses the mirror.",
    )
    mirrors: dict[str, str] = Field(
        default_factory=dict,
        description="repo -> mirror: a local git repository, a plain directory, a git bundle, or a clone URL.",
    )
    cache_dir: str = Field("~/.cache/uni-agent-gym", description="Host cache: mirrors, wheelhouses, local workspaces.")
    history: Literal["ancestry", "none"] = Field(
        "ancestry",
        description="What the agent's repository holds besides the start commit's files: ancestry: the start commit "
        "and its ancestors, nothing later (no remotes, other branches, tags, reflog, stash or later objects); none: one "
        "root commit with the start tree (plus the environment commit in images), for datasets whose ancestry leaks.",
    )
    environments: str | None = Field(
        None, description="Per-instance environment overrides (JSON, see uni_agent_gym.specs); swebench's specs otherwise."
    )
    validation: Literal["warn", "skip", "require"] | None = Field(
        None,
        description="Tasks whose image has not passed `uni-agent-gym validate` on this machine (docker, ray): warn: `eval` runs "
        "them, naming them once; require: `eval` leaves them out, naming each, and an episode of one (a training rollout) is "
        "an env_error, masked, before its sandbox starts; skip: not checked. Null: warn for `eval`, skip for training.",
    )
    validations: str | None = Field(
        None,
        description="A validations file: the validation.json that `uni-agent-gym validate --output DIR` wrote beside the dataset. "
        "Reward reports then carry each task's verdict and strength (`survivors: k of n`) from it, merged with this machine's "
        "(workspaces/validations_file.py), and the zero rule and `validation` count its verdicts for the same image id.",
    )
    interpreters: dict[str, str] = Field(
        default_factory=dict,
        description="Python version -> host interpreter for local venvs, e.g. {'3.9': '/usr/bin/python3.9'}; "
        "pythonX.Y on PATH otherwise.",
    )


class RewardConfig(_Strict):
    """How an episode (or a prediction) is graded with SWE-bench's rules."""

    type: Literal["swebench"] = Field(
        "swebench",
        description="The grading: SWE-bench's rules, with each dataset family's own test command, parser and grading rule.",
    )
    fail_to_pass_only: bool = Field(False, description="Grade FAIL_TO_PASS alone (PASS_TO_PASS ignored).")
    timeout: float = Field(1800.0, gt=0, description="Seconds the tests may run before the result is 'timeout'.")
    log_limit: int = Field(20_000_000, ge=100_000, description="Bytes of test output kept for parsing (head and tail).")
    network: bool = Field(
        False, description="Leave the sandbox's network on while grading (docker cuts it off by default; local cannot)."
    )
    sandbox: Literal["fresh", "same"] = Field(
        "fresh",
        description="fresh: capture the agent's patch without trusting its sandbox and run the tests in a new sandbox "
        "of the instance with only that patch applied; same: run them in the agent's own sandbox (trusted agents only).",
    )
    guard: bool = Field(
        True,
        description="Load the grading guard into pytest and Django (unittest) runs: each test's outcome recorded from outside "
        "the code under test's reach, the runner's machinery checked as it loaded (rewards/guard). Off: the log cross-checks alone.",
    )
    canaries: bool = Field(
        True,
        description="Append tests that must fail to the test files holding the graded tests (pytest, Django, sympy): one "
        "reported passed or missing means the runner's verdicts were forged, and the instance is not resolved (rewards/canaries).",
    )
    max_patch_bytes: int = Field(
        16 * 1024 * 1024,
        ge=1024,
        description="Largest patch (and largest total of changed files copied out of the agent's sandbox) that is graded; "
        "a bigger one is 'patch_rejected'.",
    )
    differential: bool = Field(
        False,
        description="After a grading that resolved, compare every outcome of its run (the graded test files in full, not only "
        "the listed tests) with gold's run of the same task (graded once per row and image through the same reward path, "
        "cached under env.cache_dir/differential): a test that passes with gold and not with the patch marks the 1.0 suspect "
        "in the report's `differential`, naming the tests. The reward is unchanged; a run may down-weight or drop it "
        "(rewards/differential). Needs reward.sandbox: fresh.",
    )

    differential_modules: bool = Field(
        False,
        description="With differential: also run the repository's test files that import the modules gold changes (after the "
        "row's own, same runner, graded the same way; Python rows run by pytest, unittest, Django or sympy), once with gold "
        "(cached) and once with each resolved patch: a second grading per resolved patch (rewards/module_tests).",
    )

    @model_validator(mode="after")
    def _differential_grades_fresh(self) -> "RewardConfig":
        if self.differential and self.sandbox == "same":
            raise ValueError(
                "reward.differential compares a fresh sandbox's run with gold's, and reward.sandbox: same runs the tests in the "
                "agent's own sandbox (on local, gold's sandbox would wait for it): set reward.sandbox: fresh, or differential: false"
            )
        if self.differential_modules and not self.differential:
            raise ValueError("reward.differential_modules adds a run to the differential check: set reward.differential: true too")
        return self


class ModelConfig(_Strict):
    """The chat model: any OpenAI-compatible endpoint."""

    backend: Literal["openai-compatible"] = Field("openai-compatible", description="The API the endpoint speaks.")
    base_url: str = Field("http://127.0.0.1:8000/v1", description="Endpoint URL, with or without the trailing /v1.")
    api_key: SecretStr | None = Field(None, description="API key; write ${ENV_VAR} so it stays out of the file.")
    model_name: str = Field("default", description="Model name sent with every request.")
    max_tokens: int = Field(4096, gt=0, description="Completion tokens per model turn.")
    temperature: float = Field(0.0, ge=0, description="Sampling temperature.")
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling; the endpoint's default when null.")
    native_tools: Literal["auto", "on", "off"] = Field(
        "auto", description="on: OpenAI function calling; off: tool calls in the text; auto: on unless the endpoint refuses it."
    )
    tool_format: TOOL_FORMATS = Field(
        "auto",
        description="How tool calls are written in text (prompt, parsing, format-error examples): auto takes the chat template's "
        "own format (verl's tokenizer, or model.tokenizer), else lenient; or a format by name (the table in docs/env.md).",
    )
    tokenizer: str | None = Field(
        None, description="Tokenizer directory or hub name whose chat template gives the tool-call format (tool_format: auto)."
    )
    timeout: float = Field(300.0, gt=0, description="Seconds per request.")
    max_retries: int = Field(
        5, ge=0, description="Retries on 408, 409, 429, 5xx, timeouts and dropped connections (the openai SDK's, with its "
        "backoff: 0.5 s doubling up to 8 s, or the server's retry-after)."
    )
    cost_per_million_input: float = Field(0.0, ge=0, description="Price of a million prompt tokens, for the cost budget.")
    cost_per_million_output: float = Field(0.0, ge=0, description="Price of a million completion tokens.")
    extra_body: dict[str, Any] = Field(default_factory=dict, description="Extra fields sent with every request.")


class AgentConfig(_Strict):
    """The ReAct agent's budgets and how it shows observations to the model."""

    observation_limit: int = Field(10_000, ge=100, description="Characters of an observation the model sees (head + tail).")
    max_format_errors: int = Field(3, ge=1, description="Consecutive malformed tool calls that end the episode.")
    token_budget: int | None = Field(None, gt=0, description="Total tokens per episode; unlimited when null.")
    cost_budget: float | None = Field(None, gt=0, description="Cost per episode (model prices); unlimited when null.")
    system_prompt: str | None = Field(None, description="Replaces the built-in system prompt.")


class RolloutConfig(_Strict):
    """How `UniAgentLoop` records a trajectory for verl (the token limits come from verl's own config)."""

    max_tokens_per_turn: int = Field(4096, gt=0, description="Tokens the model may sample in one turn.")
    mask_abnormal_exit_traj: bool = Field(True, description="Zero the loss mask of trajectories that end in env_error or timeout.")
    trajectory_timeout: float = Field(3600, gt=0, description="Seconds one trajectory may take, grading included; then exit reason timeout.")
    max_concurrency: int = Field(32, ge=1, description="Trajectories (sandboxes) one verl agent-loop worker runs at once.")
    trajectory_dir: str | None = Field(
        None,
        description="Write one JSON record per trajectory here (token ids, mask, logprobs, token texts, messages, the reward "
        "report with its log's tail) for `uni-agent-gym view`; off when null.",
    )
    max_model_len: int | None = Field(
        None, gt=0, description="Tokens a whole trajectory may hold in the rollout cache; verl's rollout.max_model_len when null "
        "(check-config holds it against verl's)."
    )
    max_prompt_length: int | None = Field(
        None, gt=0, description="Tokens of the first prompt; verl's data.max_prompt_length when null (check-config holds it against verl's)."
    )
    max_response_length: int | None = Field(
        None, gt=0, description="Tokens of everything after the first prompt; verl's data.max_response_length when null "
        "(check-config holds it against verl's)."
    )


class LoggingConfig(_Strict):
    """Per-call timing log lines (the `uni_agent_gym` loggers, level INFO) of the verl loops and the eval agent."""

    log_tool_timing: bool = Field(False, description="One line per tool call: the tool, its seconds, its exit code.")
    log_query_timing: bool = Field(False, description="One line per model query: seconds and tokens sampled.")


class GymConfig(_Strict):
    """The whole configuration of a run; sections are added by the parts that need them."""

    deployment: DeploymentConfig = Field(default_factory=DockerDeploymentConfig)
    env: EnvConfig = Field(default_factory=EnvConfig)
    reward: RewardConfig = Field(default_factory=RewardConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    rollout: RolloutConfig = Field(default_factory=RolloutConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)


# ----- loading -----


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Parse a YAML, JSON or TOML file (by extension) into a dict, without interpolation."""
    path = Path(path)
    if path.suffix not in (".json", ".toml", ".yaml", ".yml"):
        raise ConfigError(f"Config file {path}: expects .yaml, .yml, .json or .toml, got {path.suffix!r}")
    text = read_text(path, "Config file", ConfigError)
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        elif path.suffix == ".toml":
            data = tomllib.loads(text)
        else:
            data = yaml.safe_load(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        reason = " ".join(str(exc).split())  # YAML's marks span lines; the error is one line
        raise ConfigError(f"Config file {path} is not valid {path.suffix[1:].upper()}: {reason}") from None
    if data is None:
        return {}
    if isinstance(data, list) and data and all(isinstance(item, dict) and "_target_" in item for item in data):
        raise ConfigError(
            f"Config file {path} is an agent-loop YAML (a list of agent loops), not gym settings: name it in config.toml's "
            "[rollout.agent] agent_loop_config_path and check the run with `uni-agent-gym check-config --training CONFIG.toml`"
        )
    if not isinstance(data, dict):
        raise ConfigError(f"Config file {path}: expects a mapping at the top level, got {type(data).__name__}")
    return data


def interpolate(data: Any, environ: dict[str, str] | None = None, secrets: set[str] | None = None) -> Any:
    """Replace `${VAR}` / `${VAR:-default}` in every string of `data`; collect the values used into `secrets`."""
    environ = os.environ if environ is None else environ
    secrets = set() if secrets is None else secrets

    def walk(value: Any, where: str) -> Any:
        if isinstance(value, dict):
            return {k: walk(v, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if not isinstance(value, str):
            return value

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in environ:
                if environ[name]:
                    secrets.add(environ[name])
                return environ[name]
            if default is not None:
                return default
            raise ConfigError(f"Environment variable {name} is not set (used at {where or 'top level'})")

        return _VAR.sub(substitute, value)

    return walk(data, "")


def merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge `layer` over `base`: mappings merge key by key, anything else replaces."""
    out = dict(base)
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_override(text: str) -> dict[str, Any]:
    """`deployment.type=local` -> {"deployment": {"type": "local"}}; the value is parsed as YAML."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ConfigError(f"Override expects KEY=VALUE (e.g. deployment.type=local), got {text!r}")
    value: Any = yaml.safe_load(raw) if raw else ""
    for part in reversed(key.split(".")):
        value = {part: value}
    return value


def validate(
    model: type[BaseModel], data: dict[str, Any], source: str, secrets: set[str] = frozenset(), layers: list[tuple[dict[str, Any], str]] = ()
) -> Any:
    """Build `model` from `data`; a failure is a `ConfigError` listing each field and problem, never an input.
    Where `data` was merged from `layers` ((layer, where it came from), later ones winning), each problem names
    the layer that gave the value."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False):
            location = ".".join(str(part) for part in error["loc"]) or "(top level)"
            hint = _nearest_field(model, error["loc"]) if error["type"] == "extra_forbidden" else _nearest_choice(error)
            origin = _origin(layers, (*error["loc"], "type") if error["type"] == "union_tag_invalid" else error["loc"])
            problems.append(f"{location}: {error['msg']}" + (f" (did you mean {hint}?)" if hint else "") + (f" [from {origin}]" if origin else ""))
        raise _invalid(source, problems, secrets) from None


def _origin(layers: list[tuple[dict[str, Any], str]], location: tuple[Any, ...]) -> str | None:
    """Which of several layers gave the value at `location`: the one that holds most of its path, the later of
    equals (as the merge does). None with fewer than two layers: the config's source says it already."""
    if len(layers) < 2:
        return None
    best, where = 0, None
    for layer, name in layers:
        node, depth = layer, 0
        for part in location:
            if not isinstance(node, dict) or str(part) not in node:
                break
            node, depth = node[str(part)], depth + 1
        if depth and depth >= best:
            best, where = depth, name
    return where


def _nearest_choice(error: dict[str, Any]) -> str | None:
    """The allowed value closest to a value that is not one (a `Literal` or the deployment `type`); the
    input itself is never shown, only one of the choices."""
    if error["type"] not in ("literal_error", "union_tag_invalid"):
        return None
    given = error["ctx"].get("tag") if error["type"] == "union_tag_invalid" else error.get("input")
    choices = re.findall(r"'([^']*)'", str(error["ctx"].get("expected_tags") or error["ctx"].get("expected")))
    close = difflib.get_close_matches(str(given), choices, n=1, cutoff=0.6) if isinstance(given, str) else []
    return close[0] if close else None


def _nearest_field(model: type[BaseModel], location: tuple[Any, ...]) -> str | None:
    """The known key closest to an unknown one at `location` (its siblings' names), dotted; None if none is close."""
    for part in location[:-1]:
        field = model.model_fields.get(str(part))
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    close = difflib.get_close_matches(str(location[-1]), list(model.model_fields), n=1, cutoff=0.6)
    return ".".join([*(str(part) for part in location[:-1]), close[0]]) if close else None


def _invalid(source: str, problems: list[str], secrets: set[str]) -> ConfigError:
    if len(problems) == 1:
        message = f"Invalid config ({source}): {problems[0]}"
    else:
        message = f"Invalid config ({source}):\n" + "\n".join(f"  {problem}" for problem in problems)
    for secret in secrets:
        message = message.replace(secret, "***")
    return ConfigError(message)


def _options_left_behind(layers: list[dict[str, Any]]) -> set[str]:
    """Deployment options given only by layers before the last switch of `deployment.type`.

    A layer that sets `type` to another value than the one in force is a switch (`--deployment local` over
    `-c docker.yaml`): the options of earlier layers were meant for the type it replaces. Options given in the
    switching layer itself or later are meant for the new type.
    """
    chosen: Any = DEFAULT_DEPLOYMENT_TYPE
    behind: set[str] = set()
    in_force: set[str] = set()
    for layer in layers:
        section = layer.get("deployment")
        if not isinstance(section, dict):
            continue
        if "type" in section and section["type"] != chosen:
            chosen, behind, in_force = section["type"], behind | in_force, set()
        in_force |= set(section) - {"type"}
    return behind - in_force


def load_config(
    *paths: str | Path,
    layers: Iterable[dict[str, Any]] = (),
    overrides: list[str] | tuple[str, ...] = (),
    environ: dict[str, str] | None = None,
    translations: list[str] | None = None,
) -> GymConfig:
    """Load and merge config files (later ones win), then `layers` (dicts, e.g. an agent-loop entry's own keys),
    then `key=value` overrides; interpolate, validate. Each layer may use the seed article's names
    (`seed_vocabulary`); what was translated is appended to `translations`."""
    sources = [(read_config_file(path), str(path)) for path in paths] + [(layer, "the agent-loop entry") for layer in layers]
    for layer, where in sources[: len(paths)]:
        if VERL_TABLES & set(layer):
            tables = ", ".join(f"[{table}]" for table in sorted(VERL_TABLES & set(layer)))
            raise ConfigError(f"Config file {where} is verl's training config ({tables}), not gym settings: "
                              f"check it with `uni-agent-gym check-config --training {where}`")  # fmt: skip
    sources += [(parse_override(override), f"override {override.partition('=')[0]}") for override in overrides]
    translated = []
    for layer, where in sources:
        layer, notes = translate(layer, where)
        translated.append(layer)
        if translations is not None:
            translations += notes
    data: dict[str, Any] = {}
    for layer in translated:
        data = merge(data, layer)
    secrets: set[str] = set()
    data = interpolate(data, environ, secrets)
    source = ", ".join([str(p) for p in paths] + [f"--set {o.partition('=')[0]}" for o in overrides]) or "defaults"
    deployment = data.get("deployment")
    if isinstance(deployment, dict) and deployment.get("type") in _OPTIONS_BY_TYPE:
        kept = _OPTIONS_BY_TYPE[deployment["type"]]
        behind = _options_left_behind(translated) - kept
        data["deployment"] = {key: value for key, value in deployment.items() if key not in behind}
    return validate(GymConfig, data, source, secrets, list(zip(translated, [where for _, where in sources])))


def deployment_config(config: dict[str, Any] | BaseModel) -> LocalDeploymentConfig | DockerDeploymentConfig | ModalDeploymentConfig | RayDeploymentConfig:
    """A deployment config from a dict such as `{"type": "docker", "image": ...}` (interpolated) or a model."""
    if isinstance(config, _DEPLOYMENT_MODELS):
        return config
    if isinstance(config, BaseModel):
        raise ConfigError(f"Expects a deployment config, got {type(config).__name__}")
    secrets: set[str] = set()
    data = interpolate(dict(config), None, secrets)
    return validate(GymConfig, {"deployment": data}, "deployment", secrets).deployment
