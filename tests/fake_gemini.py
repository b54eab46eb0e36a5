"""A scripted, strict Gemini API server on loopback (generateContent, streamGenerateContent?alt=sse).

Reached through litellm's `gemini/` adapter with `api_base=server.url` and any key, as
`models/{model}:streamGenerateContent?alt=sse` (and `:generateContent`). Replies come from the
same `Reply` scripts as tests/fakellm.py: text parts, then each tool call whole as a
`functionCall` part (arguments an object), `finishReason` and `usageMetadata` last.

Strict as the real API (from ai.google.dev/api/generate-content and the errors it returns,
status 400, body `{"error": {"code": 400, "message", "status": "INVALID_ARGUMENT"}}`):
- `contents` given and each turn's role `user`, `model` (or `function`), its parts non-empty;
- a turn of `functionCall` parts comes after a user turn or a function-response turn, and is
  answered by the very next turn with as many `functionResponse` parts, of the same names; a
  function-response turn comes only right after a function-call turn;
- function names: a letter or `_` first, then letters, digits, `_ . : -`, at most 64;
- parameter schemas use only the fields of Gemini's `Schema` (no `additionalProperties`, `$schema`,
  `$ref`, `$defs`, `const`, ...: "Unknown name ... Cannot find field"), known types, `format` on
  strings only `enum` or `date-time`, `enum` only on strings, `required` names that are properties,
  `properties` non-empty when given for an object.
A request without a key is refused with 403 PERMISSION_DENIED.

Thought signatures (Gemini 3, ai.google.dev/gemini-api/docs/thought-signatures): for a `gemini-3`
model each `functionCall` part of a reply carries a `thoughtSignature`, and a request whose
history holds a function call without one is refused as the API refuses it. The API accepts its
documented stand-in ("skip_thought_signature_validator") at a loss of quality, so this server does
too: `signatures_back` records what each request sent back, for tests to compare with
`signatures_given`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from aiohttp import web

from tests.fakellm import Reply, ScriptedServer

MODEL = "gemini/gemini-2.5-flash"
NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
SCHEMA_FIELDS = {"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
                 "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
                 "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}
TYPES = {"type_unspecified", "string", "number", "integer", "boolean", "array", "object", "null"}
DECLARATION_FIELDS = {"name", "description", "parameters", "parametersJsonSchema", "response",
                      "responseJsonSchema", "behavior"}


class GeminiError(Exception):
    def __init__(self, message: str, status: str = "INVALID_ARGUMENT", code: int = 400) -> None:
        super().__init__(message)
        self.message, self.status, self.code = message, status, code

    def response(self) -> web.Response:
        error = {"code": self.code, "message": self.message, "status": self.status}
        return web.json_response({"error": error}, status=self.code)


MISSING_SIGNATURE = ("Function call is missing a thought_signature in functionCall parts. This is required for "
                     "tools to work correctly, and missing thought_signature may lead to degraded model "
                     "performance. Additional data, function call `default_api:{name}` , position {position}. "
                     "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.")


class FakeGemini(ScriptedServer):
    model = MODEL

    def __init__(self, *replies: Reply, **kwargs: Any) -> None:
        super().__init__(*replies, **kwargs)
        self.signatures_given: list[str] = []  # the thoughtSignature of each function call sent, in order
        self.signatures_back: list[list[str | None]] = []  # per request: those of the calls in its history

    @property
    def url(self) -> str:
        return f"{self._server.base_url}/v1beta"

    def routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/v1beta/models/{spec}", self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        _model, _, method = request.match_info["spec"].partition(":")
        try:
            if not (request.headers.get("x-goog-api-key") or request.query.get("key")):
                raise GeminiError("Method doesn't allow unregistered callers (callers without established "
                                  "identity). Please use API Key or other form of API consumer identity to call "
                                  "this API.", "PERMISSION_DENIED", 403)
            body = await request.json()
            check_request(body)
            self._check_signatures(body, _model)
        except GeminiError as problem:
            with self._lock:
                self.rejected.append((await request.json(), problem))
            return problem.response()
        body, reply = await self._take(request)
        if reply.status != 200:
            status = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}.get(reply.status, "INVALID_ARGUMENT")
            return GeminiError(reply.error_message, status, reply.status).response()
        chunks = self._chunks(body, reply, _model.startswith("gemini-3"))
        if method == "streamGenerateContent":
            frames = [f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks]
            return await self._send(request, reply, frames, "text/event-stream")
        parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
        whole = chunks[-1]
        whole["candidates"][0]["content"]["parts"] = parts
        return web.json_response(whole)

    def _check_signatures(self, body: dict[str, Any], model: str) -> None:
        calls = [(i, p) for i, c in enumerate(body.get("contents") or []) if c.get("role") == "model"
                 for p in c.get("parts") or [] if "functionCall" in p or "function_call" in p]
        with self._lock:
            self.signatures_back.append([p.get("thoughtSignature", p.get("thought_signature")) for _, p in calls])
        if not model.startswith("gemini-3"):
            return
        for position, part in calls:
            if not (part.get("thoughtSignature") or part.get("thought_signature")):
                call = part.get("functionCall") or part.get("function_call") or {}
                raise GeminiError(MISSING_SIGNATURE.format(name=call.get("name"), position=position))

    def _signature(self) -> str:
        seed = str(len(self.signatures_given)).encode()
        signature = base64.b64encode(b"sig:" + hashlib.sha256(seed).digest()).decode()
        self.signatures_given.append(signature)
        return signature

    def _chunks(self, body: dict[str, Any], reply: Reply, signs: bool = False) -> list[dict[str, Any]]:
        size = max(1, reply.chunk_size)
        parts: list[dict[str, Any]] = [{"text": reply.text[i : i + size]} for i in range(0, len(reply.text), size)]
        for spec in reply.tool_calls:
            args = spec.arguments
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {"_raw": args}
            part: dict[str, Any] = {"functionCall": {"name": spec.name, "args": args}}
            if signs:
                part["thoughtSignature"] = self._signature()
            parts.append(part)
        if not parts:
            parts = [{"text": ""}]
        prompt, completion = self._estimate({"messages": body.get("contents", [])}, reply)
        chunks = [{"candidates": [{"content": {"role": "model", "parts": [p]}, "index": 0}],
                   "modelVersion": MODEL.split("/", 1)[1]} for p in parts]
        chunks[-1]["candidates"][0]["finishReason"] = "STOP"
        chunks[-1]["usageMetadata"] = {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                                       "totalTokenCount": prompt + completion}
        return chunks


def check_request(body: dict[str, Any]) -> None:
    """Raise GeminiError for what the Gemini API refuses in a generateContent body."""
    contents = body.get("contents")
    if not contents:
        raise GeminiError("* GenerateContentRequest.contents: contents is not specified\n")
    _check_turns(contents)
    for t, tool in enumerate(body.get("tools") or []):
        declarations = tool.get("functionDeclarations", tool.get("function_declarations")) or []
        for d, declaration in enumerate(declarations):
            _check_declaration(declaration, f"tools[{t}].function_declarations[{d}]")


def _kinds(content: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The function names a turn calls and answers (proto JSON: camelCase or snake_case fields)."""
    parts = content.get("parts") or []
    calls = [(p.get("functionCall") or p.get("function_call") or {}).get("name", "") for p in parts
             if "functionCall" in p or "function_call" in p]
    answers = [(p.get("functionResponse") or p.get("function_response") or {}).get("name", "") for p in parts
               if "functionResponse" in p or "function_response" in p]
    return calls, answers


def _check_turns(contents: list[dict[str, Any]]) -> None:
    previous_calls: list[str] = []
    previous_role, previous_answered = "", False
    for i, content in enumerate(contents):
        role = content.get("role", "user")
        if role not in ("user", "model", "function"):
            raise GeminiError("Please use a valid role: user, model.")
        if not content.get("parts"):
            raise GeminiError(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.\n")
        calls, answers = _kinds(content)
        if previous_calls and sorted(answers) != sorted(previous_calls):
            if not answers:
                raise GeminiError("Please ensure that function response turn comes immediately after a function "
                                  "call turn.")
            raise GeminiError("Please ensure that the number of function response parts is equal to the number "
                              "of function call parts of the function call turn.")
        if answers and not previous_calls:
            raise GeminiError("Please ensure that function response turn comes immediately after a function call "
                              "turn.")
        if calls and not (previous_role in ("user", "function") or previous_answered):
            raise GeminiError("Please ensure that function call turn comes immediately after a user turn or after "
                              "a function response turn.")
        previous_calls, previous_role, previous_answered = calls, role, bool(answers)
    if previous_calls:
        raise GeminiError("Please ensure that function response turn comes immediately after a function call turn.")


def _check_declaration(declaration: dict[str, Any], where: str) -> None:
    for key in declaration:
        if key not in DECLARATION_FIELDS:
            raise GeminiError(f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field.")
    if not NAME.match(str(declaration.get("name") or "")):
        raise GeminiError(f"* GenerateContentRequest.{where}.name: Invalid function name. Must start with a letter "
                          "or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons "
                          "(:), or dashes (-), with a maximum length of 64.\n")
    if "parameters" in declaration:
        check_schema(declaration["parameters"], f"{where}.parameters")


def check_schema(schema: Any, where: str) -> None:
    """Gemini's `Schema` (an OpenAPI 3.0 subset), as the API checks it."""
    if not isinstance(schema, dict):
        raise GeminiError(f"Invalid JSON payload received. Expected an object at '{where}'.")
    for key in schema:
        if key not in SCHEMA_FIELDS:
            raise GeminiError(f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field.")
    kind = str(schema.get("type", "type_unspecified")).lower()
    if kind not in TYPES:
        raise GeminiError(f"Invalid value at '{where}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta"
                          f".Type), \"{schema.get('type')}\"")
    if kind == "string" and schema.get("format") not in (None, "enum", "date-time"):
        raise GeminiError(f"* GenerateContentRequest.{where}.format: only 'enum' and 'date-time' are supported for "
                          "STRING type\n")
    if "enum" in schema and kind != "string":
        raise GeminiError(f"* GenerateContentRequest.{where}.enum: only allowed for STRING type\n")
    properties = schema.get("properties")
    if kind == "object" and properties is not None and not properties:
        raise GeminiError(f"* GenerateContentRequest.{where}.properties: should be non-empty for OBJECT type\n")
    for r, name in enumerate(schema.get("required") or []):
        if name not in (properties or {}):
            raise GeminiError(f"* GenerateContentRequest.{where}.required[{r}]: property is not defined\n")
    for name, sub in (properties or {}).items():
        check_schema(sub, f"{where}.properties[{name}]")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")
    for a, sub in enumerate(schema.get("anyOf") or []):
        check_schema(sub, f"{where}.any_of[{a}]")
