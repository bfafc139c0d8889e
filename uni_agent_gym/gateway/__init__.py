"""An OpenAI/Anthropic-compatible gateway that records every session's token-exact trajectories.

A black-box harness (mini-swe-agent, SWE-agent, a Claude-Code-like CLI) talks to
`/sessions/<id>/v1/...` as to any endpoint. The gateway renders the chat template itself, samples from
a token-in/token-out engine with those exact ids, parses tool calls with the gym's parsers and answers
in the client's format, while each session's requests are stitched into chains: the sampled tokens
(mask 1, the engine's logprobs) are never re-tokenized, and where the client's history stops extending
what was recorded a new chain starts (see `chains`).

    messages.py       the internal message shape and canonical keys
    chains.py         chains and how a request finds one (extend / rollback / new, and why)
    session.py        one session: lock, sample, commit
    backends.py       verl's server manager or vLLM/SGLang token APIs
    toolcalls.py      the one place sampled text is parsed into tool calls
    openai_api.py, anthropic_api.py   wire formats only
    server.py         the FastAPI app and an in-loop uvicorn server
    harness.py        running a harness command against a session (host or sandbox)
    mini_swe_agent.py mini-swe-agent's Docker environment on the gym's container (imported by mini only)
    serve.py          `uni-agent-gym gateway serve`

`uni_agent_gym.verl.gateway_loop.GatewayAgentLoop` runs a harness per verl sample through it.
Importing this package imports nothing heavy.
"""
