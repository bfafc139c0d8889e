"""Every subcommand given a bad argument (a file that is missing, a directory, empty, malformed, binary
or of the wrong shape; a bad mirror, output or value) prints one `error:` line that names the argument
and what is wrong, exits non-zero, and shows no traceback. Nothing is faked: each row fails at the
argument checks, before any sandbox, model or image is touched."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from uni_agent_gym.cli import build_parser, main

ROOT = Path(__file__).parent.parent

# kind -> (how to make the bad path, the words the error must have); None: write nothing (missing)
COMMON_KINDS = {
    "missing": (None, "does not exist"),
    "directory": ("mkdir", "is a directory"),
    "empty": ("", "is empty"),
    "binary": (b"\xff\xfe\x00\x01 not text", "is not UTF-8 text"),
}
# family -> (suffix, {kind: (content, expected)}) for the kinds beyond the common ones
FAMILIES = {
    "config": (".yaml", {"malformed": ("deployment: [\n", "is not valid YAML"),
                         "wrong-shape": ("- a\n- b\n", "expects a mapping at the top level, got list")}),
    "settings": (".json", {"malformed": ('{"env": ', "is not valid JSON"),
                           "wrong-shape": ("[1, 2]", "expects a mapping at the top level, got list")}),
    "training": (".toml", {"malformed": ("[[[rollout\n", "is not valid TOML")}),
    "dataset": (".jsonl", {"malformed": ("{not json\n", "not a JSON object"),
                           "wrong-shape": ("[1, 2]\n", "not a JSON object (got list)")}),
    "predictions": (".jsonl", {"malformed": ("{not json\n", "has no line that is a JSON object"),
                               "wrong-shape": ("3\n", "has no line that is a JSON object")}),
    "environments": (".json", {"malformed": ("{not json", "is not valid JSON"),
                               "wrong-shape": ("3", "expects a list of objects with an instance_id")}),
}  # fmt: skip
MIRROR_KINDS = {
    "missing": (lambda tmp: f"uni-agent-gym/toy={tmp / 'nowhere'}", "does not exist"),
    "empty": (lambda tmp: f"uni-agent-gym/toy={_mkdir(tmp / 'empty-mirror')}", "is an empty directory"),
    "not-a-bundle": (lambda tmp: f"uni-agent-gym/toy={_write(tmp / 'mirror.bundle', 'plain text')}", "not a git bundle"),
    "special-file": (lambda tmp: f"uni-agent-gym/toy={_fifo(tmp / 'mirror.fifo')}", "neither a directory nor a file"),
    "no-path": (lambda tmp: "uni-agent-gym/toy", "expects REPO=PATH"),
}
VALUE_KINDS = {
    "output-directory": {"a-file": (lambda tmp: _write(tmp / "taken", "x"), "is a file; expects a directory")},
    "input-directory": {"missing": (lambda tmp: str(tmp / "nowhere"), "does not exist"),
                        "a-file": (lambda tmp: _write(tmp / "taken", "x"), "is a file; expects a directory"),
                        "without-the-files": (lambda tmp: _mkdir(tmp / "empty"), "expects the seed article's config.toml")},
    "output-file": {"a-directory": (lambda tmp: _mkdir(tmp / "taken"), "is a directory; expects a file name")},
    "workers": {"zero": (lambda tmp: "0", "expects a whole number of at least 1")},
    "python": {"unsupported": (lambda tmp: "2.7", "Expects --python one of 3.9, 3.11, 3.13")},
    "debian-mirror": {"not-a-url": (lambda tmp: "deb.debian.org", "expects a Debian mirror URL")},
    "slice": {"selects-nothing": (lambda tmp: "5:2", "The selection (slice '5:2') matches none of the dataset's 1 rows"),
              "malformed": (lambda tmp: "a:b", "Expects a slice like '0:10'")},
    "pattern": {"selects-nothing": (lambda tmp: "^django", "The selection (pattern '^django') matches none of the dataset's 1 rows"),
                "malformed": (lambda tmp: "(", "is not a regular expression")},
    "instance-ids": {"unknown": (lambda tmp: "nope__nope-1", "Unknown instance id(s): nope__nope-1 (not among the dataset's 1 rows)")},
    "prediction-ids": {"unknown": (lambda tmp: "nope__nope-1", "none of the 1 predictions in")},
    "tokenizer": {"missing": (lambda tmp: str(tmp / "nowhere"), "does not exist"),
                  "a-file": (lambda tmp: _write(tmp / "tokenizer.json", "{}"), "is a file; expects a tokenizer directory"),
                  "no-tokenizer": (lambda tmp: _mkdir(tmp / "empty"), "has no tokenizer")},
    "backend-url": {"not-a-url": (lambda tmp: "gpu1:8000", "expects an http(s) URL")},
    "registry": {"a-url": (lambda tmp: "http://127.0.0.1:5000", "expects a registry as HOST:PORT"),
                 "no-port": (lambda tmp: "registry.local", "expects a registry as HOST:PORT")},
    "page-limit": {"zero": (lambda tmp: "0", "expects a whole number of at least 1")},
    "host": {"not-an-address": (lambda tmp: "300.1.1.1", "is not an address of this machine"),
             "not-this-machine": (lambda tmp: "192.0.2.1", "cannot listen on 192.0.2.1")},
    "port": {"out-of-range": (lambda tmp: "70000", "expects a port number from 0 to 65535")},
}  # fmt: skip


def _mkdir(path: Path) -> Path:
    path.mkdir()
    return path


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)  # reading it would block: the check must not open it
    return path


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> dict[str, str]:
    """One good value per argument, so that each row has exactly one bad argument."""
    import asyncio

    from uni_agent_gym import toy

    tmp = tmp_path_factory.mktemp("valid")
    row = asyncio.run(toy.toy_instance(str(tmp / "cache")))
    config = {"deployment": {"type": "local"}, "env": {"cache_dir": str(tmp / "cache")},
              "model": {"base_url": "http://127.0.0.1:9", "max_retries": 0, "timeout": 5}}  # fmt: skip
    return {
        "--config": str(_write(tmp / "config.yaml", json.dumps(config))),
        "--settings": str(ROOT / "configs" / "settings.json"),
        "--training": str(ROOT / "configs" / "config.toml"),
        "--dataset": str(_write(tmp / "rows.jsonl", json.dumps(row) + "\n")),
        "--predictions": str(_write(tmp / "predictions.jsonl", json.dumps({"instance_id": row["instance_id"], "model_patch": ""}) + "\n")),
        "--environments": str(_write(tmp / "environments.json", "[]")),
        "--mirror": f"{toy.REPO_NAME}={toy.REPO}",
        "--output": str(tmp / "out"),
        "--from-seed": str(ROOT / "tests" / "seed_article" / "configs"),
        "--python": "3.11",
        "--backend": "http://127.0.0.1:9",
        "--registry": "127.0.0.1:9",
        "IMAGE": "uni-agent-gym-test/not-pushed:1",
        "--tokenizer": str(ROOT.parent / "shared" / "tokenizers" / "qwen2.5-instruct"),
        "PATH": str(_write(tmp / "record.json", json.dumps({"instance_id": "a", "response_ids": [1], "response_mask": [1]}))),
    }


# subcommand -> ({argument: its good value's key in `valid` (None: a flag)}, {argument under test: family});
# train's --config is the verl TOML, and check-config checks a training run only with --training
GOOD = {name: name for name in ("--config", "--settings", "--training", "--dataset", "--predictions", "--environments", "--mirror", "--output")}
COMMANDS = {
    "demo": ({"--config": "--config"}, {"--config": "config"}),
    "check-config": ({"--config": "--config"}, {"--config": "config"}),
    "check-config --training": ({"--training": "--training", "--settings": "--settings"}, {"--training": "training", "--settings": "settings"}),
    "train": ({"--config": "--training", "--settings": "--settings", "--output": "--output", "--dry-run": None},
              {"--config": "training", "--settings": "settings", "--output": "output-directory"}),
    "prepare-data": ({"--dataset": "--dataset", "--output": "--output"},
                     {"--dataset": "dataset", "--output": "output-file", "--slice": "slice", "--instance-ids": "instance-ids"}),
    "init": ({"--from-seed": "--from-seed", "--output": "--output"}, {"--from-seed": "input-directory", "--output": "output-directory"}),
    "ping": ({"--config": "--config"}, {"--config": "config"}),
    "eval": ({name: GOOD[name] for name in ("--config", "--dataset", "--environments", "--mirror", "--output")},
             {"--config": "config", "--dataset": "dataset", "--environments": "environments", "--mirror": "mirror",
              "--output": "output-directory", "--workers": "workers", "--slice": "slice", "--instance-ids": "instance-ids"}),
    "grade": ({name: GOOD[name] for name in ("--config", "--dataset", "--predictions", "--environments", "--mirror", "--output")},
              {"--config": "config", "--dataset": "dataset", "--predictions": "predictions", "--environments": "environments",
               "--mirror": "mirror", "--output": "output-directory", "--workers": "workers", "--instance-ids": "prediction-ids"}),
    "images build": ({name: GOOD[name] for name in ("--config", "--dataset", "--environments", "--mirror")},
                     {"--config": "config", "--dataset": "dataset", "--environments": "environments", "--mirror": "mirror",
                      "--pattern": "pattern", "--slice": "slice", "--instance-ids": "instance-ids"}),
    "images bootstrap-base": ({"--python": "--python"}, {"--python": "python", "--mirror": "debian-mirror"}),
    "datasets": ({name: GOOD[name] for name in ("--config", "--dataset", "--environments", "--mirror")},
                 {"--config": "config", "--dataset": "dataset", "--environments": "environments", "--mirror": "mirror"}),
    "probe": ({"--tokenizer": "--tokenizer", "--config": "--config"}, {"--tokenizer": "tokenizer", "--config": "config"}),
    "gateway serve": ({"--backend": "--backend", "--tokenizer": "--tokenizer", "--output": "--output"},
                      {"--tokenizer": "tokenizer", "--output": "output-file", "--backend": "backend-url"}),
    "images push": ({"--registry": "--registry", "IMAGE": "IMAGE"}, {"--registry": "registry"}),
    "view": ({"PATH": "PATH", "--tokenizer": "--tokenizer", "--output": "--output"},
             {"--tokenizer": "tokenizer", "--output": "output-file", "--max-page-mb": "page-limit"}),
    "view --serve": ({"PATH": "PATH", "--serve": None}, {"--host": "host", "--port": "port"}),
}  # fmt: skip


def _rows():
    for command, (_, tested) in COMMANDS.items():
        for name, family in tested.items():
            if family in FAMILIES:
                suffix, extra = FAMILIES[family]
                kinds = {**COMMON_KINDS, **extra}
                for kind, (content, expected) in kinds.items():
                    yield pytest.param(command, name, ("file", suffix, content), expected, id=f"{command} {name} {kind}")
            elif family == "mirror":
                for kind, (make, expected) in MIRROR_KINDS.items():
                    yield pytest.param(command, name, ("value", make), expected, id=f"{command} {name} {kind}")
            else:
                for kind, (make, expected) in VALUE_KINDS[family].items():
                    yield pytest.param(command, name, ("value", make), expected, id=f"{command} {name} {kind}")


def _bad_value(tmp_path: Path, how: tuple) -> str:
    if how[0] == "value":
        return str(how[1](tmp_path))
    _, suffix, content = how
    path = tmp_path / f"bad{suffix}"
    if content == "mkdir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    return str(path)


def _argv(command: str, given: dict[str, str | None], valid: dict[str, str], bad_name: str, bad_value: str) -> list[str]:
    argv = [word for word in command.split() if not word.startswith("--")]
    for name, key in given.items():
        if name != bad_name:
            argv += [name] if key is None else [valid[key]] if not name.startswith("-") else [name, valid[key]]  # a positional: its value only
    return [*argv, bad_name, bad_value]


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors (a value its type refused)
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("command, name, how, expected", list(_rows()))
def test_a_bad_argument_is_one_error_line_naming_it(command, name, how, expected, valid, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # a narrow terminal must not wrap the error line
    given, _ = COMMANDS[command]
    code, output = run_cli(_argv(command, given, valid, name, _bad_value(tmp_path, how)), capsys)
    errors = [line for line in output.splitlines() if "error:" in line]
    assert code not in (0, None) and "Traceback" not in output, output
    assert len(errors) == 1, output
    assert name in errors[0] and expected in errors[0], errors[0]


def test_cleanup_without_a_docker_engine_is_one_error_line(capsys, monkeypatch, tmp_path):
    from uni_agent_gym.deployments.docker import docker_client

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    docker_client.cache_clear()  # the process's client may already talk to a real engine (which cleanup would empty)
    try:
        code, output = run_cli(["cleanup"], capsys)
    finally:
        monkeypatch.undo()
        docker_client.cache_clear()
    assert code == 1 and "Traceback" not in output
    assert [line for line in output.splitlines() if "error:" in line] == [output.strip()] and "Cannot reach a Docker engine" in output


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                nested = _subcommands(sub, f"{prefix}{name} ")
                found.update(nested or {f"{prefix}{name}": sub})
    return found


FILE_ARGUMENTS = {"--config", "--settings", "--training", "--dataset", "--predictions", "--environments", "--mirror", "--output", "--tokenizer"}


def test_the_table_covers_every_subcommand_and_each_of_its_file_arguments():
    """A new subcommand, or a new file argument of one, must get its rows above."""
    subcommands = _subcommands(build_parser())
    covered = {command.split(" --")[0] for command in COMMANDS} | {"cleanup"}
    assert covered == set(subcommands)
    for name, parser in subcommands.items():
        options = {option for action in parser._actions for option in action.option_strings} & FILE_ARGUMENTS
        tested = {option for command, (_, rows) in COMMANDS.items() if command.split(" --")[0] == name for option in rows}
        assert options <= tested, f"{name}: no rows for {sorted(options - tested)}"


def test_the_real_process_exits_non_zero_and_verbose_adds_the_traceback(tmp_path):
    missing = str(tmp_path / "absent.jsonl")
    command = [sys.executable, "-m", "uni_agent_gym.cli", "grade", "--dataset", missing, "--predictions", missing]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert done.stdout.strip() == f"error: --dataset: Dataset file {missing} does not exist"
    verbose = subprocess.run([*command[:3], "--verbose", *command[3:]], capture_output=True, text=True, timeout=300)
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr and "--dataset" in verbose.stdout
