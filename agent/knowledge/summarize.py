"""AI summaries of single files from the small model, as validated structured output.

The model answers with a JSON object as its message content (every provider can do that); it
is validated with pydantic, and one invalid answer is asked again with the validation error.
Costs come from litellm's cost map; for models it has no price for, the estimate is in tokens.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.config import first_problem
from agent.llm import LLM

MAX_FILE_CHARS = 24_000  # about 6k tokens: enough to say what a file is for
PROMPT_OVERHEAD_TOKENS = 350
ANSWER_TOKENS = 220

SYSTEM = """You summarise one source file for a map of a code base. Answer with one JSON object \
and nothing else (no prose, no code fence), with exactly these keys:
- "description": one or two sentences on what the file is for and how it fits in
- "tags": 1 to 6 short lowercase topic words
- "exports": the main names other files use (functions, classes, constants), at most 12
- "dependencies": the modules or packages it imports or calls, at most 12
- "complexity": "low", "medium" or "high"
"""


class FileSummary(BaseModel):
    model_config = ConfigDict(extra="ignore")

    description: str = Field(min_length=1, max_length=600)
    tags: list[str] = Field(default_factory=list, max_length=12)
    exports: list[str] = Field(default_factory=list, max_length=40)
    dependencies: list[str] = Field(default_factory=list, max_length=40)
    complexity: Literal["low", "medium", "high"]
    last_analyzed: str = ""


class SummaryError(Exception):
    """The model's answers could not be used; the message says why."""


@dataclass
class Summarised:
    summary: FileSummary
    cost: float | None
    prompt_tokens: int
    completion_tokens: int


def summary_llm(config: Any) -> LLM:
    """The small model for summaries: `small_model`, else the main model (ConfigError: neither)."""
    model = config.small_model or config.require_model()
    key = config.api_key.get_secret_value() if config.api_key else None
    return LLM(model, config.api_base, key, config.timeout, config.max_retries, config.retry_base_delay,
               config.key_variable(), path=config.model_path)


def user_message(path: str, text: str, symbols: list[str]) -> str:
    body = text if len(text) <= MAX_FILE_CHARS else text[:MAX_FILE_CHARS] + "\n[... cut ...]"
    defined = f"Definitions found by the parser: {', '.join(symbols[:40])}\n" if symbols else ""
    return f"File: {path}\n{defined}\n```\n{body}\n```"


async def summarise(llm: LLM, path: str, text: str, symbols: list[str]) -> Summarised:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_message(path, text, symbols)},
    ]
    cost, prompt, completion = 0.0, 0, 0
    priced = True
    for attempt in range(2):
        reply = await llm.complete(messages, [], lambda _text: None, lambda *_: None)
        prompt, completion = prompt + reply.prompt_tokens, completion + reply.completion_tokens
        if reply.cost is None:
            priced = False
        else:
            cost += reply.cost
        try:
            summary = parse_summary(reply.text)
        except SummaryError as exc:
            if attempt:
                raise
            messages += [{"role": "assistant", "content": reply.text},
                         {"role": "user", "content": f"That answer was not usable: {exc}. Answer again "
                                                     "with only the JSON object."}]
            continue
        summary.last_analyzed = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        return Summarised(summary, cost if priced else None, prompt, completion)
    raise SummaryError("unreachable")  # pragma: no cover - the loop returns or raises


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def parse_summary(text: str) -> FileSummary:
    raw = _FENCE.sub("", text.strip())
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end < start:
        raise SummaryError(f"no JSON object in the answer ({text.strip()[:80]!r})")
    try:
        data = json.loads(raw[start:end + 1])
    except json.JSONDecodeError as exc:
        raise SummaryError(f"invalid JSON ({exc.msg} at character {exc.pos})") from None
    try:
        return FileSummary.model_validate(data)
    except ValidationError as exc:
        where, problem = first_problem(exc, "object")
        raise SummaryError(f"`{where}`: {problem}") from None


@dataclass
class Estimate:
    files: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # None: the model has no known price

    def describe(self) -> str:
        tokens = f"about {self.prompt_tokens + self.completion_tokens:,} tokens"
        if self.cost is None:
            return f"{tokens} (no price known for this model)"
        return f"{tokens}, roughly ${self.cost:.4f}"


def estimate(model: str, sizes: list[int]) -> Estimate:
    """Rough tokens and price for summarising files of these sizes (bytes)."""
    prompt = sum(PROMPT_OVERHEAD_TOKENS + min(size, MAX_FILE_CHARS) // 4 for size in sizes)
    completion = ANSWER_TOKENS * len(sizes)
    return Estimate(len(sizes), prompt, completion, price(model, prompt, completion))


def price(model: str, prompt: int, completion: int) -> float | None:
    from agent.llm import model_prices

    prices = model_prices(model)
    return None if prices is None else prices.cost(prompt, completion)
