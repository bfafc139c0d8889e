"""`TokenServer` behind the token-id HTTP APIs the gateway's `HttpTokenBackend` speaks: SGLang's
`/generate` and vLLM's `/v1/completions` (token ids in) plus `/v1/models`. The stand-in for a GPU
inference server over HTTP; the tokens and logprobs are the tiny model's own.

Each answers only what it was asked for, in the format asked, as the real servers do (a request that
leaves a field out gets the server's default): SGLang sends `meta_info.output_token_logprobs` only under
`return_logprob`; vLLM sends `logprobs` only for `logprobs: <int >= 0>`, its tokens as `token_id:N` only
under `return_tokens_as_token_ids` (else their text), and matches `stop` strings in text decoded with
`skip_special_tokens` (default true; SGLang matches them in the raw decode). So a client that stops
asking for what it reads breaks here as it would against a real server."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from tests.token_server import TokenServer


def token_app(server: TokenServer, model: str = "tiny-qwen") -> FastAPI:
    app = FastAPI()
    tokenizer = server.tokenizer

    def finish(out: Any, max_tokens: int) -> str:
        return "length" if len(out.token_ids) >= max_tokens and out.token_ids[-1] != server.stop_id else "stop"

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": model, "object": "model"}]}

    @app.post("/generate")
    async def generate(body: dict):
        params, wanted = body["sampling_params"], bool(body.get("return_logprob", False))
        sampling = {**params, "max_tokens": params["max_new_tokens"], "logprobs": wanted, "skip_special_tokens": False}
        out = await server.generate(body.get("rid", "http"), prompt_ids=body["input_ids"], sampling_params=sampling)
        meta: dict[str, Any] = {"finish_reason": {"type": finish(out, params["max_new_tokens"])}}
        if wanted:
            meta["output_token_logprobs"] = [[lp, token, None] for lp, token in zip(out.log_probs, out.token_ids)]
        text = tokenizer.decode(out.token_ids, skip_special_tokens=params.get("skip_special_tokens", True))
        return JSONResponse({"text": text, "output_ids": out.token_ids, "meta_info": meta})

    @app.post("/v1/completions")
    async def completions(body: dict):
        if body.get("model") != model:
            return JSONResponse({"error": {"message": f"model {body.get('model')!r} does not exist"}}, status_code=404)
        count = body.get("logprobs")
        if count is not None and (not isinstance(count, int) or count < 0):
            return JSONResponse({"error": {"message": f"logprobs must be a non-negative integer, got {count!r}"}}, status_code=400)
        skip = body.get("skip_special_tokens", True)
        sampling = {**body, "logprobs": count is not None, "skip_special_tokens": skip}
        out = await server.generate("http", prompt_ids=body["prompt"], sampling_params=sampling)
        logprobs = None
        if count is not None:
            as_ids = body.get("return_tokens_as_token_ids", False)
            tokens = [f"token_id:{token}" if as_ids else tokenizer.decode([token]) for token in out.token_ids]
            logprobs = {"tokens": tokens, "token_logprobs": out.log_probs}
        text = tokenizer.decode(out.token_ids, skip_special_tokens=skip)
        choice = {"index": 0, "text": text, "logprobs": logprobs, "finish_reason": finish(out, body["max_tokens"])}
        return JSONResponse({"id": "cmpl", "object": "text_completion", "model": model, "choices": [choice]})

    return app
