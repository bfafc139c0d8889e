"""A small black-box harness for the GatewayAgentLoop tests, run as its own process: an OpenAI-SDK loop
with one bash tool against $OPENAI_BASE_URL, running the model's commands in $UNI_AGENT_GYM_REPO_DIR
(on the host for a local deployment, or in the sandbox's shell with `where: sandbox`).

    python tests/gateway_harness.py react     ask, run the call, send its output, until a turn calls no tool
    python tests/gateway_harness.py compact   the same, with the history compacted after two turns
    python tests/gateway_harness.py fail      exit 3 at once
    python tests/gateway_harness.py hang      never finish
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from openai import OpenAI

BASH = {"type": "function", "function": {"name": "bash", "description": "Run a bash command in the repository",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}  # fmt: skip


def main(mode: str) -> None:
    if mode == "fail":
        print("the harness broke", flush=True)
        sys.exit(3)
    if mode == "hang":
        time.sleep(3600)
    client = OpenAI(max_retries=0)  # OPENAI_BASE_URL and OPENAI_API_KEY come from the gateway loop
    with open(os.environ["UNI_AGENT_GYM_TASK_FILE"]) as file:
        task = file.read()
    messages = [{"role": "system", "content": "You fix bugs with bash."}, {"role": "user", "content": task}]
    for turn in range(8):
        if mode == "compact" and turn == 2:
            messages = [*messages[:2], {"role": "user", "content": "Summary so far: the fix is in; check it and stop."}]
        reply = client.chat.completions.create(model=os.environ["UNI_AGENT_GYM_MODEL"], messages=messages, tools=[BASH])
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            command = json.loads(call.function.arguments)["command"]
            done = subprocess.run(command, shell=True, cwd=os.environ["UNI_AGENT_GYM_REPO_DIR"], capture_output=True, text=True)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": done.stdout + done.stderr})


if __name__ == "__main__":
    main(sys.argv[1])
