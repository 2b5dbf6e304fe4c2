"""OpenAI Responses API (`POST /v1/responses`, streamed as SSE), for Codex CLI.

A tool call's input is the function's arguments object; for a freeform (custom) tool such as
Codex's `apply_patch`, give {"tool": "apply_patch", "input": "<patch text>"}.
"""

import json

from mock.script import Handler, calls_of


class Responses(Handler):
    def answer_get(self, path):
        if path.rstrip("/").endswith("/models"):
            return self.send_json(200, {"object": "list", "data": [], "models": []})
        return super().answer_get(path)

    def answer(self, path, body):
        if not path.rstrip("/").endswith("/responses"):
            return self.send_json(404, {"error": {"message": "not found: " + path}})
        turn = self.script.next_turn() if body.get("tools") else {"text": "ok"}
        self.send_sse(self.events(turn))

    def events(self, turn):
        n = self.script.played
        items = []
        for i, (name, args) in enumerate(calls_of(turn)):
            call = f"call_{n}_{i}"
            if isinstance(args, str):
                items.append({"type": "custom_tool_call", "id": f"ctc_{n}_{i}", "call_id": call,
                              "name": name, "input": args, "status": "completed"})
            else:
                items.append({"type": "function_call", "id": f"fc_{n}_{i}", "call_id": call,
                              "name": name, "arguments": json.dumps(args), "status": "completed"})
        if "text" in turn:
            items.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]})
        rid = f"resp_{n}"
        out = [("response.created", {"type": "response.created", "response": {"id": rid, "status": "in_progress", "output": []}})]
        for i, item in enumerate(items):
            out.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": item}))
            if item["type"] == "message":
                out.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                           "output_index": i, "content_index": 0, "delta": turn["text"]}))
            out.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": item}))
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 20}
        out.append(("response.completed", {"type": "response.completed",
                                           "response": {"id": rid, "status": "completed", "output": items, "usage": usage}}))
        return out
