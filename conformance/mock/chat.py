"""OpenAI chat completions (`POST /v1/chat/completions`, streamed as SSE `chat.completion.chunk`
events ending in `[DONE]`), for GitHub Copilot CLI in its offline bring-your-own-model mode.

A turn's tool calls go out as `tool_calls` deltas (the arguments as one JSON string); a request
that offers no tools (a title, a summary) gets short text and does not consume a turn.
"""

import json
import time

from mock.script import Handler, calls_of


class Chat(Handler):
    def answer_get(self, path):
        if path.rstrip("/").endswith("/models"):
            return self.send_json(200, {"object": "list", "data": [{"id": "gpt-4.1", "object": "model"}]})
        return super().answer_get(path)

    def answer(self, path, body):
        if not path.rstrip("/").endswith("/chat/completions"):
            return self.send_json(404, {"error": {"message": "not found: " + path}})
        turn = self.script.next_turn() if body.get("tools") else {"text": "ok"}
        n = self.script.played
        if not body.get("stream"):
            return self.send_json(200, self.completion(body, turn, n))
        self.send_sse([(None, c) for c in self.chunks(body, turn, n)] + [(None, "[DONE]")])

    @staticmethod
    def tool_calls(turn, n):
        return [{"id": f"call_{n}_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(calls_of(turn))]

    def completion(self, body, turn, n):
        msg = {"role": "assistant", "content": turn.get("text")}
        calls = self.tool_calls(turn, n)
        if calls:
            msg["tool_calls"] = calls
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "mock"),
                "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}

    def chunks(self, body, turn, n):
        head = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", "mock")}
        chunk = lambda delta, finish=None: dict(head, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
        out = [chunk({"role": "assistant", "content": ""})]
        if "text" in turn:
            out.append(chunk({"content": turn["text"]}))
        calls = self.tool_calls(turn, n)
        for i, call in enumerate(calls):
            out.append(chunk({"tool_calls": [dict(call, index=i)]}))
        last = chunk({}, "tool_calls" if calls else "stop")
        last["usage"] = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        out.append(last)
        return out
