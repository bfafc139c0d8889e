"""What an instance image records of its task's environment, and the check every sandbox on it passes
(`workspaces/recorded_environment.py`): an image built for another commit or another environment is refused naming
both; a task that gives no environment of its own is graded with the commands its image was built with (the sandbox's
`Episode` carries them: the task is not rewritten)."""

from __future__ import annotations

import pytest

from uni_agent_gym.datasets import Task, normalise
from uni_agent_gym.specs import Commands, build_of_tests, command_of_tests, environment_spec
from uni_agent_gym.workspaces.recorded_environment import (
    BUILD_LABEL, COMMIT_LABEL, DIGEST_LABEL, NAME_LABEL, TEST_LABEL, EnvironmentMismatch, RecordedImage, environment_labels, recorded_image,
)  # fmt: skip

REDIS = normalise({"instance_id": "redis__redis-10764", "repo": "redis/redis", "version": "10764", "language": "c", "base_commit": "a" * 40,
                   "problem_statement": "p", "test_patch": "", "FAIL_TO_PASS": ["x"], "PASS_TO_PASS": []})  # fmt: skip
ENTRY = {"redis__redis-10764": {"instance_id": "redis__redis-10764", "test_cmd_as_run": 'TERM=dumb ./runtest --single unit/type/zset --only "/BZMPOP"'}}


def built_with(environments: dict, instance: Task = REDIS) -> tuple[str, dict[str, str]]:
    """The id and labels of an image that `images build` made of `instance` with `environments`."""
    return "sha256:" + "1" * 64, environment_labels(environment_spec(instance, environments), instance, "/testbed", "redis-image")


def test_a_task_without_an_environment_of_its_own_grades_with_the_commands_its_image_was_built_with():
    """swebench's spec of this version filters its tests with `--only "BZMPOP"`; the image was built with an entry whose
    filter is `/BZMPOP`. Grading with the spec's would run other tests than the build was checked with."""
    found = built_with(ENTRY)
    before = REDIS.to_dict()
    image = recorded_image(REDIS, "redis-image", found, {}, "/testbed")
    commands = Commands(ENTRY["redis__redis-10764"]["test_cmd_as_run"], "make distclean && make")
    assert image == RecordedImage(found[1][DIGEST_LABEL], found[0], commands)
    # what the reward runs: the image's commands, not the spec's the task leaves them to
    assert command_of_tests(REDIS, {}, recorded=image.commands) == commands.test_command != command_of_tests(REDIS, {})
    assert build_of_tests(REDIS, {}, recorded=image.commands) == "make distclean && make"
    assert REDIS.to_dict() == before and REDIS.commands_from == "swebench-spec"  # the task is the loader's, unchanged
    assert recorded_image(REDIS, "redis-image", found, {}, "/testbed") == image  # the grader's sandbox reads the same


def test_a_task_whose_own_environment_differs_from_its_images_is_refused_naming_both_digests():
    found = built_with(ENTRY)
    mine = environment_labels(environment_spec(REDIS, {}), REDIS, "/testbed", "redis-image")[DIGEST_LABEL]
    other = {"redis__redis-10764": {**ENTRY["redis__redis-10764"], "build_cmd": "make"}}
    wanted = environment_labels(environment_spec(REDIS, other), REDIS, "/testbed", "redis-image")[DIGEST_LABEL]
    with pytest.raises(EnvironmentMismatch) as refused:
        recorded_image(REDIS, "redis-image", found, other, "/testbed")
    message = str(refused.value)
    assert found[1][DIGEST_LABEL] in message and wanted in message and "build 'make' (image: 'make distclean && make')" in message, message
    assert wanted != mine != found[1][DIGEST_LABEL]
    # the same entry: accepted, and the task's own commands run (the image records none for it)
    assert recorded_image(REDIS, "redis-image", found, ENTRY, "/testbed") == RecordedImage(found[1][DIGEST_LABEL], found[0])


def test_an_image_of_another_commit_is_refused_even_for_a_task_without_an_environment():
    found = built_with({}, REDIS.replace(base_commit="b" * 40))
    with pytest.raises(EnvironmentMismatch, match=f"holds the repository at {'b' * 40} \\(environment [0-9a-f]{{16}}\\), the task at {'a' * 40} \\(environment [0-9a-f]{{16}}\\)"):
        recorded_image(REDIS, "redis-image", found, {}, "/testbed")


def test_an_image_that_records_nothing_of_itself_is_not_checked():
    """Official images (pulled) and images built before the labels: nothing says what they hold. Nor an image made FROM
    one built here, under another name (another family's image of the same repository): it inherits the labels."""
    assert recorded_image(REDIS, "swebench/x", ("sha256:2", {}), {}, "/testbed") is None
    assert recorded_image(REDIS, "swebench/x", None, ENTRY, "/testbed") is None
    image_id, inherited = built_with(ENTRY)
    assert recorded_image(REDIS, "uag-derived/other:1", (image_id, inherited), {}, "/testbed") is None
    assert recorded_image(REDIS, "redis-image:latest", (image_id, inherited), {}, "/testbed").environment == inherited[DIGEST_LABEL]  # the same name


def test_the_labels_say_the_commands_and_the_commit():
    labels = built_with(ENTRY)[1]
    assert labels[TEST_LABEL] == ENTRY["redis__redis-10764"]["test_cmd_as_run"] and labels[BUILD_LABEL] == "make distclean && make"
    assert labels[COMMIT_LABEL] == "a" * 40 and len(labels[DIGEST_LABEL]) == 16 and labels[NAME_LABEL] == "redis-image:latest"
