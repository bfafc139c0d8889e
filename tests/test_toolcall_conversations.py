"""One tool-call format per conversation, outside verl: the env parses `step(text)` in the format of
`model.tokenizer`'s chat template (or `model.tool_format`), and the eval agent prompts with that format.
The toy task runs in the local sandbox; the model endpoint is the scripted one (the only fake)."""

from __future__ import annotations

from pathlib import Path

from transformers import AutoTokenizer

from tests.scripted_endpoint import ScriptedEndpoint
from uni_agent_gym import toy
from uni_agent_gym.agent.model import ChatModel
from uni_agent_gym.agent.react import run_episode
from uni_agent_gym.config import AgentConfig, GymConfig
from uni_agent_gym.datasets import normalise
from uni_agent_gym.envs import AsyncSWEEnv
from uni_agent_gym.toolcalls import ToolCall, call_text

LLAMA = Path(__file__).resolve().parents[2] / "shared" / "tokenizers" / "llama-3.2-instruct"


def local_config(repo_dir: Path, **model) -> GymConfig:
    return GymConfig.model_validate(
        {"deployment": {"type": "local", "workdir": str(repo_dir)}, "env": {"repo_dir": str(repo_dir)}, "model": model}
    )


async def test_the_env_reads_calls_in_the_format_of_the_models_template(tmp_path):
    env = AsyncSWEEnv(local_config(tmp_path / "testbed", tokenizer=str(LLAMA)))
    assert env.tool_format.name == "llama3-json"
    try:
        await env.reset()
        observation, _, _, _, info = await env.step('{"name": "execute_bash", "parameters": {"command": "echo hi"}}')
        assert (observation, info["error"], info["tool"]) == ("hi\n", None, "execute_bash")
        observation, _, _, _, info = await env.step('<tool_call>\n{"name": "execute_bash", "arguments": {"command": "ls"}}\n</tool_call>')
        assert info["error"] == "format_error"
        assert observation.endswith('A well-formed call looks like:\n{"name": "execute_bash", "parameters": {"command": "ls"}}')
    finally:
        await env.close()


async def test_a_named_format_overrides_the_lenient_default(tmp_path):
    env = AsyncSWEEnv(local_config(tmp_path / "testbed", tool_format="hermes-xml"))
    try:
        await env.reset()
        observation, _, _, _, info = await env.step("<tool_call>\n<function=execute_bash>\n<parameter=command>\necho hi\n</parameter>\n</function>\n</tool_call>")
        assert (observation, info["error"]) == ("hi\n", None)
        observation, _, _, _, info = await env.step('{"name": "execute_bash", "arguments": {"command": "ls"}}')  # lenient would run it
        assert info["error"] == "format_error" and observation.startswith("Invalid tool call: No tool call found.")
    finally:
        await env.close()


async def test_the_eval_agent_prompts_and_parses_in_the_templates_format(tmp_path):
    """Text tool calls (no native tools) for a Llama model: the system prompt shows Llama's JSON, the model
    answers as its template writes calls, and the toy task is solved without a format error."""
    repo_dir = tmp_path / "testbed"
    llama = AutoTokenizer.from_pretrained(LLAMA)
    script = [{"text": call_text(llama, ToolCall(**call))} for call in toy.scripted_solution(str(repo_dir))]
    with ScriptedEndpoint({"stats.mean": script}) as endpoint:
        config = local_config(repo_dir, base_url=endpoint.base_url, native_tools="off", tokenizer=str(LLAMA))
        model, env = ChatModel(config.model), AsyncSWEEnv(config)
        try:
            instance = normalise(await toy.toy_instance(env.config.env.cache_dir))
            trajectory = await run_episode(env, model, instance, AgentConfig())
        finally:
            await env.close()
            await model.close()
    assert trajectory["exit_reason"] == "finished" and trajectory["reward"] == 1.0
    assert [step["error"] for step in trajectory["steps"]] == [None] * 7
    assert 'in exactly this format (this one runs `ls` with execute_bash):\n{"name": "execute_bash", "parameters": {"command": "ls"}}' in (
        trajectory["messages"][0]["content"]
    )
