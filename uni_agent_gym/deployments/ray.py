"""Sandboxes on the nodes of a Ray cluster (`deployment.type: ray`).

Each sandbox is a small actor (`SandboxActor`) placed on a node that offers `deployment.resource`; on
that node it drives the node's own container engine with the gym's docker deployment, so every docker
option means the same thing, and the engine's socket never leaves the node. Here, `RayDeployment` is
a `Deployment` whose shell session and file primitives are calls to that actor, each bounded by
`deployment.call_timeout` beyond the command's own timeout: a dead or silent node is a
`SandboxDiedError` naming it, never a hang. A node lacking an image pulls it from `deployment.registry`.

    deployment = make_deployment({"type": "ray", "address": "127.0.0.1:6379", "registry": "127.0.0.1:5000"})
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import random
import socket
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import ray
import ray.exceptions
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from uni_agent_gym.config import DockerDeploymentConfig, RayDeploymentConfig
from uni_agent_gym.deployments.base import Deployment
from uni_agent_gym.deployments.docker import Cleanup, DockerDeployment, default_run_id
from uni_agent_gym.deployments.session import CommandResult, ShellProcess
from uni_agent_gym.errors import DeploymentError, SandboxDiedError

logger = logging.getLogger(__name__)

# What the driver may ask of a node's deployment: coroutines, and blocking calls (run in a thread there).
_ASYNC_CALLS = {"is_alive", "engine_answers", "isolate_network", "restore_network", "restart_shell"}
_BLOCKING_CALLS = {"changes", "read_archive", "write_archive", "pause", "unpause"}
_connected = threading.Lock()


def connect(address: str) -> None:
    """Join the Ray cluster at `address` once per process (a process inside verl's cluster already is)."""
    with _connected:
        if ray.is_initialized():
            return
        _check_reachable(address)
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise DeploymentError(
                f"Cannot join a Ray cluster at deployment.address {address!r} ({exc}). Start one (`ray start --head`, "
                "then `ray start --address HEAD:PORT --resources '{\"uni_agent_gym_sandbox\": 8}'` on each sandbox node), "
                "or set deployment.address to its head."
            ) from None


def _check_reachable(address: str) -> None:
    """A HOST:PORT nobody listens on is an error now (`ray.init` would retry it for minutes)."""
    if address == "auto" or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except (OSError, ValueError) as exc:
        raise DeploymentError(
            f"Cannot join a Ray cluster at deployment.address {address!r}: nothing answers there ({exc}). "
            "Start its head (`ray start --head --port PORT`), or set deployment.address to HOST:PORT of a running one."
        ) from None


def _alive_nodes_offering(resource: str, node: str | None = None) -> list[dict[str, Any]]:
    """The alive nodes that offer some of `resource` (only `node`, when given), as `ray.nodes()` lists them."""
    return [n for n in ray.nodes() if n["Alive"] and n["Resources"].get(resource) and node in (None, n["NodeID"])]


def _portable(exc: BaseException) -> BaseException:
    """`exc` as it can travel back to the driver (an exception that does not pickle becomes a DeploymentError)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any pickling failure
        return DeploymentError(f"{type(exc).__name__}: {exc}")


class SandboxActor:
    """The node side of one sandbox: the docker deployment on this node's engine. Every call answers
    `(True, value)` or `(False, exception)`, so the driver raises the gym's own errors, not Ray's wrappers."""

    def __init__(self, config: dict[str, Any], registry: str | None) -> None:
        self.config = DockerDeploymentConfig.model_validate(config)
        self.registry = registry
        self.deployment: DockerDeployment | None = None

    async def where(self) -> dict[str, str]:
        """The node this actor landed on (its id and address), the engine it drives, and its process."""
        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "address": ray.util.get_node_ip_address(),
            "engine": os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"),
            "pid": str(os.getpid()),
        }

    async def alive(self) -> bool:
        """The heartbeat the driver asks for while a long call runs (this event loop answers beside it)."""
        return True

    async def start(self) -> tuple[bool, Any]:
        return await _answer(self._start)

    async def _start(self) -> str:
        from uni_agent_gym.deployments.registry import ensure_from_registry

        await asyncio.to_thread(ensure_from_registry, self.config.image, self.registry, self.config.pull)
        self.deployment = DockerDeployment(self.config.model_copy(update={"pull": "never"}))
        await self.deployment.start()
        return self.deployment.container_id

    async def run(self, command: str, timeout: float, limit: int | None, uncapped: bool) -> tuple[bool, Any]:
        return await _answer(lambda: self.deployment._require_session().run(command, timeout, limit=limit, uncapped=uncapped))

    async def call(self, name: str, *args: Any) -> tuple[bool, Any]:
        return await _answer(lambda: self._call(name, *args))

    async def _call(self, name: str, *args: Any) -> Any:
        if name in _ASYNC_CALLS:
            return await getattr(self.deployment, name)(*args)
        if name in _BLOCKING_CALLS:
            return await asyncio.to_thread(getattr(self.deployment, name), *args)
        raise DeploymentError(f"A sandbox actor does not answer {name!r}")

    async def stop(self) -> dict[str, str]:
        if self.deployment is not None:
            await self.deployment.stop()
            return dict(self.deployment.release_report)
        return {}


async def _answer(call: Callable[[], Awaitable[Any]]) -> tuple[bool, Any]:
    """`(True, value)` of `call()`, or `(False, the exception)` made to travel to the driver."""
    try:
        return True, await call()
    except Exception as exc:  # noqa: BLE001 - handed back to the driver
        return False, _portable(exc)


def _unwrapped(answer: tuple[bool, Any]) -> Any:
    """The value an actor answered, or the exception it answered raised here."""
    ok, value = answer
    if not ok:
        raise value
    return value


def _cleanup_node(run_id: str | None, everything: bool, dry_run: bool) -> tuple[str, Cleanup]:
    """A node's address and what `cleanup` did on its engine (a Ray task on that node: the owners of its
    containers, the sandboxes' processes, are that node's processes)."""
    from uni_agent_gym.deployments.docker import cleanup

    return ray.util.get_node_ip_address(), cleanup(run_id, everything=everything, dry_run=dry_run)


def cleanup_nodes(
    address: str, resource: str = "uni_agent_gym_sandbox", run_id: str | None = None, timeout: float = 120,
    *, everything: bool = False, dry_run: bool = False,
) -> tuple[dict[str, Cleanup], dict[str, str]]:
    """`docker.cleanup` on every alive node that offers `resource`. Blocking. Returns ({node address: what was
    removed and kept}, {node address: why it could not be cleaned}): a node that just died may still be listed
    alive for a while."""
    connect(address)
    task = ray.remote(_cleanup_node)
    refs = [
        (node["NodeManagerAddress"], task.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
         .remote(run_id, everything, dry_run))
        for node in _alive_nodes_offering(resource)
    ]  # fmt: skip
    done: dict[str, Cleanup] = {}
    failed: dict[str, str] = {}
    for node_address, ref in refs:
        try:
            node_address, result = ray.get(ref, timeout=timeout)
            merged = done.setdefault(node_address, Cleanup())
            merged.removed.extend(result.removed)
            merged.kept.update(result.kept)
        except ray.exceptions.RayError as exc:
            failed[node_address] = f"{type(exc).__name__}: {str(exc)[:300]}"
    for node_address in done:  # an address that answered was cleaned (a dead node's old entry may share it)
        failed.pop(node_address, None)
    return done, failed


async def run_on_a_node(config: RayDeploymentConfig, function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` (blocking, importable on the nodes) as a Ray task on a node that offers `config.resource`
    (`config.node` when set), taking none of it; its value, or the exception it raised. Bounded by
    `config.start_timeout` (pulling and deriving images takes a while)."""
    connect(config.address)
    nodes = [node["NodeID"] for node in _alive_nodes_offering(config.resource, config.node)]
    if not nodes:
        raise DeploymentError(f"No alive node of the Ray cluster offers resource {config.resource!r}{f' (node {config.node})' if config.node else ''}")
    task = ray.remote(function).options(
        num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(random.choice(nodes), soft=False)
    )
    try:
        return await asyncio.wait_for(_awaited(task.remote(*args)), config.start_timeout)
    except asyncio.TimeoutError:
        raise DeploymentError(f"{function.__name__} on a Ray node did not finish within deployment.start_timeout ({config.start_timeout:g} s)") from None
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if isinstance(exc.cause, Exception) else None
        raise cause or DeploymentError(f"{function.__name__} on a Ray node failed: {str(exc)[:500]}") from None
    except ray.exceptions.RayError as exc:
        raise DeploymentError(f"{function.__name__} on a Ray node failed: {type(exc).__name__}: {str(exc)[:300]}") from None


class _ActorSession:
    """The deployment's shell session, as calls to the actor whose node runs the real one."""

    def __init__(self, deployment: "RayDeployment") -> None:
        self._deployment = deployment

    async def run(self, command: str, timeout: float, *, limit: int | None = None, uncapped: bool = False) -> CommandResult:
        budget = timeout + self._deployment.config.startup_timeout + self._deployment.config.call_timeout
        return await self._deployment._remote("run", command, timeout, limit, uncapped, seconds=budget)

    async def close(self) -> None:
        """The node's session closes when the node's deployment stops."""


class RayDeployment(Deployment):
    """A docker sandbox on a Ray node; see the module docstring."""

    def __init__(self, config: RayDeploymentConfig) -> None:
        super().__init__(config)
        self.run_id = config.run_id or default_run_id()
        self.actor: Any = None
        self.node: dict[str, str] = {}  # node_id, address, engine: where the sandbox runs
        self.container_id: str | None = None

    # ----- placing the actor and its container -----

    async def _provision(self) -> None:
        config = self.config
        connect(config.address)  # once per process; in this thread, where Ray can set its signal handlers
        self._check_capacity()
        docker_config = DockerDeploymentConfig.model_validate(
            {**config.model_dump(include=set(DockerDeploymentConfig.model_fields)), "type": "docker", "run_id": self.run_id}
        )
        strategy: Any = config.scheduling
        if config.node:
            strategy = NodeAffinitySchedulingStrategy(config.node, soft=False)
        actor_class = ray.remote(SandboxActor)
        self.actor = actor_class.options(
            num_cpus=0, resources={config.resource: config.per_sandbox}, scheduling_strategy=strategy, max_restarts=0
        ).remote(docker_config.model_dump(), config.registry)
        try:
            try:
                self.node = await self._wait(self.actor.where.remote(), config.start_timeout)
            except SandboxDiedError:
                raise DeploymentError(
                    f"No node offered a free {config.per_sandbox:g} of resource {config.resource!r} within deployment.start_timeout "
                    f"({config.start_timeout:g} s){self._pinned()}: every sandbox slot stayed taken (free now: {self._free():g})"
                ) from None
            self.container_id = await self._remote("start", seconds=config.start_timeout)
        except BaseException:
            await self._release()
            raise

    def _check_capacity(self) -> None:
        """A cluster where no alive node offers the resource fails at once (waiting would never end)."""
        resource = self.config.resource
        offering = [node for node in _alive_nodes_offering(resource, self.config.node) if node["Resources"][resource] >= self.config.per_sandbox]
        if not offering:
            raise DeploymentError(
                f"No alive node of the Ray cluster offers {self.config.per_sandbox:g} of resource {resource!r}{self._pinned()}: "
                f"start sandbox nodes with `ray start --resources '{{\"{resource}\": 8}}'` (or set deployment.resource)"
            )

    def _pinned(self) -> str:
        return f" on node {self.config.node}" if self.config.node else ""

    def _free(self) -> float:
        return ray.available_resources().get(self.config.resource, 0.0)

    async def _release(self) -> None:
        actor, self.actor = self.actor, None
        if actor is None:
            return
        try:
            if self.container_id is not None:
                self.release_report.update(await self._wait(actor.stop.remote(), self.config.call_timeout))
        except DeploymentError as exc:
            logger.warning("could not stop the sandbox on %s: %s (`uni-agent-gym cleanup --deployment ray` reaps it)", self.where(), exc)
        finally:
            self.container_id = None
            ray.kill(actor, no_restart=True)

    async def _open_session(self) -> Any:
        return _ActorSession(self)

    async def _spawn_shell(self) -> ShellProcess:
        raise NotImplementedError("the node's docker deployment spawns the shell")

    async def _run_beside(self, argv: list[str]) -> None:
        raise NotImplementedError("the node's docker deployment runs commands beside the shell")

    # ----- calls to the actor -----

    def where(self) -> str:
        """The node this sandbox runs on, for messages: its address and the start of its id."""
        if not self.node:
            return "an unplaced node"
        return f"node {self.node['address']} ({self.node['node_id'][:12]})"

    async def _wait(self, ref: Any, seconds: float) -> Any:
        """The value of `ref`; a dead actor or node, or no answer within `seconds`, is `SandboxDiedError`. While
        a longer call runs (a command), the placed actor is asked every quarter of `call_timeout` whether it
        still answers, so a node that froze or vanished shows within `call_timeout`, not the command's timeout."""
        call = asyncio.ensure_future(_awaited(ref))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        watched = self.node and seconds > self.config.call_timeout
        beat = self.config.call_timeout / 4
        try:
            while True:
                done, _ = await asyncio.wait({call}, timeout=max(0.0, min(beat, deadline - loop.time())) if watched else seconds)
                if done:
                    return call.result()
                if loop.time() >= deadline or not watched:
                    raise SandboxDiedError(f"The sandbox on {self.where()} did not answer within {seconds:g} s: the node is lost or hung")
                await self._heartbeat(self.actor, 3 * beat)
        except ray.exceptions.RayError as exc:
            raise SandboxDiedError(f"The sandbox on {self.where()} is gone ({type(exc).__name__}: {str(exc)[:300]})") from None
        finally:
            call.cancel()

    async def _heartbeat(self, actor: Any, seconds: float) -> None:
        try:
            await asyncio.wait_for(_awaited(actor.alive.remote()), seconds)
        except asyncio.TimeoutError:
            raise SandboxDiedError(
                f"The sandbox on {self.where()} stopped answering (no heartbeat within {seconds:g} s) while a call was running: the node is lost or hung"
            ) from None

    async def _remote(self, method: str, *args: Any, seconds: float | None = None) -> Any:
        actor = self._require_actor()
        return _unwrapped(await self._wait(getattr(actor, method).remote(*args), seconds or self.config.call_timeout))

    def _blocking(self, name: str, *args: Any) -> Any:
        """A blocking call of the node's deployment (the docker diff, archives, pause): from a thread here."""
        actor = self._require_actor()
        try:
            answer = ray.get(actor.call.remote(name, *args), timeout=self.config.call_timeout)
        except ray.exceptions.RayError as exc:  # GetTimeoutError included
            raise SandboxDiedError(f"The sandbox on {self.where()} did not answer {name} ({type(exc).__name__}: {str(exc)[:300]})") from None
        return _unwrapped(answer)

    def _require_actor(self) -> Any:
        if self.actor is None:
            self._require_session()  # the not-started error
            raise SandboxDiedError(f"The sandbox on {self.where()} was released")
        return self.actor

    # ----- the deployment's primitives, on the node -----

    async def restart_shell(self) -> None:
        self._require_session()
        await self._remote("call", "restart_shell")

    async def is_alive(self) -> bool:
        if self._session is None or self.actor is None:
            return False
        try:
            return await self._remote("call", "is_alive")
        except DeploymentError:
            return False

    async def engine_answers(self) -> bool:
        """Whether the node and its engine answer: a node that is gone is the infrastructure's failure."""
        try:
            return await self._remote("call", "engine_answers")
        except DeploymentError:
            return False

    async def isolate_network(self) -> bool:
        self._require_session()
        return await self._remote("call", "isolate_network")

    async def restore_network(self) -> None:
        self._require_session()
        await self._remote("call", "restore_network")

    def beside(self) -> dict[str, Any]:
        return {"node": self.node["node_id"]} if self.node else {}

    async def upload(self, local_path: str | Path, remote_path: str) -> None:
        """A host file or directory goes to the node as one tar archive (the node shares no files with this host)."""
        await self._upload_as_one_tar(local_path, remote_path)

    def changes(self) -> list[tuple[str, str]]:
        return [tuple(change) for change in self._blocking("changes")]

    def read_archive(self, path: str, max_bytes: int) -> bytes | None:
        return self._blocking("read_archive", path, max_bytes)

    def write_archive(self, directory: str, data: bytes) -> None:
        self._blocking("write_archive", directory, data)

    def pause(self) -> None:
        self._blocking("pause")

    def unpause(self) -> None:
        self._blocking("unpause")


async def _awaited(ref: Any) -> Any:
    return await ref

