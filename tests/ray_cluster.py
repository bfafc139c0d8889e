"""A real multi-node Ray cluster on this machine, for the `ray` deployment's tests: a head (127.0.0.2) and
two worker nodes (127.0.0.3, 127.0.0.4), each worker with its own Docker engine (its own socket, data
root, exec root and bridge) and its own working directory, and a registry (Debian's `docker-registry`)
on 127.0.0.1. Only loopback addresses and sockets on this machine are used.

    python -m tests.ray_cluster start | stop | status

`make test` starts it before the suite and stops it after; the `ray_cluster` fixture reuses a running
one, else starts one and stops it at the end of its session. Everything is stopped by its PID (a `ray
start --block` process per node with every process under it, its raylet and workers included; the
dockerds; the registry), never by name: other tests run their own Ray. The engines' data
roots persist under ROOT, so a warm machine pulls nothing twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

ROOT = Path(os.environ.get("UNI_AGENT_GYM_TEST_CLUSTER", "/var/lib/uag-test-cluster"))
HEAD_ADDRESS = "127.0.0.2"  # not 127.0.0.1: Ray replaces that by the machine's outward address
GCS_PORT = 6390
REGISTRY = "127.0.0.1:5055"
RESOURCE = "uni_agent_gym_sandbox"
SLOTS = 8  # sandboxes per worker node
WORKERS = {"node1": "127.0.0.3", "node2": "127.0.0.4"}
BRIDGES = {"node1": ("uag-node1", "10.231.1.1/24"), "node2": ("uag-node2", "10.231.2.1/24"), "bare": ("uag-bare", "10.231.9.1/24")}
RAY = Path(sys.executable).with_name("ray")
STARTUP_SECONDS = 120


@dataclass
class Cluster:
    """What the fixture hands the tests, and what `stop` reads back from ROOT/state.json."""

    address: str = f"{HEAD_ADDRESS}:{GCS_PORT}"
    registry: str = REGISTRY
    resource: str = RESOURCE
    engines: dict[str, str] = field(default_factory=dict)  # worker name -> its DOCKER_HOST
    pids: dict[str, int] = field(default_factory=dict)  # process name -> pid (a node's `ray start --block`, dockerds, registry)
    # process name -> its start time (psutil's create_time): after a killed run its pids may be another process's
    # (this kernel's pid_max is 32768, and a suite goes through that many in half an hour), which `stop` must spare
    started: dict[str, float] = field(default_factory=dict)

    def record(self, name: str, pid: int) -> int:
        self.pids[name] = pid
        self.started[name] = psutil.Process(pid).create_time()
        return pid

    def ours(self, name: str) -> bool:
        """Whether process `name` still runs as this cluster started it (not a process that has its pid since)."""
        pid = self.pids[name]
        if not _alive(pid):
            return False
        if name not in self.started:  # a state.json written before start times were recorded
            return True
        with contextlib.suppress(psutil.Error):
            return psutil.Process(pid).create_time() == self.started[name]
        return False

    def deployment(self, **options) -> dict:
        """A `ray` deployment config dict for this cluster."""
        return {"type": "ray", "address": self.address, "registry": self.registry, "resource": self.resource, **options}

    def push(self, image: str) -> str:
        """Push `image` from this machine's engine to the registry, and untag it on every node engine that holds
        another image under its name. The node engines outlive a run, and a node that has an image does not pull
        it again (`deployment.pull: missing`): an image rebuilt under its tag since (its inputs changed) would
        otherwise be run as the node pulled it first. A node that holds this very image keeps it."""
        import docker

        from uni_agent_gym.deployments.docker import docker_client
        from uni_agent_gym.deployments.registry import push

        target = push(image, self.registry)
        wanted = docker_client().images.get(image).id
        for engine in self.engines.values():
            client = docker.DockerClient(base_url=engine)
            try:
                for name in (image, target):
                    with contextlib.suppress(docker.errors.ImageNotFound):
                        if client.images.get(name).id != wanted:  # deleted once untagged, unless a container uses it
                            client.images.remove(name, force=True)
            finally:
                client.close()
        return target

    def start_node(self, name: str, ip: str, resources: dict[str, float], engine: str) -> int:
        """One more worker node (a test's own, to kill): the pid of its `ray start --block`."""
        pid = _start_ray_node(name, ["--address", self.address, "--node-ip-address", ip, "--resources", json.dumps(resources)], engine)
        return self.record(f"ray-{name}", pid)


# A driver of its own (`python -c DRIVER CONFIG_JSON COUNT`): opens COUNT sandboxes of the ray deployment CONFIG, prints
# {"job": its Ray job, "containers": their ids} on one line, then waits to be killed (the leak checks kill it).
DRIVER = """
import asyncio, json, sys
import ray
from uni_agent_gym.deployments import make_deployment

async def main():
    config, count = json.loads(sys.argv[1]), int(sys.argv[2])
    deployments = [make_deployment(config) for _ in range(count)]
    await asyncio.gather(*(deployment.start() for deployment in deployments))
    print(json.dumps({"job": ray.get_runtime_context().get_job_id(), "containers": [d.container_id for d in deployments]}), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def _log(message: str) -> None:
    print(f"ray_cluster: {message}", file=sys.stderr, flush=True)


def _alive(pid: int | None) -> bool:
    try:
        return pid is not None and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_for(what: str, ready, seconds: float = STARTUP_SECONDS, every: float = 0.25) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} was not ready within {seconds:g} s")
        time.sleep(every)


def _engine_answers(engine: str) -> bool:
    return subprocess.run(["docker", "-H", engine, "info"], capture_output=True).returncode == 0


def _start_registry() -> int:
    binary = shutil.which("docker-registry") or "/usr/bin/docker-registry"
    if not Path(binary).exists():
        raise RuntimeError("no docker-registry: install it with scripts/ensure-registry.sh (Debian's docker-registry package)")
    directory = ROOT / "registry"
    (directory / "data").mkdir(parents=True, exist_ok=True)
    config = directory / "config.yml"
    config.write_text(
        f"version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {directory / 'data'}\n"
        f"  delete:\n    enabled: true\nhttp:\n  addr: {REGISTRY}\n"
    )
    log = open(directory / "registry.log", "ab")
    process = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=log, start_new_session=True)
    import urllib.request

    def answers() -> bool:
        try:
            return urllib.request.urlopen(f"http://{REGISTRY}/v2/", timeout=2).status == 200
        except OSError:
            return False

    _wait_for("the registry", answers)
    return process.pid


def start_engine(name: str) -> tuple[str, int]:
    """A dockerd of the node's own: socket, data root, exec root, pidfile and bridge under ROOT/name."""
    directory = ROOT / name
    for sub in ("data", "exec", "tmp"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    bridge, address = BRIDGES[name]
    if subprocess.run(["ip", "link", "show", bridge], capture_output=True).returncode != 0:
        subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], check=True)
        subprocess.run(["ip", "addr", "add", address, "dev", bridge], check=True)
    subprocess.run(["ip", "link", "set", bridge, "up"], check=True)
    engine = f"unix://{directory}/docker.sock"
    pidfile = directory / "docker.pid"
    with contextlib.suppress(FileNotFoundError):
        pidfile.unlink()  # a stale one from a killed run stops dockerd from starting
    log = open(directory / "dockerd.log", "ab")
    process = subprocess.Popen(
        ["dockerd", "--host", engine, "--data-root", str(directory / "data"), "--exec-root", str(directory / "exec"),
         "--pidfile", str(pidfile), "--bridge", bridge, "--iptables=false", "--ip-masq=false", "--ip-forward=false",
         "--label", f"uni-agent-gym.test-node={name}"],
        stdout=log, stderr=log, start_new_session=True,
    )  # fmt: skip
    _wait_for(f"{name}'s Docker engine", lambda: _engine_answers(engine))
    return engine, process.pid


def _start_ray_node(name: str, arguments: list[str], engine: str | None = None) -> int:
    """`ray start --block` in its own process group; the pid once the node has joined."""
    directory = ROOT / name
    (directory / "tmp").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TMPDIR": str(directory / "tmp"), "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    if engine:
        env["DOCKER_HOST"] = engine
    ip = arguments[arguments.index("--node-ip-address") + 1]
    before = set(_alive_nodes().get(ip, [])) if "--head" not in arguments else set()
    log = open(directory / "ray.log", "ab")
    # No log monitor: it streams the workers' logs to drivers, and every driver here connects with
    # `log_to_driver=False`; Ray starts one per node (three on this one host), and they were the cluster's largest
    # cost during a run (4-5 CPU-s a minute of the 10 its processes took)
    process = subprocess.Popen(
        [str(RAY), "start", "--block", "--num-cpus", "1", "--disable-usage-stats", "--include-log-monitor", "false", *arguments],
        stdout=log, stderr=log, env=env, start_new_session=True, cwd=directory,
    )  # fmt: skip
    try:  # a new node id at `ip` (a node that died there may still be listed alive for a while)
        _wait_for(f"Ray node {name} ({ip})", lambda: set(_alive_nodes().get(ip, [])) - before or process.poll() is not None)
        if process.poll() is not None:
            raise RuntimeError(f"ray start for {name} exited {process.returncode}; see {directory / 'ray.log'}")
    except BaseException:
        terminate(process.pid)
        raise
    return process.pid


def _alive_nodes() -> dict[str, list[str]]:
    """Address -> ids of the nodes the cluster lists alive there (asked in a fresh process: this one stays out of Ray)."""
    script = (
        "import json, ray; ray.init(address=%r, logging_level='ERROR', log_to_driver=False); nodes = {}\n"
        "for n in ray.nodes():\n    n['Alive'] and nodes.setdefault(n['NodeManagerAddress'], []).append(n['NodeID'])\n"
        "print(json.dumps(nodes))" % f"{HEAD_ADDRESS}:{GCS_PORT}"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, "RAY_ADDRESS": ""})
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]  # Ray may print warnings too
    return json.loads(lines[-1]) if done.returncode == 0 and lines else {}


def _read_state() -> Cluster | None:
    try:
        return Cluster(**json.loads((ROOT / "state.json").read_text()))
    except (FileNotFoundError, ValueError, TypeError):
        return None


def running() -> Cluster | None:
    """The cluster recorded under ROOT when all its processes still run."""
    state = _read_state()
    if state is None or not all(state.ours(name) for name in state.pids):
        return None
    return state


@contextlib.contextmanager
def _locked():
    ROOT.mkdir(parents=True, exist_ok=True)
    with open(ROOT / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def start() -> tuple[Cluster, bool]:
    """The running cluster, or a new one: (cluster, whether this call started it)."""
    with _locked():
        found = running()
        if found is not None:
            return found, False
        old = _read_state()
        if old is not None:
            _stop(old)  # half of one is left: stop it whole first
        started = time.monotonic()
        cluster = Cluster()
        try:
            cluster.record("registry", _start_registry())
            for name in WORKERS:
                cluster.engines[name], pid = start_engine(name)
                cluster.record(f"dockerd-{name}", pid)
            cluster.record("ray-head", _start_ray_node("head", ["--head", "--include-dashboard", "false", "--node-ip-address", HEAD_ADDRESS, "--port", str(GCS_PORT), "--resources", "{}"]))
            for name, ip in WORKERS.items():
                cluster.start_node(name, ip, {RESOURCE: SLOTS}, cluster.engines[name])
        except BaseException:
            _stop(cluster)
            raise
        (ROOT / "state.json").write_text(json.dumps(asdict(cluster)))
        _log(f"up in {time.monotonic() - started:.1f} s: head {cluster.address}, workers {', '.join(WORKERS.values())}, registry {REGISTRY}")
        return cluster, True


def terminate(pid: int) -> None:
    """SIGTERM `pid` and every process under it (a raylet's workers sit in sessions of their own), then
    SIGKILL what is left after 10 s (`ray start --block` takes its time over SIGTERM)."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    _, alive = psutil.wait_procs(processes, timeout=10)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=5)


def _stop(cluster: Cluster) -> None:
    """Ray nodes first (workers, then the head), then the engines and the registry; each by its pid, where that is
    still the process the cluster started."""
    order = sorted(cluster.pids, key=lambda name: (not name.startswith("ray-"), name == "ray-head"))
    for name in order:
        if cluster.ours(name):
            terminate(cluster.pids[name])
    with contextlib.suppress(FileNotFoundError):
        (ROOT / "state.json").unlink()
    if subprocess.run(["ip", "link", "show", "docker0"], capture_output=True).returncode != 0:
        _log("the main engine's docker0 bridge is gone after stopping the cluster; scripts/ensure-docker.sh restarts the engine")


def stop() -> None:
    with _locked():
        state = _read_state()
        if state is not None:
            _stop(state)
            _log("stopped")


def kill_raylet(pid: int) -> int:
    """SIGKILL the raylet under a node's `ray start --block` (pid): the node dies as a crashed machine would."""
    for child in psutil.Process(pid).children(recursive=True):
        if child.name() == "raylet":
            child.kill()
            return child.pid
    raise RuntimeError(f"no raylet under pid {pid}")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "status"
    if command == "start":
        print(json.dumps(asdict(start()[0])))
    elif command == "stop":
        stop()
    elif command == "status":
        state = running()
        print(json.dumps(asdict(state)) if state else "not running")
    else:
        sys.exit(f"usage: python -m tests.ray_cluster start | stop | status (got {command!r})")
