"""Anthropic Messages API (`POST /v1/messages`, streamed as SSE), for Claude Code."""

import json

from mock.script import Handler, calls_of


class Anthropic(Handler):
    def answer(self, path, body):
        if not path.startswith("/v1/messages"):
            return self.send_json(404, {"type": "error", "error": {"message": path}})
        if "count_tokens" in path:
            return self.send_json(200, {"input_tokens": 100})
        turn = self.script.next_turn() if body.get("tools") else {"text": "ok"}
        if not body.get("stream"):
            return self.send_json(200, self.message(body, turn))
        self.send_sse(self.events(body, turn))

    def message(self, body, turn):
        content = [{"type": "text", "text": turn.get("text", "")}] if "text" in turn else []
        for i, (name, args) in enumerate(calls_of(turn)):
            content.append({"type": "tool_use", "id": f"toolu_{i}_{id(turn)}", "name": name, "input": args})
        return {
            "id": "msg_mock", "type": "message", "role": "assistant", "model": body.get("model", "mock"),
            "content": content, "stop_reason": "tool_use" if calls_of(turn) else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 10},
        }

    def events(self, body, turn):
        msg = self.message(body, turn)
        head = dict(msg, content=[], stop_reason=None)
        out = [("message_start", {"type": "message_start", "message": head})]
        for i, block in enumerate(msg["content"]):
            if block["type"] == "text":
                start, delta = dict(block, text=""), {"type": "text_delta", "text": block["text"]}
            else:
                start = dict(block, input={})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            out.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
            out.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
            out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        out.append(("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                                      "usage": {"output_tokens": 10}}))
        out.append(("message_stop", {"type": "message_stop"}))
        return out
