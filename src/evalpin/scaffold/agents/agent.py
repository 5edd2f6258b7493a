"""An example agent for the `my_agent` command slot in slots.yaml.

evalpin runs this program once per (case, seed), in the project folder, and writes one
JSON request on its stdin:

    {"case_id", "seed", "messages": [{"role", "content"}], "tools": [...],
     "temperature", "max_tokens", "tool_results": {...}, "max_turns"}

It must write one JSON completion on stdout, and log anything else to stderr:

    {"text": "...", "tools": [{"name", "args"}], "files": {"name": "content"}, "model": "..."}

This one calls no model: it answers the two golden cases with canned rules, so that
`evalpin run --slot my_agent` works offline, and gives the coding item no file (graded
`missing_file`). Replace `answer()` with a call to your agent or model. The program gets
evalpin's environment minus every name that looks like a secret (containing KEY, TOKEN,
SECRET or PASSWORD, and OPENAI_*): load credentials yourself, never from slots.yaml.
"""

from __future__ import annotations

import json
import re
import sys

ORDER_NUMBER = re.compile(r"\b[A-Z]\d{4}\b")


def answer(request: dict) -> dict:
    """One completion for one request."""
    user = " ".join(m["content"] for m in request["messages"] if m["role"] == "user")
    offered = {tool["function"]["name"] for tool in request.get("tools", [])}
    found = ORDER_NUMBER.search(user)
    if "lookup_order" in offered and found:
        order = found.group()
        result = request.get("tool_results", {}).get("lookup_order", {})
        status = result.get("status", "being processed") if isinstance(result, dict) else ""
        return {
            "text": f"Order {order} is {status}.",
            "tools": [{"name": "lookup_order", "args": {"order_id": order}}],
            "model": "example-agent/1",
        }
    if offered:
        return {
            "text": "I can look into that. What is your order number?",
            "model": "example-agent/1",
        }
    return {"text": "No model is wired up to this agent yet.", "model": "example-agent/1"}


def main() -> None:
    request = json.load(sys.stdin)
    json.dump(answer(request), sys.stdout)


if __name__ == "__main__":
    main()
