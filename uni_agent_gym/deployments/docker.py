"""A container per deployment, through the docker SDK, with one persistent bash in it.

The shell is a single `docker exec` whose stdin/stdout socket stays open for the whole episode
(~0.1 ms a command instead of ~70 ms for an exec per command). Every blocking SDK call runs in a
worker thread. Containers carry the label `uni-agent-gym=1` and a run id, so `uni-agent-gym cleanup`
can reap what a crashed process left behind. The container without the session is public too
(`start_container`, `spawn_shell`, `run_beside`, `release_container`): `start()` and `stop()` are made of
them, and a Ray node's host (`ray_host.py`) uses them alone, its driver running the session over a relay.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import io
import logging
import os
import re
import secrets
import socket
import stat
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors

from uni_agent_gym.config import DockerDeploymentConfig
from uni_agent_gym.deployments import overlay, owner
from uni_agent_gym.deployments.owner import OWNER_LABEL
from uni_agent_gym.deployments.base import Deployment
from uni_agent_gym.deployments.container import ArchiveTooLarge, ContainerSandbox
from uni_agent_gym.deployments.session import READ_SIZE, ShellProcess, StreamShell
from uni_agent_gym.errors import ConfigError, DeploymentError, ImageNotFoundError, SandboxDiedError, UniAgentGymError

logger = logging.getLogger(__name__)

LABEL = "uni-agent-gym"
RUN_ID_LABEL = "uni-agent-gym.run-id"
_UNKNOWN = object()
_TAR_TYPES = {tarfile.DIRTYPE: stat.S_IFDIR, tarfile.SYMTYPE: stat.S_IFLNK, tarfile.LNKTYPE: stat.S_IFREG,
              tarfile.CHRTYPE: stat.S_IFCHR, tarfile.BLKTYPE: stat.S_IFBLK, tarfile.FIFOTYPE: stat.S_IFIFO}  # fmt: skip
RUN_ID_VARIABLE = "UNI_AGENT_GYM_RUN_ID"  # a job sets it once; every process it starts labels its containers with it


@functools.cache
def docker_client() -> docker.DockerClient:
    """One SDK client per process (it pools connections); a clear error when no engine answers."""
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except docker.errors.DockerException as exc:
        raise DeploymentError(
            f"Cannot reach a Docker engine ({exc}). Start dockerd (or Docker Desktop), or set DOCKER_HOST."
        ) from None
    return client


def image_exists(name: str) -> bool:
    """Whether the engine has image `name` locally (blocking: call it through a thread from async code)."""
    return image_labels(name) is not None


def image_labels(name: str) -> dict[str, str] | None:
    """The labels of image `name` here ({} for none), or None when the engine has no such image (blocking)."""
    found = image_identity(name)
    return None if found is None else found[1]


def image_identity(name: str) -> tuple[str, dict[str, str]] | None:
    """The id and labels of image `name` here, or None when the engine has no such image (blocking)."""
    try:
        found = docker_client().images.get(name)
    except docker.errors.ImageNotFound:
        return None
    return found.id, found.labels or {}


def ensure_image(image: str, pull: str) -> None:
    """Make sure the engine has `image`, pulling it as `pull` ("missing", "always", "never") says (blocking)."""
    if pull != "always" and image_exists(image):
        return
    if pull != "never":
        try:
            docker_client().images.pull(image)
            return
        except docker.errors.APIError as exc:
            reason = f"pulling it failed: {exc.explanation or exc}"
    else:
        reason = "pull is 'never'"
    raise ImageNotFoundError(
        f"Docker image {image!r} is not on this machine and {reason}. Get it with `docker pull {image}` "
        f"where a registry is reachable, or build it offline: {_offline_build(image)}"
    )


def _offline_build(image: str) -> str:
    """How to build `image` here: a base image by its Python, any other (an instance's, of any language) by
    `images build`, which says what else it needs."""
    base = re.fullmatch(r"uni-agent-gym/base:py(\d+\.\d+)", image)
    if base:
        return f"`uni-agent-gym images bootstrap-base --python {base.group(1)}`."
    return ("`uni-agent-gym images build --dataset ROWS --instance-ids ID` builds an instance's image from its row "
            "(its environment or toolchain layer too; docs/datasets.md).")


def default_run_id() -> str:
    """The run id used when the config names none: `$UNI_AGENT_GYM_RUN_ID` if set (so a CI job or a
    cluster task can `cleanup --run-id` whatever its processes left), else one per process."""
    return os.environ.get(RUN_ID_VARIABLE) or _process_run_id()


@functools.cache
def _process_run_id() -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


class _DockerShell(StreamShell):
    """bash behind the hijacked socket of `docker exec`, with docker's stream frames removed."""

    def __init__(self, exec_id: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader, writer)
        self.exec_id = exec_id
        self._buffer = bytearray()

    async def read(self) -> bytes:
        # Frames are an 8-byte header (stream, 0, 0, 0, size as big-endian uint32) then the payload.
        # State lives in self._buffer between awaits, so a cancelled read loses nothing.
        while True:
            payload = bytearray()
            while len(self._buffer) >= 8:
                size = int.from_bytes(self._buffer[4:8], "big")
                if len(self._buffer) < 8 + size:
                    break
                payload += self._buffer[8 : 8 + size]
                del self._buffer[: 8 + size]
            if payload:
                return bytes(payload)
            data = await self._reader.read(READ_SIZE)
            if not data:
                return b""
            self._buffer += data

    async def exit_code(self) -> int | None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                info = await asyncio.to_thread(docker_client().api.exec_inspect, self.exec_id)
            except Exception:  # noqa: BLE001 - gone, or the daemon is unreachable: the code is unknown
                return None
            if not info.get("Running"):
                return info.get("ExitCode")
            await asyncio.sleep(0.05)
        return None


class DockerDeployment(Deployment):
    """A fresh container from `config.image`; `stop()` removes it whatever state it is in."""

    def __init__(self, config: DockerDeploymentConfig, labels: dict[str, str] | None = None) -> None:
        super().__init__(config)
        self.container_id: str | None = None
        self.labels = labels or {}  # more labels for its container (a Ray node's host adds the driver's job)
        self._overlay: overlay.Layers | None | object = _UNKNOWN
        self.run_id = config.run_id or default_run_id()

    # ----- the container without a shell session: `start()` and `stop()` are these plus the session -----

    async def start_container(self) -> str:
        """Create and start the container with no shell session in it; its id. `start()` does this and then opens
        the session; a Ray node's host (`ray_host.py`) does only this, and its driver runs the session over a relay
        with `spawn_shell` and `run_beside`. Undo it with `release_container`."""
        if self.config.read_only_root and not self.config.workdir:
            raise ConfigError("deployment.read_only_root needs deployment.workdir: the workspace must stay writable")
        await asyncio.to_thread(self._ensure_image)
        self.container_id = await asyncio.to_thread(self._create_container)
        return self.container_id

    def _ensure_image(self) -> None:
        ensure_image(self.config.image, self.config.pull)

    def _create_container(self) -> str:
        config = self.config
        options: dict = dict(
            command=["sleep", "infinity"],
            detach=True,
            init=True,  # docker-init as PID 1 reaps the orphans of killed commands
            labels={**self.labels, LABEL: "1", RUN_ID_LABEL: self.run_id, OWNER_LABEL: owner.this_process()},
            name=f"uni-agent-gym-{self.run_id}-{secrets.token_hex(4)}",
            environment=config.env,
            privileged=False,
            security_opt=["no-new-privileges:true"],
            cap_drop=["ALL"],
            cap_add=config.cap_add,
            pids_limit=config.pids_limit,
            mem_limit=config.memory,
        )
        if config.memory:
            options["memswap_limit"] = config.memory  # no swap beyond the limit
        if config.cpus:
            options["nano_cpus"] = int(config.cpus * 1e9)
        if config.network == "none":
            options["network_mode"] = "none"
        if config.workdir:
            options["working_dir"] = config.workdir
        if config.read_only_root:  # an anonymous volume at the workdir is seeded with the image's files there (the repository)
            options.update(read_only=True, tmpfs={"/tmp": "rw,exec,size=1g", "/run": "rw,size=64m"},
                           mounts=[docker.types.Mount(target=config.workdir, source=None, type="volume")])  # fmt: skip
        try:
            container = docker_client().containers.run(config.image, **options)
        except docker.errors.APIError as exc:
            raise DeploymentError(f"Cannot start a container from {config.image!r}: {exc.explanation or exc}") from None
        return container.id

    async def spawn_shell(self) -> ShellProcess:
        """A new `bash --noprofile --norc` in the started container, its stdin and merged output on one socket (the
        session's shell, or one a Ray node's host relays to its driver). `SandboxDiedError` when the container or
        the engine is gone."""

        def open_exec() -> tuple[str, socket.socket]:
            api = docker_client().api
            try:
                exec_id = api.exec_create(
                    self.container_id, ["bash", "--noprofile", "--norc"], stdin=True, stdout=True, stderr=True
                )["Id"]
                raw = api.exec_start(exec_id, socket=True)
            except docker.errors.NotFound:
                raise SandboxDiedError(f"Container {self.container_id} is gone") from None
            except docker.errors.APIError as exc:
                raise SandboxDiedError(f"Cannot open a shell in container {self.container_id}: {exc}") from None
            except Exception as exc:  # requests' ConnectionError and kin: the daemon is down or restarting
                raise SandboxDiedError(f"The Docker daemon does not answer ({exc}); container {self.container_id} is lost") from None
            sock = getattr(raw, "_sock", raw)  # SocketIO wraps the socket on unix connections
            if not isinstance(sock, socket.socket):
                raise DeploymentError("The Docker connection is not a plain socket (TLS is not supported)")
            sock.setblocking(False)
            return exec_id, sock

        exec_id, sock = await asyncio.to_thread(open_exec)
        reader, writer = await asyncio.open_connection(sock=sock, limit=READ_SIZE * 2)
        return _DockerShell(exec_id, reader, writer)

    async def run_beside(self, argv: list[str]) -> None:
        """Run `argv` in the container beside its shells, to its end (how the session kills a command's processes).
        `SandboxDiedError` when the container does not run commands."""

        def run() -> None:
            try:
                docker_client().api.exec_start(docker_client().api.exec_create(self.container_id, argv)["Id"])
            except Exception as exc:  # an API error, or the daemon is unreachable
                raise SandboxDiedError(f"Container {self.container_id} does not run commands: {exc}") from None

        await asyncio.to_thread(run)

    async def release_container(self) -> None:
        """Remove the container, running or not; idempotent, and never raises (a container it could not remove is
        logged, and `uni-agent-gym cleanup` reaps it)."""
        container_id, self.container_id = self.container_id, None
        if container_id is None:
            return

        try:
            await asyncio.to_thread(lambda: remove_container(docker_client().api, container_id))
        except Exception as exc:  # noqa: BLE001 - cleanup boundary: an API error or an unreachable daemon
            logger.warning("could not remove container %s: %s (`uni-agent-gym cleanup` reaps it)", container_id, exc)

    # `Deployment.start()` and `stop()` call these hooks: the session path is the public calls above.

    async def _provision(self) -> None:
        await self.start_container()

    async def _spawn_shell(self) -> ShellProcess:
        return await self.spawn_shell()

    async def _run_beside(self, argv: list[str]) -> None:
        await self.run_beside(argv)

    async def _release(self) -> None:
        await self.release_container()

    async def is_alive(self) -> bool:
        if self.container_id is None:
            return False
        try:
            state = await asyncio.to_thread(lambda: docker_client().api.inspect_container(self.container_id)["State"])
        except Exception:  # noqa: BLE001 - gone, or the daemon is unreachable: not alive either way
            return False
        return bool(state.get("Running")) and await super().is_alive()

    async def engine_answers(self) -> bool:
        try:
            await asyncio.wait_for(asyncio.to_thread(lambda: docker_client().ping()), 30)
        except Exception:  # noqa: BLE001 - unreachable, refusing or too slow: the engine does not answer
            return False
        return True

    async def isolate_network(self) -> bool:
        """Disconnect the container from all its networks (only loopback is left)."""
        self._require_container_id()

        def disconnect() -> None:
            api = docker_client().api
            networks = api.inspect_container(self.container_id)["NetworkSettings"]["Networks"] or {}
            for name in networks:
                if name != "none":
                    api.disconnect_container_from_network(self.container_id, name, force=True)

        await asyncio.to_thread(disconnect)
        return True

    async def restore_network(self) -> None:
        """Undo `isolate_network`: reconnect the configured network (a pooled container's next episode)."""
        self._require_container_id()
        if self.config.network == "none":
            return

        def connect() -> None:
            api = docker_client().api
            if not api.inspect_container(self.container_id)["NetworkSettings"]["Networks"]:
                api.connect_container_to_network(self.container_id, self.config.network)

        await asyncio.to_thread(connect)

    @property
    def container(self) -> ContainerSandbox:
        return self

    on_this_engine = True

    def _require_container_id(self) -> str:
        """The container's id; the not-started error before `start()` (a Ray node's host has a container and no shell)."""
        if self.container_id is None:
            self._require_session()
        return self.container_id

    def changes(self) -> list[tuple[str, str]]:
        """`docker diff`: (kind, path) of what the container changed against its image; kind is A, C or D.
        Read from its overlay2 layers where this host can (milliseconds), else asked of the daemon. Blocking."""
        layers = self._layers()
        found = overlay.changes(layers) if layers is not None else None
        if found is not None:
            return found
        kinds = {0: "C", 1: "A", 2: "D"}
        return [(kinds[item["Kind"]], item["Path"]) for item in self._api("list changes", docker_client().api.diff, self.container_id) or []]

    def _layers(self) -> overlay.Layers | None:
        """The container's overlay2 layers on this host (they do not change while it exists), or None."""
        if self._overlay is _UNKNOWN:
            self._overlay = overlay.layers(self._api("inspect", docker_client().api.inspect_container, self.container_id))
        return self._overlay

    async def upload(self, local_path: str | Path, remote_path: str) -> None:
        """Copy a host file or directory in with one tar archive (faster than file by file)."""
        await self._upload_as_one_tar(local_path, remote_path)

    def read_archive(self, path: str, max_bytes: int) -> bytes | None:
        """A tar of `path` (a file or a whole directory) as the daemon reads it from the container's
        filesystem: nothing inside the container runs, so nothing the agent left there takes part.
        None when `path` does not exist; `ArchiveTooLarge` past `max_bytes`. Blocking."""
        layers = self._layers()
        if layers is not None:  # a changed path is all in the container's own layer: read it there
            try:
                data = overlay.archive(layers, path, max_bytes)
            except overlay.TooLarge:
                raise ArchiveTooLarge(f"{path} holds more than {max_bytes} bytes") from None
            if data is not None:
                return data
        api = docker_client().api

        def read() -> bytes | None:
            # The SDK's get_archive leaves the response open when its reader stops early, and the daemon
            # holds the container's lock (pause, exec, remove wait on it) until the stream is closed.
            response = api.get(api._url("/containers/{0}/archive", self.container_id), params={"path": path}, stream=True)
            with contextlib.closing(response):
                if response.status_code == 404:
                    return None
                api._raise_for_status(response)
                data = bytearray()
                for chunk in response.iter_content(1 << 16):
                    data += chunk
                    if len(data) > max_bytes:
                        raise ArchiveTooLarge(f"{path} holds more than {max_bytes} bytes")
                return bytes(data)

        data = self._api(f"read {path}", read)
        if data is None:  # a 404 means the path or the container is gone: only the former is an answer
            self._api("inspect", api.inspect_container, self.container_id)
        return data

    def read_heads(self, paths: list[str], size: int) -> dict[str, tuple[int, bytes]]:
        """{path: (mode, the first `size` bytes of a regular file, else b"")} of those of `paths` that exist: from the
        container's own layer where this host reads it, else the start of the daemon's archive of each. Blocking."""
        layers = self._layers()
        api = docker_client().api

        def read(path: str) -> tuple[int, bytes] | None:
            response = api.get(api._url("/containers/{0}/archive", self.container_id), params={"path": path}, stream=True)
            with contextlib.closing(response):  # closed before the whole file is read: the daemon's lock goes with it
                if response.status_code == 404:
                    return None
                api._raise_for_status(response)
                start = bytearray()  # the tar's headers (a long name's too) and the file's first bytes
                for chunk in response.iter_content(1 << 16):
                    start += chunk
                    if len(start) >= size + (1 << 16):
                        break
            with tarfile.open(fileobj=io.BytesIO(bytes(start)), mode="r|") as tar:
                member = tar.next()
                if member is None:
                    return None
                mode = member.mode | _TAR_TYPES.get(member.type, stat.S_IFREG)
                return mode, tar.extractfile(member).read(size) if member.isreg() else b""

        found = {}
        for path in paths:
            head = overlay.head(layers, path, size) if layers is not None else None
            if head is None:
                head = self._api(f"read {path}", read, path)
            if head is not None:
                found[path] = head
        return found

    def write_archive(self, directory: str, data: bytes) -> None:
        """Unpack a tar into `directory` of the container (the daemon does it; nothing inside runs). Blocking."""
        if not self._api(f"copy files to {directory}", docker_client().api.put_archive, self.container_id, directory, data):
            raise DeploymentError(f"Docker refused to copy files to {directory} in container {self.container_id}")

    def pause(self) -> None:
        """Freeze every process in the container (the daemon's cgroup freezer). Blocking. runc gives up on a freeze
        that does not settle in time ("unable to freeze"; seen once on a loaded machine, while the container's processes
        were starting others): that is tried again, three times in all, before it is an error."""
        for attempt in range(3):
            try:
                return self._api("pause", docker_client().api.pause, self.container_id)
            except DeploymentError as exc:
                if "unable to freeze" not in str(exc) or attempt == 2:
                    raise
                logger.info("container %s did not freeze (%s); trying again", self.container_id, exc)
                time.sleep(0.5)

    def unpause(self) -> None:
        """Undo `pause`. Blocking."""
        self._api("unpause", docker_client().api.unpause, self.container_id)

    def _api(self, what: str, call, *args, **kwargs):
        """A blocking SDK call on this container; a container that is gone, or a daemon that does not
        answer, is `SandboxDiedError` (not the agent's doing), any other refusal `DeploymentError`."""
        try:
            return call(*args, **kwargs)
        except UniAgentGymError:
            raise
        except docker.errors.NotFound:
            raise SandboxDiedError(f"Cannot {what}: container {self.container_id} is gone") from None
        except docker.errors.APIError as exc:
            raise DeploymentError(f"Cannot {what} in container {self.container_id}: {exc.explanation or exc}") from None
        except Exception as exc:  # requests' ConnectionError and kin: the daemon is down or restarting
            raise SandboxDiedError(f"Cannot {what}: the Docker daemon does not answer ({exc})") from None


@dataclasses.dataclass
class Cleanup:
    """What a `cleanup` removed (or, dry, would remove), and the containers it left with the reason."""

    removed: list[str] = dataclasses.field(default_factory=list)
    kept: dict[str, str] = dataclasses.field(default_factory=dict)


def cleanup(
    run_id: str | None = None, *, everything: bool = False, dry_run: bool = False,
    owner_state: Callable[[dict[str, str]], owner.OwnerState] | None = None,
) -> Cleanup:
    """Remove the containers uni-agent-gym labelled whose run is over: those whose owner is gone (by default their
    creating process, `deployments.owner`; a Ray node's, the driver's job: `owner_state` of the labels says; a live
    run's are kept, with their run id), every one of run `run_id` when given, or every one with `everything`.
    `dry_run` removes nothing and says what it would. Blocking."""
    owner_state = owner_state or (lambda labels: owner.owner_state(labels.get(OWNER_LABEL)))
    label = [f"{LABEL}=1"] + ([f"{RUN_ID_LABEL}={run_id}"] if run_id else [])
    api = docker_client().api
    result = Cleanup()
    for container in api.containers(all=True, filters={"label": label}):
        name, labels = container["Names"][0].lstrip("/"), container.get("Labels") or {}
        state = "gone" if run_id or everything else owner_state(labels)
        if state != "gone":
            why = "its run is live" if state == "alive" else "its owner is not known here (another host, or made before owners were labelled)"
            result.kept[name] = f"{why}: run {labels.get(RUN_ID_LABEL)} (--run-id {labels.get(RUN_ID_LABEL)} or --all removes it)"
        elif dry_run or remove_container(api, container["Id"]):
            result.removed.append(name)
    return result


def remove_container(api: docker.APIClient, container_id: str) -> bool:
    """Remove a container and its volumes, running or not (blocking): True where this call removed it, False where
    it was gone or another caller is removing it. Two callers do race for one container (two `cleanup`s, a release
    beside a `cleanup`, two test workers sweeping a killed session's containers), and the engine answers the second
    409 "removal of container ... is already in progress": that is not a failure of either."""
    try:
        api.remove_container(container_id, force=True, v=True)
        return True
    except docker.errors.NotFound:
        return False
    except docker.errors.APIError as exc:
        if exc.status_code == 409 and "already in progress" in str(exc):
            return False
        raise
