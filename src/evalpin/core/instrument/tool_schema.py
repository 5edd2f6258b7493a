"""Tool schemas as the function-calling schema defines them, closed all the way down.

A golden case offers tools in one of two shapes: OpenAI's `{"type": "function",
"function": {"name", "description", "parameters", "strict"}}`, or the bare function
`{"name", "description", "parameters"}`. `parameters` is a JSON Schema. Every level is
closed: a key the function-calling schema does not define (`functon`, `parameter`), or a
JSON Schema keyword that does not exist (`requird`, `additionalProperty`), is refused
with the nearest valid key, because an endpoint ignores what it does not know and the
case would quietly offer another tool than the one written. JSON Schema keeps its own
vocabulary (drafts 4 to 2020-12, and OpenAPI's `nullable`); keys of one's own start
with `x-`, as everywhere in evalpin's formats. Property names under `properties` are the
tool's own, and free.

A case's `tool_results` are checked against the tools it offers: a result under a name
no offered tool has would never be returned, so it is refused with the nearest name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from evalpin.core.schema import nearest, unknown_key, unknown_keys

TOOL_KEYS = frozenset({"type", "function"})
FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})
# OpenAI's rule for a function's name (Anthropic's and most servers' too).
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})

# JSON Schema keywords whose value is one schema, a list of schemas, or a map of them.
_ONE = {
    "additionalProperties", "items", "not", "if", "then", "else", "contains",
    "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems",
    "contentSchema",
}  # fmt: skip
_LIST = {"allOf", "anyOf", "oneOf", "prefixItems"}
_MAP = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
_PLAIN = {
    "$schema", "$id", "$ref", "$comment", "$anchor", "$dynamicRef", "$dynamicAnchor",
    "$vocabulary", "$recursiveRef", "$recursiveAnchor", "type", "enum", "const",
    "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "maxContains", "minContains", "maxProperties", "minProperties", "required",
    "dependentRequired", "dependencies", "title", "description", "default",
    "deprecated", "readOnly", "writeOnly", "examples", "format", "contentEncoding",
    "contentMediaType", "nullable",
}  # fmt: skip
SCHEMA_KEYWORDS = frozenset(_ONE | _LIST | _MAP | _PLAIN)


class ToolSchemaError(ValueError):
    """What is wrong with a tool schema, where (`tools[1].function.parameters...`);
    `unknown`: a key the format does not have (the file is not in its format)."""

    def __init__(self, message: str, *, unknown: bool = False) -> None:
        super().__init__(message)
        self.unknown = unknown


def _keys(obj: dict[str, Any], valid: frozenset[str], where: str) -> None:
    for key in unknown_keys(obj, valid):
        raise ToolSchemaError(unknown_key(key, valid, f"{where}: "), unknown=True)


def tool_name(tool: Any) -> str | None:
    """The function name a tool offers, in either shape; None when it names none."""
    if not isinstance(tool, dict):
        return None
    function = tool.get("function") if "type" in tool or "function" in tool else tool
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else None


def check_tools(tools: list[Any], where: str = "tools") -> None:
    """ToolSchemaError at the first problem of a list of tool schemas."""
    seen: set[str] = set()
    for n, tool in enumerate(tools):
        at = f"{where}[{n}]"
        if not isinstance(tool, dict):
            raise ToolSchemaError(f"{at}: a tool schema is a JSON object")
        if "type" in tool or "function" in tool:
            _keys(tool, TOOL_KEYS, at)
            if tool.get("type") != "function":
                raise ToolSchemaError(f"{at}: 'type' must be 'function', got {tool.get('type')!r}")
            function = tool.get("function")
            at += ".function"
            if not isinstance(function, dict):
                raise ToolSchemaError(f"{at}: must be an object with the function's 'name'")
        else:
            function = tool
        name = _function(function, at)
        if name in seen:
            raise ToolSchemaError(f"{at}: the tool {name!r} is offered twice")
        seen.add(name)


def _function(function: dict[str, Any], at: str) -> str:
    _keys(function, FUNCTION_KEYS, at)
    name = function.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ToolSchemaError(
            f"{at}.name: a function's name is 1 to 64 letters, digits, '_' or '-', got {name!r}"
        )
    if "description" in function and not isinstance(function["description"], str):
        raise ToolSchemaError(f"{at}.description: must be a string")
    if "strict" in function and not isinstance(function["strict"], bool):
        raise ToolSchemaError(f"{at}.strict: must be true or false")
    if "parameters" in function:
        parameters = function["parameters"]
        if not isinstance(parameters, dict):
            raise ToolSchemaError(f"{at}.parameters: must be a JSON Schema object")
        check_schema(parameters, f"{at}.parameters")
    return name


def check_schema(schema: Any, where: str) -> None:
    """ToolSchemaError at the first keyword of a JSON Schema (and its subschemas) that is
    not one, or whose value is not its kind. Walked without recursion."""
    todo: list[tuple[Any, str]] = [(schema, where)]
    while todo:
        node, at = todo.pop()
        if isinstance(node, bool):
            continue  # `true` / `false` are schemas
        if not isinstance(node, dict):
            raise ToolSchemaError(f"{at}: a schema is a JSON object (or true / false)")
        _keys(node, SCHEMA_KEYWORDS, at)
        _check_values(node, at)
        for key, value in node.items():
            if key in _ONE and not (key == "items" and isinstance(value, list)):
                todo.append((value, f"{at}.{key}"))
            elif key in _LIST or key == "items":
                if not isinstance(value, list):
                    raise ToolSchemaError(f"{at}.{key}: must be a list of schemas")
                todo.extend((v, f"{at}.{key}[{k}]") for k, v in enumerate(value))
            elif key in _MAP:
                if not isinstance(value, dict):
                    raise ToolSchemaError(f"{at}.{key}: must map names to schemas")
                todo.extend((v, f"{at}.{key}.{name}") for name, v in value.items())
            elif key == "dependencies" and isinstance(value, dict):
                todo.extend(
                    (v, f"{at}.dependencies.{name}")
                    for name, v in value.items()
                    if not isinstance(v, list)
                )


def _check_values(node: dict[str, Any], at: str) -> None:
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "type" in node:
        for value in kinds:
            if value not in JSON_TYPES:
                guess = nearest(value, JSON_TYPES) if isinstance(value, str) else None
                hint = f" (did you mean {guess!r}?)" if guess else ""
                raise ToolSchemaError(f"{at}.type: {value!r} is not a JSON type{hint}")
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ToolSchemaError(f"{at}.required: must be a list of property names")
    if "enum" in node and not isinstance(node["enum"], list):
        raise ToolSchemaError(f"{at}.enum: must be a list")
    properties = node.get("properties")
    if isinstance(properties, dict) and node.get("additionalProperties") is False:
        for name in required:
            if name not in properties:
                guess = nearest(name, properties)
                hint = f" (did you mean {guess!r}?)" if guess else ""
                raise ToolSchemaError(f"{at}.required: {name!r} is not among its properties{hint}")


def check_results(results: dict[str, Any], offered: Iterable[str], where: str) -> None:
    """ToolSchemaError when a canned result names a tool that is not offered (it would
    never be returned); nothing to check when no tool is offered at all."""
    names = set(offered)
    if not names:
        return
    for name in results:
        if name not in names:
            guess = nearest(name, names)
            hint = f"did you mean {guess!r}?" if guess else f"offered: {', '.join(sorted(names))}"
            raise ToolSchemaError(f"{where}: a result for {name!r}, no tool offered ({hint})")
