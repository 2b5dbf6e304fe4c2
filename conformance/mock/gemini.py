"""Gemini API (`POST /v1beta/models/M:streamGenerateContent?alt=sse`), for Gemini CLI.

Side requests answer without consuming a turn: `:generateContent` (Gemini CLI's routing
classifier and other JSON helpers get `{}`-shaped text), `:countTokens`, `GET models/M`.
"""

import json

from mock.script import Handler, calls_of


class Gemini(Handler):
    def answer_get(self, path):
        return self.send_json(200, {"name": path.split("?")[0].rsplit("/", 1)[-1]})

    def answer(self, path, body):
        if ":countTokens" in path:
            return self.send_json(200, {"totalTokens": 10})
        if ":generateContent" in path:
            text = json.dumps({"reasoning": "mock", "model_choice": "flash"})
            return self.send_json(200, self.chunk({"text": text}))
        if ":streamGenerateContent" not in path:
            return self.send_json(404, {"error": {"message": path}})
        turn = self.script.next_turn() if body.get("tools") else {"text": "ok"}
        parts = [{"functionCall": {"name": n, "args": a}} for n, a in calls_of(turn)]
        if "text" in turn:
            parts.append({"text": turn["text"]})
        self.send_sse([(None, self.chunk(*parts))])

    @staticmethod
    def chunk(*parts):
        return {"candidates": [{"content": {"role": "model", "parts": list(parts)},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20}}
