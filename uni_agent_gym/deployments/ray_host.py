"""The node side of `deployment.type: ray`: one `SandboxHost` actor per sandbox node serves all its sandboxes.

Why a host and not an actor per sandbox: an actor is a Python worker process of its own, 139 MiB of the node's
memory and about 1.2 CPU-s of start per sandbox (measured: docs/performance.md); a host is one process per node
(and per `deployment.resource`) however many sandboxes it holds. It is a named, detached async actor, made on
first use by whichever driver process asks first and shared by every driver of every job. It

- admits a sandbox while the node's `resource` has room (the node's total of it, `per_sandbox` each: the
  capacity is counted here, Ray reserves nothing per sandbox);
- starts the sandbox's container with the docker deployment on the node's own engine (every docker option
  means what it means on docker, and the engine's socket never leaves the node), labelled with the driver's
  job and this node: the container without a session (`DockerDeployment.start_container`, its public calls);
- opens shells in it and relays each one's byte stream to the driver over TCP (`relay`): the driver runs the
  shell session itself, so a command costs a loopback hop, not a Ray call. A shell is claimed by a random
  token of 32 hex digits that only the driver that asked for it learned (through Ray);
- answers the container's operations (the diff, archives, pause, the network: `container.OPERATIONS`, the
  `ContainerSandbox` protocol's calls) for the driver, and no other;
- every `REAP_SECONDS` removes the containers of jobs that ended (the driver exited or was killed: nobody
  called `stop`) and those its engine holds for a node that died (a host that died with its node).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hashlib
import logging
import os
import pickle
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import ray

from uni_agent_gym.config import DockerDeploymentConfig
from uni_agent_gym.deployments.container import OPERATIONS
from uni_agent_gym.deployments.docker import DockerDeployment, cleanup, docker_client
from uni_agent_gym.deployments.owner import OwnerState
from uni_agent_gym.deployments.session import READ_SIZE, ShellProcess
from uni_agent_gym.errors import DeploymentError

logger = logging.getLogger(__name__)

JOB_LABEL = "uni-agent-gym.ray-job"  # the Ray job of the driver that opened the sandbox
NODE_LABEL = "uni-agent-gym.ray-node"  # the node whose host started it
NAMESPACE = "uni_agent_gym"  # the hosts' names live here, whatever namespace a driver's job has
REAP_SECONDS = 5.0
TOKEN_CHARS = 32
# A host runs the code its node had when it started: a host of other code (the gym was updated on a live cluster)
# is not used, another is made beside it. Its code is this package (deployments/) and the config models.
_CODE = sorted(Path(__file__).parent.glob("*.py")) + [Path(__file__).parent.parent / "config.py"]
CODE_VERSION = hashlib.sha256(b"".join(path.read_bytes() for path in _CODE)).hexdigest()[:10]


def host_name(resource: str, node_id: str) -> str:
    """The name of the host of `resource` on node `node_id` (in `NAMESPACE`)."""
    return f"uni-agent-gym-host-{CODE_VERSION}-{resource}-{node_id}"


def ended_jobs() -> set[str]:
    """The ids of the jobs the cluster lists as ended (their driver exited or died). Ray lists jobs publicly only
    through its dashboard's job API, which a cluster may run without (the test cluster does): this reads the GCS's
    job table through Ray's own state accessor, the one private name this module uses (`tests/test_ray_deployment.py`
    pins what it answers)."""
    from ray._private.state import state

    return {job["JobID"] for job in state.job_table() if job["IsDead"]}


def alive_nodes() -> set[str]:
    return {node["NodeID"] for node in ray.nodes() if node["Alive"]}


def sandbox_state(labels: dict[str, str], ended: set[str], alive: set[str]) -> OwnerState:
    """Whether a host's container still belongs to someone: gone when its driver's job ended or the node whose
    host started it died (its shells died with that host); unknown for a container no host started."""
    job, node = labels.get(JOB_LABEL), labels.get(NODE_LABEL)
    if job is None or node is None:
        return "unknown"
    return "gone" if job in ended or node not in alive else "alive"


def portable(exc: BaseException) -> BaseException:
    """`exc` as it can travel back to the driver (an exception that does not pickle becomes a DeploymentError)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any pickling failure
        return DeploymentError(f"{type(exc).__name__}: {exc}")


async def answer(call: Callable[[], Awaitable[Any]]) -> tuple[bool, Any]:
    """`(True, value)` of `call()`, or `(False, the exception)` made to travel to the driver, so the driver raises
    the gym's own errors, not Ray's wrappers."""
    try:
        return True, await call()
    except Exception as exc:  # noqa: BLE001 - handed back to the driver
        return False, portable(exc)


@dataclasses.dataclass
class _Sandbox:
    deployment: DockerDeployment
    job: str
    amount: float
    closed: bool = False


class SandboxHost:
    """The sandboxes of one node (for one `deployment.resource`); see the module docstring."""

    def __init__(self, resource: str) -> None:
        self.resource = resource
        self.node_id = ray.get_runtime_context().get_node_id()
        self.address = ray.util.get_node_ip_address()
        nodes = [node for node in ray.nodes() if node["NodeID"] == self.node_id]
        self.capacity = nodes[0]["Resources"].get(resource, 0.0) if nodes else 0.0
        self.used = 0.0
        self.sandboxes: dict[str, _Sandbox] = {}
        self.shells: dict[str, ShellProcess] = {}  # token -> a shell waiting for its driver to connect
        self.relay_port: int | None = None
        self._serving: asyncio.Task | None = None

    async def serve(self) -> dict[str, Any]:
        """Start the relay and the reaper (once), and say where this host is: node id and address, the engine it
        drives, its process, the relay's port."""
        if self._serving is None:
            self._serving = asyncio.ensure_future(self._start_serving())
        await asyncio.shield(self._serving)
        return {
            "node_id": self.node_id, "address": self.address, "pid": str(os.getpid()), "relay_port": self.relay_port,
            "engine": os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"),
        }  # fmt: skip

    async def _start_serving(self) -> None:
        # The docker SDK blocks: its calls run in threads, as many as the starts a node takes at once.
        asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(64, thread_name_prefix="uag-host"))
        server = await asyncio.start_server(self._relay, host=self.address, port=0)
        self.relay_port = server.sockets[0].getsockname()[1]
        asyncio.ensure_future(self._reap_forever())

    async def alive(self) -> bool:
        """The heartbeat a driver asks for while its command runs (this event loop answers beside it)."""
        return True

    # ----- sandboxes -----

    async def open(self, sandbox_id: str, job: str, config: dict[str, Any], registry: str | None, amount: float) -> tuple[bool, Any]:
        """Start sandbox `sandbox_id` for a driver of `job`: `(True, its container id)`, `(True, None)` when this node
        has no room for `amount` more of the resource, `(False, why)` when it could not start."""
        if self.used + amount > self.capacity + 1e-9:
            return True, None
        self.used += amount
        wanted = DockerDeploymentConfig.model_validate(config)
        labels = {JOB_LABEL: job, NODE_LABEL: self.node_id}
        sandbox = _Sandbox(DockerDeployment(wanted.model_copy(update={"pull": "never"}), labels), job, amount)  # pulled below
        self.sandboxes[sandbox_id] = sandbox

        async def start() -> str:
            from uni_agent_gym.deployments.registry import ensure_from_registry

            await asyncio.to_thread(ensure_from_registry, wanted.image, registry, wanted.pull)
            container_id = await sandbox.deployment.start_container()  # no session: the driver runs it over the relay
            if sandbox.closed:  # the driver gave up meanwhile (its start_timeout, a cancelled start)
                await sandbox.deployment.release_container()
                raise DeploymentError("The sandbox was closed while it started")
            return container_id

        result = await answer(start)
        if not result[0]:
            await self.close(sandbox_id)
        return result

    async def close(self, sandbox_id: str) -> dict[str, str]:
        """Remove the sandbox's container and free its room; what releasing it found (idempotent)."""
        sandbox = self.sandboxes.pop(sandbox_id, None)
        if sandbox is None or sandbox.closed:
            return {}
        sandbox.closed = True
        self.used = max(0.0, self.used - sandbox.amount)
        await sandbox.deployment.release_container()
        return dict(sandbox.deployment.release_report)

    async def shell(self, sandbox_id: str) -> tuple[bool, Any]:
        """A new bash in the sandbox, waiting for its driver: `(exec id, token)` to claim it at the relay."""

        async def spawn() -> tuple[str, str]:
            process = await self._sandbox(sandbox_id).deployment.spawn_shell()
            token = secrets.token_hex(TOKEN_CHARS // 2)
            self.shells[token] = process
            asyncio.get_running_loop().call_later(60, self._forget, token)  # a driver that never connects
            return process.exec_id, token

        return await answer(spawn)

    def _forget(self, token: str) -> None:
        process = self.shells.pop(token, None)
        if process is not None:
            asyncio.ensure_future(process.kill())

    async def exit_code(self, exec_id: str) -> int | None:
        try:
            info = await asyncio.to_thread(docker_client().api.exec_inspect, exec_id)
        except Exception:  # noqa: BLE001 - gone, or the engine does not answer: unknown
            return None
        return None if info.get("Running") else info.get("ExitCode")

    async def run_beside(self, sandbox_id: str, argv: list[str]) -> tuple[bool, Any]:
        return await answer(lambda: self._sandbox(sandbox_id).deployment.run_beside(argv))

    async def running(self, sandbox_id: str) -> bool:
        """Whether the sandbox's container runs."""
        sandbox = self.sandboxes.get(sandbox_id)
        if sandbox is None or sandbox.deployment.container_id is None:
            return False
        try:
            state = await asyncio.to_thread(docker_client().api.inspect_container, sandbox.deployment.container_id)
        except Exception:  # noqa: BLE001 - gone, or the engine does not answer
            return False
        return bool(state["State"].get("Running"))

    async def engine_answers(self, sandbox_id: str) -> tuple[bool, Any]:
        """Whether the engine that runs the sandbox answers (asked once the sandbox died: of what ran in it, or of
        the infrastructure)."""
        return await answer(lambda: self._sandbox(sandbox_id).deployment.engine_answers())

    async def call(self, sandbox_id: str, name: str, *args: Any) -> tuple[bool, Any]:
        """The container operation `name` (one of `container.OPERATIONS`) on the sandbox's container: a blocking one
        in a thread, a coroutine awaited. Any other name is refused."""

        async def run() -> Any:
            if name not in OPERATIONS:
                raise DeploymentError(f"A sandbox host answers only the container operations ({', '.join(OPERATIONS)}), not {name!r}")
            operation = getattr(self._sandbox(sandbox_id).deployment.container, name)
            return await asyncio.to_thread(operation, *args) if OPERATIONS[name] else await operation(*args)

        return await answer(run)

    def _sandbox(self, sandbox_id: str) -> _Sandbox:
        sandbox = self.sandboxes.get(sandbox_id)
        if sandbox is None:
            from uni_agent_gym.errors import SandboxDiedError

            raise SandboxDiedError(f"Node {self.address} holds no sandbox {sandbox_id} (it was closed, or its job ended)")
        return sandbox

    # ----- the relay: a shell's bytes between its container and its driver -----

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            token = (await asyncio.wait_for(reader.readexactly(TOKEN_CHARS), 30)).decode("ascii", "replace")
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        process = self.shells.pop(token, None)
        if process is None:  # not a token this host gave out
            writer.close()
            return

        async def to_shell() -> None:
            while data := await reader.read(READ_SIZE):
                await process.write(data)

        async def to_driver() -> None:
            while data := await process.read():
                writer.write(data)
                await writer.drain()

        pumps = [asyncio.ensure_future(to_shell()), asyncio.ensure_future(to_driver())]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            await process.kill()
            writer.close()

    # ----- what nobody closed -----

    async def _reap_forever(self) -> None:
        while True:
            try:
                await self.reap()
            except Exception as exc:  # noqa: BLE001 - the next round tries again
                logger.warning("reaping ended jobs' sandboxes failed: %s", exc)
            await asyncio.sleep(REAP_SECONDS)

    async def reap(self) -> int:
        """Remove the sandboxes of ended jobs, and the containers this node's engine holds for a node that died;
        how many."""
        ended, alive = await asyncio.to_thread(lambda: (ended_jobs(), alive_nodes()))
        reaped = 0
        for sandbox_id, sandbox in list(self.sandboxes.items()):
            if sandbox.job in ended:
                await self.close(sandbox_id)
                reaped += 1
        # What the engine still holds for ended jobs or dead nodes: a host's that died with its node.
        left = await asyncio.to_thread(cleanup, owner_state=lambda labels: sandbox_state(labels, ended, alive))
        reaped += len(left.removed)
        if reaped:
            logger.info("removed %d sandbox(es) of ended jobs or dead nodes", reaped)
        return reaped
