"""`TokenServer` behind the token-id HTTP APIs the gateway's `HttpTokenBackend` speaks: SGLang's
`/generate` and vLLM's `/v1/completions` (token ids in, `token_id:N` tokens and logprobs out) plus
`/v1/models`. The stand-in for a GPU inference server over HTTP; the tokens and logprobs are the
tiny model's own."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import JSONResponse

from tests.token_server import TokenServer


def token_app(server: TokenServer, model: str = "tiny-qwen") -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": model, "object": "model"}]}

    @app.post("/generate")
    async def generate(body: dict):
        params = body["sampling_params"]
        out = await server.generate(body.get("rid", "http"), prompt_ids=body["input_ids"],
                                    sampling_params={**params, "max_tokens": params["max_new_tokens"]})  # fmt: skip
        finish = {"type": "stop" if out.token_ids and out.token_ids[-1] == server.stop_id else "length"}
        meta = {"output_token_logprobs": [[lp, token, None] for lp, token in zip(out.log_probs, out.token_ids)], "finish_reason": finish}
        return JSONResponse({"text": server.tokenizer.decode(out.token_ids), "output_ids": out.token_ids, "meta_info": meta})

    @app.post("/v1/completions")
    async def completions(body: dict):
        if body.get("model") != model:
            return JSONResponse({"error": {"message": f"model {body.get('model')!r} does not exist"}}, status_code=404)
        out = await server.generate("http", prompt_ids=body["prompt"], sampling_params=body)
        logprobs = {"tokens": [f"token_id:{token}" for token in out.token_ids], "token_logprobs": out.log_probs}
        finish = "stop" if out.token_ids and out.token_ids[-1] == server.stop_id else "length"
        choice = {"index": 0, "text": server.tokenizer.decode(out.token_ids), "logprobs": logprobs, "finish_reason": finish}
        return JSONResponse({"id": "cmpl", "object": "text_completion", "model": model, "choices": [choice]})

    return app
