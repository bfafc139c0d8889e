"""Shared fixtures: a deployment of each type for the contract suite, the Docker images the tests
need (each built once per machine, whichever test asks first), and the per-test container check.

A test that needs something this machine may lack (a Docker engine, ../shared, a host Python, a package) says
so with `require(...)` or the `needs` marker: it skips where that is missing, except where the whole suite is
asked for (CI=true, and `make test`, which sets UNI_AGENT_GYM_TESTS=all), where the missing thing is a failure
that names it.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import secrets
import shutil

import pytest

from uni_agent_gym.deployments import make_deployment

IN_CI = os.environ.get("CI") == "true"
# `make test-fast`: the edit-test loop's tier. No Docker, no Ray cluster, no image or venv build, no browser, no slow
# test (`slow`: whole episodes, verl's trainer, templates walked at length): those are left out at collection where
# their markers, fixtures or parameters say so, else skipped when they ask for an engine.
FAST = os.environ.get("UNI_AGENT_GYM_TESTS") == "fast"
# `make test` and CI: the whole suite, so a test whose needs are missing fails (naming them) instead of skipping.
WHOLE = IN_CI or os.environ.get("UNI_AGENT_GYM_TESTS") == "all"
NOT_FAST = {"docker_image", "fixture_images", "ray_cluster", "extra_node", "capture_image", "leaky_image", "browser", "karma_runner"}
# The Hugging Face hub is unreachable on these machines; offline mode fails at once instead of
# retrying for ~25 s. Set before anything imports datasets / huggingface_hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
DEPLOYMENT_TYPES = ["local", "docker", "modal", "ray"]
# The toy repositories the tests grade hold tests of their own (tests/weak_toy_repo/test_money.py): the suite does not run them
collect_ignore_glob = ["*_repo/*"]


@functools.cache
def docker_engine_reachable() -> bool:
    if FAST:
        return False
    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.errors import DeploymentError

    try:
        docker_client()
        return True
    except DeploymentError:
        return False


def require(available: bool, what: str) -> None:
    """Skip the test where `what` is missing, but fail it where the whole suite was asked for (`WHOLE`): a
    green `make test` or CI run has run every test."""
    if available:
        return
    if WHOLE:
        pytest.fail(f"{what} is missing, and this run is the whole suite (CI=true or UNI_AGENT_GYM_TESTS=all): "
                    "install it, or (outside CI) run with UNI_AGENT_GYM_TESTS=available to skip the tests that need it")  # fmt: skip
    pytest.skip(f"{what} is missing")


def pytest_configure(config):
    config.addinivalue_line("markers", "needs(available, what): require(available, what) before the test (skip, or fail in the whole suite)")


def pytest_runtest_setup(item):
    for mark in item.iter_markers("needs"):
        require(*mark.args)


def require_docker() -> None:
    if docker_engine_reachable():
        return
    if FAST:
        pytest.skip("make test-fast runs no Docker test (make test does)")
    require(False, "a Docker engine (scripts/ensure-docker.sh starts one)")


@pytest.fixture(scope="session")
def docker_image() -> str:
    """The Python 3.11 base image, built offline with debootstrap on first use (about a minute)."""
    require_docker()
    from uni_agent_gym.workspaces.base_images import bootstrap_base

    return bootstrap_base("3.11", log=lambda message: None)


@pytest.fixture(scope="session")
def fixture_images(docker_image) -> dict[str, str]:
    """The instance image of every offline fixture (../shared/swebench), built where missing, two at a time."""
    from tests import fixture_sources

    return run_to_completion(fixture_sources.ensure_images(list(fixture_sources.derived_rows().values()), workers=2))


def run_to_completion(coroutine):
    """`asyncio.run(coroutine)`, also where an event loop already runs here (a fixture an async test asks
    for with `request.getfixturevalue`): then in a thread of its own, this loop waiting."""
    import asyncio
    import concurrent.futures

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


# `make test` runs the suite in parallel workers (pytest-xdist). A test file goes to one worker whole, so its
# module fixtures are made once, and the longest groups start first, so that no worker is left with one at the
# end. The two files that play and grade fixture episodes (test_grade: all 19; the attack suite: pytest-7168) are
# grouped by deployment instead: their local tests one after the other on one worker (local episodes of one
# instance take turns in its checkout, so side by side they would wait on each other), their docker tests on another. (xdist's own `loadgroup` cannot do this under pytest 9: it renames items through an attribute pytest 9
# no longer reads.)
FIXTURE_GRADINGS = ("test_grade.py", "test_reward_attacks.py")
LONGEST_FIRST = ["languages on ray", "languages on ray, redis", "languages on docker, redis", "fixture gradings on local", "fixture gradings on docker", "languages on docker",
                 "test_language_attacks.py", "language attacks on java", "fixture gradings on ray",
                 "test_rollout_cache.py", "test_verl_agent_loop.py", "test_deployment_contract.py", "test_wheel.py", "test_families.py"]  # fmt: skip


def worker_group(nodeid: str) -> str:
    """The group a test runs in: its file's, or for the fixture gradings, its deployment's."""
    path, _, test = nodeid.partition("::")
    if path.rsplit("/", 1)[-1] == "test_languages_grade.py":  # minutes each: ray, redis's builds and the rest apart
        deployment = "ray" if "-ray]" in test else "docker"
        return f"languages on {deployment}, redis" if "[redis__" in test else f"languages on {deployment}"
    if path.rsplit("/", 1)[-1] == "test_language_attacks.py" and "java" in test:  # four minutes of Maven: beside C's and Go's
        return "language attacks on java"
    if path.rsplit("/", 1)[-1] in FIXTURE_GRADINGS:
        if re.search(r"(^|[\[_ -])ray($|[\[\]_ -])", test):
            return "fixture gradings on ray"
        return "fixture gradings on local" if "local" in test else "fixture gradings on docker"
    return path


@pytest.hookimpl(optionalhook=True)  # an xdist hook: without pytest-xdist it is never called
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkerGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByWorkerGroup(config, log)


def left_out_of_fast(item) -> bool:
    """Whether `make test-fast` leaves a test out: slow, or it runs sandboxes on Docker or the Ray cluster or a
    browser (by its fixtures, or a docker/ray parameter)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return bool(item.get_closest_marker("slow") or NOT_FAST & set(getattr(item, "fixturenames", ()))) or any(
        value in ("docker", "ray") or (isinstance(value, dict) and value.get("type") in ("docker", "ray")) for value in params.values()
    )


def pytest_collection_modifyitems(config, items):
    """The longest groups first (xdist hands groups out in collection order; `--no-loadscope-reorder`); under
    `make test-fast`, no slow test and none that needs an engine."""
    if FAST:
        left_out = [item for item in items if left_out_of_fast(item)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            gone = {id(item) for item in left_out}
            items[:] = [item for item in items if id(item) not in gone]
    rank = {group: position for position, group in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(worker_group(item.nodeid).rsplit("/", 1)[-1], len(rank)))  # stable


SESSION_RUN_ID = f"pytest-{os.getpid()}-{secrets.token_hex(2)}"
_test_numbers = itertools.count(1)


@functools.cache
def _engine_client(engine: str):
    import docker

    return docker.DockerClient(base_url=engine, timeout=120)


def _engines() -> list:
    """This machine's Docker engine, and the worker nodes' engines of the test Ray cluster while it runs."""
    from tests import ray_cluster
    from uni_agent_gym.deployments.docker import docker_client

    cluster = ray_cluster.running()
    return [docker_client(), *(_engine_client(engine) for engine in (cluster.engines.values() if cluster else []))]


def labelled_containers() -> list[dict]:
    """Every container labelled by uni-agent-gym, as each engine lists them (one call each, no inspection),
    with `Engine`: the client of the engine that has it."""
    from uni_agent_gym.deployments.docker import LABEL

    return [
        {**container, "Engine": client}
        for client in _engines()
        for container in client.api.containers(all=True, filters={"label": f"{LABEL}=1"})
    ]


def containers_of(run_id_prefix: str) -> list[dict]:
    """Containers labelled by uni-agent-gym whose run id is `run_id_prefix` or starts with it plus '-'."""
    from uni_agent_gym.deployments.docker import RUN_ID_LABEL

    def run_id(container: dict) -> str:
        return (container.get("Labels") or {}).get(RUN_ID_LABEL) or ""

    return [c for c in labelled_containers() if run_id(c) == run_id_prefix or run_id(c).startswith(run_id_prefix + "-")]


def remove_container(container: dict) -> None:
    """Remove a container `labelled_containers` listed (on its engine), or one this machine's engine made. The
    workers of one run each sweep a killed session's containers as they start, at the same moment: the one that
    finds a container already being removed lets the other finish (the product's `remove_container`)."""
    from uni_agent_gym.deployments.docker import docker_client
    from uni_agent_gym.deployments.docker import remove_container as remove

    remove(container.get("Engine", docker_client()).api, container["Id"])


@pytest.fixture(autouse=True)
def container_run_id(request, monkeypatch) -> str:
    """This test's run id. Every container the test makes, or a process it starts, carries it (through
    `UNI_AGENT_GYM_RUN_ID`; a test that names its own run id starts it with this one). After the test,
    even one that failed or was stopped by its timeout, its containers are removed, and one that was
    still there fails the test by name."""
    run_id = f"{SESSION_RUN_ID}-t{next(_test_numbers)}"
    monkeypatch.setenv("UNI_AGENT_GYM_RUN_ID", run_id)
    yield run_id
    if not docker_engine_reachable():
        return
    left = containers_of(run_id)
    for container in left:
        remove_container(container)
    if left:
        pytest.fail(f"{request.node.nodeid} left {len(left)} container(s) behind: {[c['Names'] for c in left]} (removed now)")


def session_pid_of(container: dict) -> int | None:
    """The process id of the pytest session (or parallel worker) whose test made `container`, if one did."""
    from uni_agent_gym.deployments.docker import RUN_ID_LABEL

    run_id = (container.get("Labels") or {}).get(RUN_ID_LABEL) or ""
    prefix, _, rest = run_id.partition("-")
    pid = rest.split("-", 1)[0]
    return int(pid) if prefix == "pytest" and pid.isdigit() else None


def stale_test_containers() -> list[dict]:
    """Containers of an earlier pytest session on this machine whose process is gone (killed mid-test,
    e.g. by a machine restart): nothing will ever remove them but us."""

    def session_gone(container: dict) -> bool:
        pid = session_pid_of(container)
        return pid is not None and not os.path.exists(f"/proc/{pid}")

    return [c for c in labelled_containers() if session_gone(c)]


def of_another_live_session(container: dict) -> bool:
    """Made by a test of another pytest process still running (a parallel worker): its own checks own it."""
    pid = session_pid_of(container)
    return pid is not None and pid != os.getpid() and os.path.exists(f"/proc/{pid}")


@pytest.fixture(scope="session", autouse=True)
def no_container_left_behind():
    """Before the suite, containers a killed earlier session left are removed (and named); after it, no
    container of this session may remain (under CI=true: none that was not there before the suite, but
    those of a parallel worker still at work)."""
    before: set[str] = set()
    if docker_engine_reachable():
        stale = stale_test_containers()
        for container in stale:
            remove_container(container)
        if stale:
            print(f"\nremoved {len(stale)} container(s) a killed earlier test session left: {[c['Names'] for c in stale]}")
        before = {c["Id"] for c in labelled_containers()}
    yield
    if not docker_engine_reachable():
        return
    if IN_CI:
        left = [c for c in labelled_containers() if c["Id"] not in before and not of_another_live_session(c)]
    else:
        left = containers_of(SESSION_RUN_ID)
    assert not left, f"containers left behind by the tests: {[(c['Names'], c.get('Labels')) for c in left]}"


@pytest.fixture(scope="session")
def ray_cluster(docker_image):
    """The test Ray cluster (`tests/ray_cluster.py`): the running one, else one started now and stopped
    after the session; the base image is pushed to its registry (the nodes pull it when they lack it)."""
    from tests import ray_cluster as harness

    require(shutil.which("dockerd") is not None, "dockerd (to give the Ray nodes engines of their own)")
    cluster, started = harness.start()
    cluster.push(docker_image)
    yield cluster
    if started and not os.environ.get("UNI_AGENT_GYM_TEST_CLUSTER_KEPT"):  # under make test, make stops it after every worker
        harness.stop()


@pytest.fixture
def extra_node(ray_cluster):
    """Starts worker nodes of the test's own (a resource no other test asks for) at 127.0.0.5 and up, each
    on node1's engine; stops them after the test."""
    from tests import ray_cluster as ray_cluster_harness

    started: list[int] = []

    def start(resources: dict[str, float], ip: str = "127.0.0.5") -> int:
        pid = ray_cluster.start_node(f"extra-{ip.rsplit('.', 1)[1]}", ip, resources, ray_cluster.engines["node1"])
        started.append(pid)
        return pid

    yield start
    for pid in started:
        ray_cluster_harness.terminate(pid)


@pytest.fixture
async def deployment_factory(request, monkeypatch):
    """Makes (not starts) deployments of one type; stops every one of them at teardown."""
    made = []

    def factory(deployment_type: str, **options):
        if deployment_type in ("docker", "ray"):
            options.setdefault("image", request.getfixturevalue("docker_image"))
        if deployment_type == "ray":
            options = {**request.getfixturevalue("ray_cluster").deployment(), **options}
        if deployment_type == "modal" and not made_modal_standin:
            from tests import modal_standin

            made_modal_standin.append(modal_standin.install(monkeypatch))
        deployment = make_deployment({"type": deployment_type, **options})
        made.append(deployment)
        return deployment

    made_modal_standin: list = []
    factory.modal_standin = made_modal_standin
    yield factory
    for deployment in made:
        await deployment.stop()


@pytest.fixture(params=DEPLOYMENT_TYPES)
async def deployment(request, deployment_factory):
    """A started deployment of each type (modal through the SDK stand-in)."""
    deployment = deployment_factory(request.param, command_timeout=60)
    await deployment.start()
    yield deployment
    await deployment.stop()
