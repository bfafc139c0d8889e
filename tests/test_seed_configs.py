"""The seed article's three config files, as printed (`tests/seed_article/configs/`; the agent-loop entry's
class path is ours), are read with the meaning the article gives them: nothing rejected that it explains,
nothing silently dropped, every translation said, and a key that means nothing is an error naming it.

The article's text is not shipped with the project: these files are its three configs as its readers copy
them (the values and keys its issue here quotes: 12 turns, max_model_len 32768, the four tools, a local
deployment with a 300 s timeout, F2P-only SWE-bench rewards, the rollout_cache and logging sections, and the
verl skeleton with n_resp_per_prompt, mode, max_user_turns, max_assistant_turns and clip_ratio).
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
import tomllib
from pathlib import Path

import hydra
import pytest
import yaml
from hydra.errors import InstantiationException
from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
from verl.utils.dataset.rl_dataset import RLHFDataset

from tests.token_server import TokenServer, tiny_model_dir
from tests.test_verl_agent_loop import TOY_SAMPLE, tool_call
from uni_agent_gym.cli import main
from uni_agent_gym.config import load_config
from uni_agent_gym.errors import ConfigError
from uni_agent_gym.verl.agent_loop import UniAgentLoop
from uni_agent_gym.verl.training import check_training, load_training, toml_lines, verl_keys

pytestmark = pytest.mark.slow  # each check composes verl's trainer config: not in make test-fast

SEED = Path(__file__).parent / "seed_article"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return tiny_model_dir(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture
def seed(tmp_path, monkeypatch) -> Path:
    """A copy of the article's files, run from the folder above them as the article does. Its config.toml names
    the agent-loop YAML as `configs/uni_agent_loop.yaml`, from that folder; relative paths in a config.toml are
    taken from the file's own folder, so the copy names the YAML beside it, the line check-config asks for
    (`test_the_articles_agent_loop_path_is_taken_from_the_tomls_folder_with_the_line_to_write`)."""
    shutil.copytree(SEED, tmp_path / "seed")
    monkeypatch.chdir(tmp_path / "seed")
    toml = tmp_path / "seed" / "configs" / "config.toml"
    toml.write_text(toml.read_text().replace('"configs/uni_agent_loop.yaml"', '"uni_agent_loop.yaml"'))
    return tmp_path / "seed" / "configs"


# the lines only the user can write (check-config names each; verl's defaults are its example data and model)
DATA_AND_MODEL = {"data.train_files": "data/swe_train.parquet", "data.val_files": "data/swe_val.parquet",
                  "actor_rollout_ref.model.path": "Qwen/Qwen2.5-Coder-7B-Instruct"}  # fmt: skip


def build_as_verl_does(loop_yaml: Path, server, *, prompt_length=8192, response_length=24576, max_model_len=32768):
    """The entry instantiated the way verl's AgentLoopWorker does: OmegaConf.load of the YAML, then
    `hydra.utils.instantiate` with verl's keywords (its own tool list under `tools`, which replaces the entry's)."""
    entry = next(item for item in OmegaConf.load(loop_yaml) if item.name == "uni_agent")
    config = OmegaConf.create({
        "actor_rollout_ref": {"rollout": {"prompt_length": prompt_length, "response_length": response_length, "max_model_len": max_model_len,
                                          "agent": {"agent_loop_config_path": str(loop_yaml)}}, "model": {}},
        "data": {"apply_chat_template_kwargs": {}},
    })  # fmt: skip
    return hydra.utils.instantiate(
        config=entry, trainer_config=DictConfigWrap(config=config), server_manager=server, tokenizer=server.tokenizer, processor=None,
        hf_model_type=None, dataset_cls=RLHFDataset, data_config=DictConfigWrap(config.data), tools=ToolListWrap([]),
    )  # fmt: skip


def test_the_articles_entry_built_by_hydra_has_its_values(seed, model_dir):
    loop = build_as_verl_does(seed / "uni_agent_loop.yaml", TokenServer(model_dir))
    assert isinstance(loop, UniAgentLoop)
    gym = loop.gym_config
    assert gym.env.max_turns == 12
    assert gym.env.tools == ["execute_bash", "str_replace_editor", "search", "finish"]
    assert gym.deployment.type == "local" and gym.deployment.command_timeout == 300
    assert gym.reward.type == "swebench" and gym.reward.fail_to_pass_only is True
    assert gym.rollout.max_model_len == 32768 and loop.cache_limits["max_model_len"] == 32768


def test_the_entrys_own_tools_are_read_although_verl_passes_its_list_under_that_name(seed, model_dir):
    loop_yaml = seed / "uni_agent_loop.yaml"
    entries = yaml.safe_load(loop_yaml.read_text())
    entries[0]["tools"] = ["execute_bash", "finish"]
    loop_yaml.write_text(yaml.safe_dump(entries))
    assert build_as_verl_does(loop_yaml, TokenServer(model_dir)).gym_config.env.tools == ["execute_bash", "finish"]


async def test_the_loop_honours_the_articles_turns_tools_deployment_and_lengths(seed, model_dir, caplog):
    """An episode under the article's entry and settings: the local sandbox, 12 turns then truncation, the
    gym's response budget, and the timing lines its logging section asks for."""
    entries = yaml.safe_load((seed / "uni_agent_loop.yaml").read_text())
    entries[0]["settings"] = "settings.json"
    (seed / "uni_agent_loop.yaml").write_text(yaml.safe_dump(entries))
    server = TokenServer(model_dir, lambda turn, repo_dir: tool_call({"name": "execute_bash", "arguments": {"command": "pwd"}}))
    loop = build_as_verl_does(seed / "uni_agent_loop.yaml", server, response_length=32768, max_model_len=65536)
    assert loop.cache_limits == {"max_model_len": 32768, "max_prompt_length": 8192, "max_response_length": 24576}
    with caplog.at_level(logging.INFO, logger="uni_agent_gym"):
        output = await loop.run({"temperature": 1.0}, **TOY_SAMPLE)
    trajectory = loop.trajectory
    assert output.extra_fields["traj_exit_reason"] == "max_turns"
    assert len(trajectory.cache.response_mask) <= 24576 and trajectory.env.deployment is None  # released
    assert sum(1 for message in trajectory.messages if message["role"] == "assistant") == 12
    assert [schema["function"]["name"] for schema in trajectory.env.tool_schemas] == ["execute_bash", "str_replace_editor", "search", "finish"]
    tools = [record for record in caplog.records if record.getMessage().startswith("tool execute_bash")]
    queries = [record for record in caplog.records if record.getMessage().startswith("query ")]
    assert len(tools) == 12 and len(queries) == 12


def test_a_misspelt_entry_key_fails_at_construction_naming_it(seed, model_dir):
    loop_yaml = seed / "uni_agent_loop.yaml"
    entries = yaml.safe_load(loop_yaml.read_text())
    entries[0]["max_turn"] = entries[0].pop("max_turns")
    loop_yaml.write_text(yaml.safe_dump(entries))
    with pytest.raises(InstantiationException, match=r"max_turn means nothing to the gym \(did you mean max_turns\?\)") as caught:
        build_as_verl_does(loop_yaml, TokenServer(model_dir))
    assert isinstance(caught.value.__cause__, ConfigError)  # the gym's error, raised at construction, as Hydra reports it
    entries[0]["max_turns"] = entries[0].pop("max_turn")
    entries[0]["reward"]["fail_to_pas_only"] = entries[0]["reward"].pop("fail_to_pass_only")
    loop_yaml.write_text(yaml.safe_dump(entries))
    with pytest.raises(InstantiationException, match=r"reward.fail_to_pas_only: Extra inputs are not permitted \(did you mean reward.fail_to_pass_only\?\)"):
        build_as_verl_does(loop_yaml, TokenServer(model_dir))


def test_the_articles_settings_are_read_in_its_own_names(seed):
    notes: list[str] = []
    config = load_config(seed / "settings.json", translations=notes)
    assert config.rollout.mask_abnormal_exit_traj is True
    assert (config.rollout.max_prompt_length, config.rollout.max_response_length) == (8192, 24576)
    assert config.logging.log_tool_timing and config.logging.log_query_timing
    assert any("rollout_cache.max_prompt_length -> rollout.max_prompt_length" in note for note in notes)
    assert any("enable_boundary_probe = true" in note for note in notes)


@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda s: s["rollout_cache"].update(max_prompt_len=1), r"rollout_cache.max_prompt_len means nothing to the gym \(did you mean max_prompt_length\?\)"),
        (lambda s: s["rollout_cache"].update(enable_boundary_probe=False), r"cannot record a trajectory without the boundary probe"),
        (lambda s: s.update(rollout={"max_prompt_length": 4096}), r"rollout_cache.max_prompt_length and rollout.max_prompt_length are both given and disagree"),
        (lambda s: s["logging"].update(log_tool_timings=True), r"logging.log_tool_timings: Extra inputs are not permitted \(did you mean logging.log_tool_timing\?\)"),
    ],
    ids=["unknown-key", "probe-off", "both-names-disagree", "logging-typo"],
)
def test_a_settings_key_that_means_nothing_or_disagrees_is_an_error(seed, edit, expected):
    settings = json.loads((seed / "settings.json").read_text())
    edit(settings)
    (seed / "settings.json").write_text(json.dumps(settings))
    with pytest.raises(ConfigError, match=expected):
        load_config(seed / "settings.json")


def test_our_own_names_beside_the_articles_agree(seed):
    settings = json.loads((seed / "settings.json").read_text())
    settings["rollout"] = {"max_prompt_length": 8192, "max_tokens_per_turn": 2048}
    (seed / "settings.json").write_text(json.dumps(settings))
    config = load_config(seed / "settings.json")
    assert config.rollout.max_prompt_length == 8192 and config.rollout.max_tokens_per_turn == 2048


def test_the_articles_agent_loop_path_is_taken_from_the_tomls_folder_with_the_line_to_write(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    problems = check_training(load_training(SEED / "configs" / "config.toml")).problems
    expected = (f"rollout.agent.agent_loop_config_path: {SEED / 'configs' / 'configs' / 'uni_agent_loop.yaml'} does not exist (a relative "
                'path is taken from config.toml\'s folder). uni_agent_loop.yaml is beside it: write agent_loop_config_path = "uni_agent_loop.yaml".')  # fmt: skip
    assert expected in problems, problems


def test_check_config_lists_every_problem_of_the_articles_toml_at_once(seed):
    run = load_training(seed / "config.toml", settings=seed / "settings.json")
    check = check_training(run)
    assert any("n_resp_per_prompt = 8 -> actor_rollout_ref.rollout.n" in note for note in check.notes)
    assert run.values["actor_rollout_ref.rollout.n"] == 8
    for said in ("rollout.mode = 'async'", "max_user_turns = 12", "max_assistant_turns = 12", "max_turns -> env.max_turns",
                 "env.deployment -> deployment", "deployment.timeout -> deployment.command_timeout"):  # fmt: skip
        assert any(said in note for note in check.notes), said
    assert any("actor.clip_ratio = 0.0004 is not the range verl clips with" in warning for warning in check.warnings)
    joined = "\n".join(check.problems)
    for problem in ("Missing mandatory value: actor_rollout_ref.rollout.name", "ppo_micro_batch_size_per_gpu",
                    "rollout.max_prompt_length = 8192 exceeds verl's data.max_prompt_length", "data.train_batch_size = 0",
                    "hybrid_engine = false", "total_rollout_steps", "data.train_files is not set", "data.val_files is not set",
                    'actor_rollout_ref.model.path is not set: verl would train its example model (~/models/deepseek-llm-7b-chat). '
                    'Add to [model]: path = "Qwen/Qwen2.5-Coder-7B-Instruct" (the gym settings\' model.model_name)'):  # fmt: skip
        assert problem in joined, problem
    assert check.additions["actor_rollout_ref.rollout.name"] == "vllm"
    assert check.additions["data.max_response_length"] == 24576 and check.additions["actor_rollout_ref.rollout.max_model_len"] == 32768


def test_every_key_verl_lacks_is_named_with_the_nearest_in_one_run(seed):
    (seed / "config.toml").write_text((seed / "config.toml").read_text() + "\n[data]\nmax_prompt_lenght = 8192\ntrain_batchsize = 0\n")
    problems = check_training(load_training(seed / "config.toml")).problems
    assert any("verl has no key data.max_prompt_lenght ([data] max_prompt_lenght): did you mean max_prompt_length?" in p for p in problems)
    assert any("verl has no key data.train_batchsize" in p and "train_batch_size" in p for p in problems)


def test_the_articles_files_plus_the_lines_check_config_prints_pass(seed, capsys):
    """What a reader does: run check-config, add the lines it prints, run it again."""
    arguments = ["check-config", "--training", "configs/config.toml", "--settings", "configs/settings.json"]
    assert main(arguments) != 0
    printed = capsys.readouterr().out
    assert "lines to add to configs/config.toml" in printed
    lines = check_training(load_training(seed / "config.toml", settings=seed / "settings.json")).additions
    original = tomllib.loads((seed / "config.toml").read_text())
    values = verl_keys(original)
    values["actor_rollout_ref.rollout.n"] = values.pop("actor_rollout_ref.rollout.n_resp_per_prompt")  # as the note says
    (seed / "config.toml").write_text(toml_lines({**values, **lines, **DATA_AND_MODEL}) + "\n")
    assert main(arguments) == 0, capsys.readouterr().out


def test_an_entry_with_target_instead_of_underscore_target_is_asked_about(seed, capsys):
    loop_yaml = seed / "uni_agent_loop.yaml"
    loop_yaml.write_text(loop_yaml.read_text().replace("_target_:", "target:"))
    problems = check_training(load_training(seed / "config.toml")).problems
    assert any("says `target: uni_agent_gym.verl.agent_loop.UniAgentLoop`: did you mean `_target_`?" in problem for problem in problems)


def test_init_from_seed_writes_the_set_keeping_every_value_and_names_the_lines_only_the_user_can_write(seed, tmp_path, capsys):
    """The article names no data and no model: init writes everything else and ends naming those lines (verl
    would train on its own examples); with them added the set passes."""
    loop_yaml = seed / "uni_agent_loop.yaml"
    loop_yaml.write_text(loop_yaml.read_text().replace("_target_:", "target:"))  # as the article prints it
    assert main(["init", "--from-seed", str(seed), "--output", "out"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    for key in DATA_AND_MODEL:
        assert f"problem: {key} is not set" in out, key
    assert "error: wrote the set to out, but 3 problem(s) are left (above); fix them there" in out
    assert "note: config.toml: added [rollouter] total_rollout_steps = 2048 (rollout.total_rollout_steps:" in out  # as the file has it
    assert main(["check-config", "--training", "out/config.toml"]) == 1, "not consistent without the data and the model"
    capsys.readouterr()
    written = load_training("out/config.toml")
    Path("out/config.toml").write_text(toml_lines({**verl_keys(tomllib.loads(Path("out/config.toml").read_text())), **DATA_AND_MODEL}))
    assert main(["check-config", "--training", "out/config.toml"]) == 0, capsys.readouterr().out
    assert written.values["actor_rollout_ref.rollout.n"] == 8 and written.values["async_training.require_batches"] == 2
    assert written.values["actor_rollout_ref.actor.clip_ratio"] == 4e-4
    assert written.values["actor_rollout_ref.rollout.multi_turn.max_user_turns"] == 12
    gym = written.gym_config()
    assert (gym.env.max_turns, gym.deployment.type, gym.deployment.command_timeout, gym.reward.fail_to_pass_only) == (12, "local", 300, True)
    assert (gym.rollout.max_prompt_length, gym.rollout.max_model_len, gym.logging.log_query_timing) == (8192, 32768, True)
    assert json.loads(Path("out/settings.json").read_text())["model"]["api_key"] == "${OPENAI_API_KEY:-EMPTY}"  # placeholders stay
    assert main(["init", "--from-seed", str(seed), "--output", "out"]) != 0  # nothing is overwritten unasked
    assert "already has config.toml, uni_agent_loop.yaml, settings.json" in capsys.readouterr().out


def test_the_set_init_writes_works_from_any_directory(seed, tmp_path, monkeypatch, capsys):
    """init ran with a relative --output; the set it wrote names its agent-loop YAML so that it is found from
    anywhere (it named `out/uni_agent_loop.yaml`, found only from where init ran)."""
    main(["init", "--from-seed", str(seed), "--output", "out"])
    written = seed.parent / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = load_training(written / "config.toml")
    assert run.loop_yaml == written / "uni_agent_loop.yaml" and run.loop_entries, run.loop_yaml
    assert run.gym_config().env.max_turns == 12


SHIPPED = Path(__file__).resolve().parents[1] / "uni_agent_gym" / "configs"


def test_init_alone_writes_the_shipped_set_and_it_is_consistent(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    written = tmp_path / "configs"  # where the docs' commands read it
    shipped = sorted(path.relative_to(SHIPPED) for path in SHIPPED.rglob("*") if path.is_file())
    assert shipped and sorted(path.relative_to(written) for path in written.rglob("*") if path.is_file()) == shipped
    assert all((written / name).read_bytes() == (SHIPPED / name).read_bytes() for name in shipped)  # comments and all
    assert f"wrote a consistent set to {written.name}" in out
    assert main(["check-config", "--training", str(written / "config.toml")]) == 0


def test_init_from_the_shipped_configs_copies_the_deployment_its_entry_names(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--from-seed", str(SHIPPED), "--output", "out"]) == 0, capsys.readouterr().out
    assert (tmp_path / "out" / "deployment" / "docker.yaml").read_text() == (SHIPPED / "deployment" / "docker.yaml").read_text()
    assert load_training(tmp_path / "out" / "config.toml").gym_config().deployment.type == "docker"


def test_init_without_the_verl_extra_writes_the_gyms_settings_and_init_again_adds_the_rest(tmp_path, capsys, monkeypatch):
    """A core install: settings.json and the deployments (what eval, ping and check-config read), the training
    configs left out with the extra they need; once it is there, init again adds them (equal files are no clash)."""
    monkeypatch.chdir(tmp_path)
    with monkeypatch.context() as core:
        core.setitem(sys.modules, "verl", None)  # as without the extra: find_spec finds no verl, `import verl` fails
        assert main(["init"]) == 0, capsys.readouterr().out
        out = " ".join(capsys.readouterr().out.split())
        assert "they need the verl extra (verl is not installed here); pip install 'uni-agent-gym[verl]', then uni-agent-gym init again" in out
        assert sorted(str(path.relative_to(tmp_path / "configs")) for path in (tmp_path / "configs").rglob("*")) == [
            "deployment", "deployment/docker.yaml", "deployment/local.yaml", "deployment/modal.yaml", "deployment/ray.yaml", "settings.json"]
        assert main(["check-config", "-c", "configs/settings.json"]) == 0
        assert main(["init", "--from-seed", str(SEED / "configs")]) == 1  # nothing written that cannot be checked
        assert "init needs verl" in capsys.readouterr().out and not (tmp_path / "configs-from-seed").exists()
    assert main(["init"]) == 0, capsys.readouterr().out
    assert "wrote a consistent set to configs" in capsys.readouterr().out
    assert all((tmp_path / "configs" / name).read_bytes() == (SHIPPED / name).read_bytes() for name in ("config.toml", "uni_agent_loop.yaml"))


def test_an_installation_without_its_configs_is_said_so_not_blamed_on_an_argument(tmp_path, capsys, monkeypatch):
    from uni_agent_gym.verl import from_seed

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(from_seed, "SHIPPED", tmp_path / "site-packages" / "uni_agent_gym" / "configs")
    assert main(["init"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "error: this installation of uni-agent-gym has no shipped configs" in out and "--output" not in out, out


def _seed_naming_a_missing_deployment(seed: Path) -> list[str]:
    loop_yaml = seed / "uni_agent_loop.yaml"
    entries = yaml.safe_load(loop_yaml.read_text())
    entries[0]["deployment"] = "deployment/none.yaml"
    loop_yaml.write_text(yaml.safe_dump(entries))
    return ["init", "--from-seed", str(seed), "--output", "out"]


def _shipped_set_written_before_and_edited(seed: Path) -> list[str]:
    assert main(["init", "--output", "out"]) == 0
    with (Path("out") / "config.toml").open("a") as toml:
        toml.write("# my edit\n")
    return ["init", "--output", "out"]


# `init` given what it cannot make a consistent set of: id -> (argv from the seed folder, the error line's words,
# words the error line must not have)
INIT_MISUSES = {
    "the article's files (no data, no model)": (
        lambda seed: ["init", "--from-seed", str(seed), "--output", "out"],
        "wrote the set to out, but 3 problem(s) are left (above); fix them there, then check it", "with the line to add"),
    "an entry naming a deployment file that is not there": (
        _seed_naming_a_missing_deployment, "wrote the set to out, but 4 problem(s) are left (above); fix them there", "with the line to add"),
    "the shipped set over an edited set": (
        _shipped_set_written_before_and_edited,
        "error: --output: out already has config.toml: choose another --output, or --force to replace them", "Traceback"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(INIT_MISUSES))
def test_init_that_cannot_write_a_consistent_set_is_one_error_line(case, seed, capsys):
    make, expected, absent = INIT_MISUSES[case]
    argv = make(seed)
    capsys.readouterr()
    assert main(argv) == 1
    out = capsys.readouterr().out
    errors = [line for line in out.splitlines() if "error:" in line]
    assert len(errors) == 1 and expected in errors[0] and absent not in out, out
