"""Sandboxes on the nodes of a Ray cluster (`deployment.type: ray`).

Each node that offers `deployment.resource` runs one `SandboxHost` (`ray_host.py`) that holds all the node's
sandboxes: it starts their containers on the node's own engine with the gym's docker deployment (every
docker option means the same thing, and the engine's socket never leaves the node), relays each shell's bytes
to its driver over TCP, and removes what a driver that died left. Here, `RayDeployment` is a `Deployment`
whose shell session runs in the driver over that relay (a command costs a loopback hop more than on
docker), and whose container operations go to the host, each bounded by `deployment.call_timeout`: a dead or
silent node is a `SandboxDiedError` naming it, never a hang. Those operations are not written out here: they
are made from the `ContainerSandbox` protocol (`container.OPERATIONS`), as the host's answers to them are. A node lacking an image pulls it from
`deployment.registry`.

    deployment = make_deployment({"type": "ray", "address": "127.0.0.1:6379", "registry": "127.0.0.1:5000"})
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import logging
import random
import secrets
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
import ray.exceptions
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from uni_agent_gym.config import DockerDeploymentConfig, RayDeploymentConfig
from uni_agent_gym.deployments.base import Deployment
from uni_agent_gym.deployments.container import OPERATIONS, ContainerSandbox
from uni_agent_gym.deployments.docker import Cleanup, default_run_id
from uni_agent_gym.deployments.ray_host import NAMESPACE, SandboxHost, alive_nodes, ended_jobs, host_name, sandbox_state
from uni_agent_gym.deployments.session import READ_SIZE, ShellProcess, StreamShell
from uni_agent_gym.errors import DeploymentError, SandboxDiedError

logger = logging.getLogger(__name__)
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


def _cleanup_node(run_id: str | None, everything: bool, dry_run: bool) -> tuple[str, Cleanup]:
    """A node's address and what `cleanup` did on its engine (a Ray task on that node). A host's container
    belongs to its driver's job: it is gone once that job ended or its node died (`ray_host.sandbox_state`);
    any other container, to the process that made it, as on docker."""
    from uni_agent_gym.deployments import owner
    from uni_agent_gym.deployments.docker import cleanup

    ended, alive = ended_jobs(), alive_nodes()

    def state(labels: dict[str, str]) -> owner.OwnerState:
        found = sandbox_state(labels, ended, alive)
        return owner.owner_state(labels.get(owner.OWNER_LABEL)) if found == "unknown" else found

    return ray.util.get_node_ip_address(), cleanup(run_id, everything=everything, dry_run=dry_run, owner_state=state)


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




# ----- the driver's side of a sandbox on a node's host -----

_hosts: dict[tuple[str, str], tuple[Any, dict[str, Any]]] = {}  # (resource, node id) -> (host, where it is)
_spread = itertools.count(random.randrange(1 << 16))  # where SPREAD starts its round over the nodes, per process


async def host_on(node_id: str, resource: str, seconds: float) -> tuple[Any, dict[str, Any]]:
    """The host of `resource` on node `node_id` and where it is: the running one, else made now (by whichever
    driver asks first: `get_if_exists`). It takes none of the node's resources; it lives as long as its node."""
    key = (resource, node_id)
    if key not in _hosts:
        host = _host_class().options(
            name=host_name(resource, node_id), namespace=NAMESPACE, get_if_exists=True, lifetime="detached", num_cpus=0,
            max_restarts=0, max_concurrency=10_000, scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(resource)  # fmt: skip
        try:
            where = await asyncio.wait_for(_awaited(host.serve.remote()), seconds)
        except asyncio.TimeoutError:
            raise HostGone(f"The sandbox host on node {node_id[:12]} did not answer within {seconds:g} s") from None
        except ray.exceptions.RayError as exc:
            raise HostGone(f"The sandbox host on node {node_id[:12]} is gone ({type(exc).__name__}: {str(exc)[:300]})") from None
        _hosts[key] = (host, where)
    return _hosts[key]


class HostGone(SandboxDiedError):
    """A node's host is dead or does not answer (the node is lost, frozen or partitioned)."""


@functools.cache
def _host_class() -> Any:
    return ray.remote(SandboxHost)


def _forget_host(node_id: str, resource: str) -> None:
    """A host that failed a call is looked up again next time (its node may have come back with a new one)."""
    _hosts.pop((resource, node_id), None)


class _RelayedShell(StreamShell):
    """The sandbox's bash, its bytes relayed by the node's host over TCP. While a read waits longer than a quarter of
    `call_timeout`, the host is asked whether it still answers: a node that froze or vanished shows within
    `call_timeout`, not the command's timeout."""

    def __init__(self, deployment: "RayDeployment", exec_id: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader, writer)
        self._deployment = deployment
        self.exec_id = exec_id

    async def read(self) -> bytes:
        beat = self._deployment.config.call_timeout / 4
        while True:
            try:
                data = await asyncio.wait_for(self._reader.read(READ_SIZE), beat)
            except asyncio.TimeoutError:
                await self._deployment._heartbeat(3 * beat)
                continue
            if not data:  # the shell ended, or its host did: only the former is the shell's exit
                await self._deployment._heartbeat(self._deployment.config.call_timeout)
            return data

    async def exit_code(self) -> int | None:
        try:
            return await self._deployment._host_call("exit_code", self.exec_id, sandbox=False)
        except DeploymentError:
            return None


def _forward(name: str, blocking: bool) -> Callable[..., Any]:
    """`RayDeployment`'s container operation `name`: the host's `call` of it on the node, its arguments checked here
    against the protocol's signature; a blocking one from a thread here (`_blocking`), a coroutine through
    `_host_call`. It has the protocol's name, docstring and signature."""
    declared = getattr(ContainerSandbox, name)
    signature = inspect.signature(declared)

    if blocking:

        def forward(self: RayDeployment, *args: Any, **kwargs: Any) -> Any:
            return self._blocking(name, *signature.bind(self, *args, **kwargs).args[1:])

    else:

        async def forward(self: RayDeployment, *args: Any, **kwargs: Any) -> Any:
            return await self._host_call("call", name, *signature.bind(self, *args, **kwargs).args[1:])

    functools.update_wrapper(forward, declared)
    forward.__qualname__ = f"RayDeployment.{name}"
    return forward


def _forwarding_container_operations(cls: type) -> type:
    """`cls` with a forward to the host (`_forward`) for each operation of `ContainerSandbox`, none written by hand."""
    for name, blocking in OPERATIONS.items():
        if name in vars(cls):
            raise TypeError(f"{cls.__name__}.{name} is written by hand: the container operations are made from the protocol")
        setattr(cls, name, _forward(name, blocking))
    return cls


@_forwarding_container_operations
class RayDeployment(Deployment):
    """A docker sandbox on a Ray node, held by the node's host; see the module docstring."""

    def __init__(self, config: RayDeploymentConfig) -> None:
        super().__init__(config)
        self.run_id = config.run_id or default_run_id()
        self.host: Any = None
        self.sandbox_id: str | None = None
        self.node: dict[str, Any] = {}  # node_id, address, engine, pid (the host's), relay_port: where the sandbox runs
        self.container_id: str | None = None

    # ----- placing the sandbox on a node -----

    async def _provision(self) -> None:
        config = self.config
        connect(config.address)  # once per process; in this thread, where Ray can set its signal handlers
        nodes = self._nodes_that_fit()
        docker_config = DockerDeploymentConfig.model_validate(
            {**config.model_dump(include=set(DockerDeploymentConfig.model_fields)), "type": "docker", "run_id": self.run_id}
        ).model_dump()
        job = ray.get_runtime_context().get_job_id()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + config.start_timeout
        sandbox_id = secrets.token_hex(8)
        unreachable: dict[str, str] = {}  # node id -> why its host did not answer, this round
        try:
            while True:
                unreachable.clear()
                for node_id in self._in_order(nodes):
                    seconds = max(1.0, deadline - loop.time())
                    try:
                        self.host, self.node = await host_on(node_id, config.resource, min(seconds, config.call_timeout))
                        self.sandbox_id = sandbox_id
                        self.container_id = await self._host_call("open", job, docker_config, config.registry, config.per_sandbox, seconds=seconds)
                    except HostGone as exc:  # a node dying, or its host: another node may take the sandbox
                        unreachable[node_id] = str(exc)
                        if self.host is not None and self.sandbox_id is not None:  # a start it may still finish: closed then
                            self.host.close.remote(sandbox_id)
                        self.container_id = None
                    if self.container_id is not None:
                        return
                    self.host = self.sandbox_id = None
                if loop.time() >= deadline:
                    why = f"every sandbox slot stayed taken{'; ' if unreachable else ''}{'; '.join(unreachable.values())}"
                    raise DeploymentError(
                        f"No node offered a free {config.per_sandbox:g} of resource {config.resource!r} within deployment.start_timeout "
                        f"({config.start_timeout:g} s){self._pinned()}: {why}"
                    )
                await asyncio.sleep(min(0.5, max(0.0, deadline - loop.time())))
                nodes = self._nodes_that_fit()
        except BaseException:
            await self._release()
            raise

    def _nodes_that_fit(self) -> list[str]:
        """The alive nodes whose total of the resource holds a sandbox's `per_sandbox` (whether they have room now, their
        hosts say); none is an error at once (waiting would never end)."""
        resource = self.config.resource
        nodes = sorted(n["NodeID"] for n in _alive_nodes_offering(resource, self.config.node) if n["Resources"][resource] >= self.config.per_sandbox)
        if not nodes:
            raise DeploymentError(
                f"No alive node of the Ray cluster offers {self.config.per_sandbox:g} of resource {resource!r}{self._pinned()}: "
                f"start sandbox nodes with `ray start --resources '{{\"{resource}\": 8}}'` (or set deployment.resource)"
            )
        return nodes

    def _in_order(self, nodes: list[str]) -> list[str]:
        """The nodes to try, first to last: SPREAD starts each sandbox one node further round (a group lands on every
        node), DEFAULT fills them in one order."""
        if self.config.scheduling == "DEFAULT" or len(nodes) < 2:
            return nodes
        start = next(_spread) % len(nodes)
        return nodes[start:] + nodes[:start]

    def _pinned(self) -> str:
        return f" on node {self.config.node}" if self.config.node else ""

    async def _release(self) -> None:
        host, sandbox_id = self.host, self.sandbox_id
        self.host = self.sandbox_id = None
        try:
            if host is not None and sandbox_id is not None:
                self.release_report.update(await self._host_call("close", host=host, sandbox_id=sandbox_id))
        except DeploymentError as exc:
            logger.warning("could not stop the sandbox on %s: %s (its host removes it once this job ends)", self.where(), exc)
        finally:
            self.container_id = None

    async def _spawn_shell(self) -> ShellProcess:
        exec_id, token = await self._host_call("shell")
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.node["address"], self.node["relay_port"], limit=READ_SIZE * 2), self.config.call_timeout
            )
        except (OSError, asyncio.TimeoutError) as exc:
            raise SandboxDiedError(f"Cannot reach the sandbox's shell on {self.where()} ({exc})") from None
        writer.write(token.encode())
        return _RelayedShell(self, exec_id, reader, writer)

    async def _run_beside(self, argv: list[str]) -> None:
        await self._host_call("run_beside", argv)

    # ----- calls to the host -----

    def where(self) -> str:
        """The node this sandbox runs on, for messages: its address and the start of its id."""
        if not self.node:
            return "an unplaced node"
        return f"node {self.node['address']} ({self.node['node_id'][:12]})"

    async def _host_call(
        self, method: str, *args: Any, seconds: float | None = None, sandbox: bool = True, host: Any = None, sandbox_id: str | None = None
    ) -> Any:
        """`method` of the sandbox's host (with the sandbox's id first when `sandbox`); its value, or the error it
        answered raised here. A dead host, or none within `seconds` (`call_timeout`), is `SandboxDiedError` naming
        the node."""
        host = host or self._require_host()
        if sandbox:
            args = (sandbox_id or self.sandbox_id, *args)
        seconds = seconds or self.config.call_timeout
        try:
            value = await asyncio.wait_for(_awaited(getattr(host, method).remote(*args)), seconds)
        except asyncio.TimeoutError:
            raise HostGone(f"The sandbox on {self.where()} did not answer {method} within {seconds:g} s: the node is lost or hung") from None
        except ray.exceptions.RayError as exc:
            if self.node:
                _forget_host(self.node["node_id"], self.config.resource)
            raise HostGone(f"The sandbox on {self.where()} is gone ({type(exc).__name__}: {str(exc)[:300]})") from None
        return _unwrapped(value) if method in _ANSWERED else value

    async def _heartbeat(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(_awaited(self._require_host().alive.remote()), seconds)
        except asyncio.TimeoutError:
            raise SandboxDiedError(
                f"The sandbox on {self.where()} stopped answering (no heartbeat within {seconds:g} s) while a call was running: the node is lost or hung"
            ) from None
        except ray.exceptions.RayError as exc:
            raise SandboxDiedError(f"The sandbox on {self.where()} is gone ({type(exc).__name__}: {str(exc)[:300]})") from None

    def _blocking(self, name: str, *args: Any) -> Any:
        """A blocking container call (the docker diff, archives, pause): from a thread here."""
        host = self._require_host()
        try:
            answer = ray.get(host.call.remote(self.sandbox_id, name, *args), timeout=self.config.call_timeout)
        except ray.exceptions.RayError as exc:  # GetTimeoutError included
            raise SandboxDiedError(f"The sandbox on {self.where()} did not answer {name} ({type(exc).__name__}: {str(exc)[:300]})") from None
        return _unwrapped(answer)

    def _require_host(self) -> Any:
        if self.host is None:
            self._require_session()  # the not-started error
            raise SandboxDiedError(f"The sandbox on {self.where()} was released")
        return self.host

    # ----- the deployment's primitives, on the node -----

    async def is_alive(self) -> bool:
        if self._session is None or self.host is None:
            return False
        try:
            running = await self._host_call("running")
        except DeploymentError:
            return False
        return running and await super().is_alive()

    async def engine_answers(self) -> bool:
        """Whether the node and its engine answer: a node that is gone is the infrastructure's failure."""
        try:
            return await self._host_call("engine_answers")
        except DeploymentError:
            return False

    def beside(self) -> dict[str, Any]:
        return {"node": self.node["node_id"]} if self.node else {}

    @property
    def container(self) -> ContainerSandbox:
        return self

    on_this_engine = False  # its node's engine

    async def upload(self, local_path: str | Path, remote_path: str) -> None:
        """A host file or directory goes to the node as one tar archive (the node shares no files with this host)."""
        await self._upload_as_one_tar(local_path, remote_path)

    # The container operations (`changes`, `read_archive`, `isolate_network`, ...): `_forwarding_container_operations`.


_ANSWERED = {"open", "shell", "run_beside", "call", "engine_answers"}  # the host methods that answer (ok, value): `ray_host.answer`


def _unwrapped(answer: tuple[bool, Any]) -> Any:
    """The value a host answered, or the exception it answered raised here."""
    ok, value = answer
    if not ok:
        raise value
    return value


async def _awaited(ref: Any) -> Any:
    return await ref
