"""Vendor the request-body schemas of OpenAI's API that the contract tests validate against.

    python -m tests.contracts.vendor_openai PATH/TO/openapi.json COMMIT DATE

reads OpenAI's published OpenAPI document (github.com/openai/openai-openapi, file `openapi.json`)
and writes tests/contracts/openai_requests.json: the component schemas that
`CreateChatCompletionRequest` and `CreateResponse` reach through `$ref`, without their prose
(descriptions, examples, `x-` annotations), with the source, commit and API version noted.
Nothing else is changed: the strictness the tests add (unknown keys forbidden) is theirs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOTS = ("CreateChatCompletionRequest", "CreateResponse")
PROSE = ("description", "example", "examples", "title", "deprecated")
OUT = Path(__file__).with_name("openai_requests.json")


def reached(schemas: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    pending = list(ROOTS)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        pending.extend(refs(schemas[name]))
    return seen


def refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [value["$ref"].rsplit("/", 1)[-1]] if isinstance(value.get("$ref"), str) else []
        return found + [name for v in value.values() for name in refs(v)]
    if isinstance(value, list):
        return [name for v in value for name in refs(v)]
    return []


def without_prose(value: Any) -> Any:
    """The schema without its prose; the names in a `properties` map are kept whatever they are."""
    if isinstance(value, dict):
        return {k: ({name: without_prose(sub) for name, sub in v.items()} if k == "properties" and isinstance(v, dict)
                    else without_prose(v))
                for k, v in value.items() if k not in PROSE and not k.startswith("x-")}
    if isinstance(value, list):
        return [without_prose(v) for v in value]
    return value


def main(path: str, commit: str, date: str) -> None:
    document = json.loads(Path(path).read_text())
    schemas = document["components"]["schemas"]
    kept = {name: without_prose(schemas[name]) for name in sorted(reached(schemas))}
    source = {"repository": "https://github.com/openai/openai-openapi", "file": "openapi.json", "commit": commit,
              "committed": date, "openapi": document["openapi"], "api_version": document["info"]["version"],
              "roots": list(ROOTS), "changes": "descriptions, examples, titles and x- annotations removed"}
    OUT.write_text(json.dumps({"source": source, "schemas": kept}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
