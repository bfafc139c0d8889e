"""Every subcommand given a bad argument (a file that is missing, a directory, empty, malformed, binary
or of the wrong shape; a bad mirror, output or value) prints one `error:` line that names the argument
and what is wrong, exits non-zero, and shows no traceback. Nothing is faked: each row fails at the
argument checks, before any sandbox, model or image is touched."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
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
    "predictions": (".jsonl", {"malformed": ("{not json\n", "holds no prediction (expects JSON objects with instance_id and model_patch, one per line); <line 1>: not JSON"),
                               "wrong-shape": ("3\n", "holds no prediction (expects JSON objects with instance_id and model_patch, one per line); <line 1>: not a JSON object (int)"),
                               "a-dataset": ('{"instance_id": "a__b-1", "patch": ""}\n', "; a__b-1: no model_patch (its keys: instance_id, patch)")}),
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
    "parquet-file": {"a-directory": (lambda tmp: _mkdir(tmp / "taken"), "is a directory; expects a file name"),
                     "not-parquet": (lambda tmp: str(tmp / "rows.jsonl"), "is not a .parquet name; prepare-data writes parquet")},
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
        "--settings": str(ROOT / "uni_agent_gym" / "configs" / "settings.json"),
        "--training": str(ROOT / "uni_agent_gym" / "configs" / "config.toml"),
        "--dataset": str(_write(tmp / "rows.jsonl", json.dumps(row) + "\n")),
        "--predictions": str(_write(tmp / "predictions.jsonl", json.dumps({"instance_id": row["instance_id"], "model_patch": ""}) + "\n")),
        "--environments": str(_write(tmp / "environments.json", "[]")),
        "--mirror": f"{toy.REPO_NAME}={toy.REPO}",
        "--output": str(tmp / "out"),
        "--parquet": str(tmp / "rows.parquet"),
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
    "prepare-data": ({"--dataset": "--dataset", "--output": "--parquet"},
                     {"--dataset": "dataset", "--output": "parquet-file", "--slice": "slice", "--instance-ids": "instance-ids"}),
    "init": ({"--from-seed": "--from-seed", "--output": "--output"}, {"--from-seed": "input-directory", "--output": "output-directory"}),
    "ping": ({"--config": "--config"}, {"--config": "config"}),
    "eval": ({name: GOOD[name] for name in ("--config", "--dataset", "--environments", "--mirror", "--output")},
             {"--config": "config", "--dataset": "dataset", "--environments": "environments", "--mirror": "mirror",
              "--output": "output-directory", "--workers": "workers", "--slice": "slice", "--instance-ids": "instance-ids"}),
    "grade": ({name: GOOD[name] for name in ("--config", "--dataset", "--predictions", "--environments", "--mirror", "--output")},
              {"--config": "config", "--dataset": "dataset", "--predictions": "predictions", "--environments": "environments",
               "--mirror": "mirror", "--output": "output-directory", "--workers": "workers", "--instance-ids": "prediction-ids"}),
    "validate": ({name: GOOD[name] for name in ("--config", "--dataset", "--environments", "--mirror", "--output")},
                 {"--config": "config", "--dataset": "dataset", "--environments": "environments", "--mirror": "mirror",
                  "--output": "output-directory", "--workers": "workers", "--instance-ids": "instance-ids"}),
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


# What a first trial of the gym ran into (issue 43, item 5): each a single `error:` line that says what is wrong
# and what to do, no traceback. id -> (argv from (tmp_path, the good values, a web server's URL), the words of the
# error line). Faked: nothing; the web server is http.server's own (it answers a POST with 501).
def _typo_agent_name(tmp: Path, valid: dict[str, str]) -> list[str]:
    data = tmp / "train.parquet"
    assert main(["prepare-data", "--dataset", valid["--dataset"], "--agent-name", "uni_agnet", "--output", str(data)]) == 0
    text = (ROOT / "uni_agent_gym" / "configs" / "config.toml").read_text()
    for old, new in (("../data/swe_train.parquet", data), ("../data/swe_val.parquet", data), ("uni_agent_loop.yaml", ROOT / "uni_agent_gym" / "configs" / "uni_agent_loop.yaml")):
        text = text.replace(f'"{old}"', json.dumps(str(new)))
    return ["check-config", "--training", str(_write(tmp / "config.toml", text))]


def _tokenizer(tmp: Path, template: str | None) -> str:
    """The Qwen2.5 tokenizer with `template` as its chat template, or with none."""
    directory = tmp / "tokenizer"
    shutil.copytree(ROOT.parent / "shared" / "tokenizers" / "qwen2.5-instruct", directory)
    (directory / "chat_template.jinja").unlink(missing_ok=True)
    config = json.loads((directory / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (directory / "tokenizer_config.json").write_text(json.dumps({**config, **({"chat_template": template} if template else {})}))
    return str(directory)


def _probe(tmp: Path, tokenizer: str) -> list[str]:
    return ["probe", "--tokenizer", tokenizer, "--set", f"env.cache_dir={tmp / 'cache'}"]


MISUSES = {
    "prepare-data agent-name typo, then check-config --training": (
        _typo_agent_name, "go to the agent loop 'uni_agnet' (their agent_name)", "did you mean uni_agent? write them again with "
        "uni-agent-gym prepare-data --agent-name uni_agent"),
    "probe a tokenizer without a chat template": (
        lambda tmp, valid, url: _probe(tmp, _tokenizer(tmp, None)), "the probe failed in boundary: the tokenizer has no chat template",
        "the gym renders every prompt with it"),
    "probe a chat template that does not compile": (
        lambda tmp, valid, url: _probe(tmp, _tokenizer(tmp, "{% for message in messages %}{{ message.content }}")),
        "the probe failed in boundary: the chat template cannot render a conversation (TemplateSyntaxError:", ""),
    "probe a chat template that raises": (
        lambda tmp, valid, url: _probe(tmp, _tokenizer(tmp, "{{ raise_exception('only user turns') }}")),
        "the chat template cannot render a conversation (TemplateError: only user turns)", ""),
    "ping a server that is not OpenAI-compatible": (
        lambda tmp, valid, url: ["ping", "-c", str(_write(tmp / "c.json", json.dumps({"model": {"base_url": url}})))],
        "/v1/chat/completions answered 501 Unsupported method ('POST')", "check model.base_url (an OpenAI-compatible server"),
    "-c given verl's config.toml": (
        lambda tmp, valid, url: ["check-config", "-c", str(ROOT / "uni_agent_gym" / "configs" / "config.toml")], "is verl's training config",
        f"check it with `uni-agent-gym check-config --training {ROOT / 'uni_agent_gym' / 'configs' / 'config.toml'}`"),
    "-c given the agent-loop YAML": (
        lambda tmp, valid, url: ["demo", "-c", str(ROOT / "uni_agent_gym" / "configs" / "uni_agent_loop.yaml")], "is an agent-loop YAML",
        "check the run with `uni-agent-gym check-config --training CONFIG.toml`"),
    "a mistyped deployment type": (
        lambda tmp, valid, url: ["check-config", "-c", str(_write(tmp / "c.yaml", "deployment:\n  type: lcoal\n"))],
        "deployment: Input tag 'lcoal' found using 'type' does not match any of the expected tags", "(did you mean local?)"),
}  # fmt: skip


@pytest.fixture(scope="module")
def web_server():
    """http.server on 127.0.0.1: a web server, not a model server."""
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    quiet = type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda self, *args: None})
    server = ThreadingHTTPServer(("127.0.0.1", 0), quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("case", list(MISUSES))
def test_what_a_first_trial_ran_into_is_one_error_line_saying_what_to_do(case, valid, tmp_path, capsys, monkeypatch, web_server):
    monkeypatch.setenv("COLUMNS", "80")
    make, *expected = MISUSES[case]
    argv = make(tmp_path, valid) if make is _typo_agent_name else make(tmp_path, valid, web_server)
    capsys.readouterr()
    code, output = run_cli(argv, capsys)
    errors = [line for line in output.splitlines() if "error:" in line]
    assert code not in (0, None) and "Traceback" not in output, output
    assert len(errors) == 1 and all(words in errors[0] for words in expected), output


@pytest.mark.parametrize("command, module", [
    (["probe", "--tokenizer", str(ROOT.parent / "shared" / "tokenizers" / "qwen2.5-instruct")], "transformers"),
    (["check-config", "--training", str(ROOT / "uni_agent_gym" / "configs" / "config.toml")], "verl"),
], ids=["probe-without-transformers", "check-config-training-without-verl"])  # fmt: skip
def test_a_command_whose_extra_is_not_installed_names_the_extra(command, module):
    """A fresh process where `module` cannot be imported (as without the extra): one line naming the extra."""
    blocked = f"import sys; sys.modules[{module!r}] = None; from uni_agent_gym.cli import main; sys.exit(main({command!r}))"
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        f"error: {command[0]} needs {module}, which is not installed here: pip install -e '.[verl]' in a checkout (make test "
        "installs every extra), or pip install 'uni-agent-gym[verl]'"), done.stdout


def test_probe_fails_at_once_where_the_hub_does_not_answer(tmp_path):
    """A hub name not in the cache and a hub that does not answer (a closed port here, a machine offline in the
    trial): one error line, with no retry loop (the hub's client retried each file: 22 retries, 53 s)."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HOME": str(tmp_path / "hf")}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run([sys.executable, "-m", "uni_agent_gym.cli", "probe", "--tokenizer", "nobody/no-such-model"],
                          capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert "thrown while requesting" not in done.stderr, "the hub's client retried"
    assert done.stdout.strip().splitlines()[-1] == (
        "error: --tokenizer: model.tokenizer: cannot load a tokenizer from 'nobody/no-such-model': it is not in the local Hugging Face "
        f"cache, and the hub at http://127.0.0.1:{port} does not answer ([Errno 111] Connection refused): give a tokenizer directory, "
        "or run where the hub answers")
