"""Checks calls to the fake GitHub against GitHub's published REST description (@octokit/openapi,
installed into tests/specs by `make specs`): the request names a documented operation (path
template and method), sends its required parameters and no undocumented query parameter, and its
body fits the operation's requestBody schema; the answer's status is documented for the operation
(or is an error GitHub can send anywhere) and its JSON body fits that status's schema.

The description is loaded once per process; a validator is built per operation and status the
first time it is needed, and kept.
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPECS = Path(__file__).resolve().parent.parent / "specs" / "node_modules" / "@octokit"
REST_DESCRIPTION = SPECS / "openapi" / "generated" / "api.github.com.json"
WEBHOOK_SCHEMAS = SPECS / "webhooks-schemas" / "schema.json"
_BASE = "urn:github-rest"
# statuses any endpoint can answer, documented or not (unparsable requests, bad credentials, outages)
_ANYWHERE = {400, 401, 403, 404, 429, 500, 502, 503, 504}
# paths the fake serves that are not REST API operations (github.com uploads, its blob store)
_NOT_REST = ("/_blobs/", "/user-attachments/")


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    pattern: re.Pattern
    spec: dict
    literal_length: int


def _nullable_to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's `nullable: true` as JSON Schema says it (null is one more allowed type)."""
    if isinstance(node, list):
        return [_nullable_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _nullable_to_json_schema(value) for key, value in node.items()}
    if out.pop("nullable", False) is not True:
        return out
    if isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    return {"anyOf": [out, {"type": "null"}]}


def _template_pattern(template: str, multi_segment: frozenset[str] = frozenset()) -> re.Pattern:
    """A path parameter matches one segment, except `{path}` and those the description marks
    `x-multi-segment` (a git ref such as `heads/feature/a`), which match several."""
    parts = re.split(r"(\{[^}]+\})", template)
    regex = "".join(("(.+)" if part == "{path}" or part[1:-1] in multi_segment else "([^/]+)")
                    if part.startswith("{") else re.escape(part) for part in parts)
    return re.compile(regex)


class RestDescription:
    """GitHub's REST description, indexed by method for matching and with $refs resolvable."""

    def __init__(self, path: Path = REST_DESCRIPTION):
        raw = json.loads(path.read_text())
        self.document: dict[str, Any] = {"components": _nullable_to_json_schema(raw["components"])}
        self.parameters = self.document["components"].get("parameters", {})
        self.responses = self.document["components"].get("responses", {})
        self.registry = Registry().with_resource(
            _BASE, Resource.from_contents(self.document, default_specification=DRAFT202012))
        self.operations: dict[str, list[Operation]] = {}
        for template, item in raw["paths"].items():
            shared = item.get("parameters", [])
            for method, spec in item.items():
                if method == "parameters":
                    continue
                spec = _nullable_to_json_schema({**spec, "parameters": shared + spec.get("parameters", [])})
                literal = len(re.sub(r"\{[^}]+\}", "", template))
                pattern = _template_pattern(template, self._multi_segment(spec))
                self.operations.setdefault(method.upper(), []).append(
                    Operation(method.upper(), template, pattern, spec, literal))
        for candidates in self.operations.values():
            candidates.sort(key=lambda op: -op.literal_length)

    def _multi_segment(self, spec: dict) -> frozenset[str]:
        params = [self.parameter(p) for p in spec.get("parameters", [])]
        return frozenset(p["name"] for p in params if p.get("in") == "path" and p.get("x-multi-segment"))

    def find(self, method: str, path: str) -> Operation | None:
        for operation in self.operations.get(method, []):
            if operation.pattern.fullmatch(path):
                return operation
        return None

    def parameter(self, node: dict) -> dict:
        ref = node.get("$ref", "")
        return self.parameters[ref.rsplit("/", 1)[-1]] if ref else node

    def response(self, node: dict) -> dict:
        ref = node.get("$ref", "")
        return self.responses[ref.rsplit("/", 1)[-1]] if ref else node

    def validator(self, schema: dict) -> Draft202012Validator:
        return Draft202012Validator(_rebase(schema), registry=self.registry)


def _rebase(node: object) -> object:
    """A schema from an operation, its local $refs pointed at the registered components."""
    if isinstance(node, list):
        return [_rebase(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {key: (_BASE + value if key == "$ref" and value.startswith("#") else _rebase(value))
            for key, value in node.items()}


_description: RestDescription | None = None
_description_lock = threading.Lock()


def rest_description() -> RestDescription:
    global _description
    with _description_lock:
        if _description is None:
            _description = RestDescription()
        return _description


class ConformanceChecker:
    """Checks exchanges one at a time; counts what it checked and keeps what did not conform."""

    def __init__(self, description: RestDescription | None = None):
        self._description = description
        self._validators: dict[tuple[str, str, str], Draft202012Validator | None] = {}
        self._lock = threading.Lock()
        self.operations_seen: set[str] = set()
        self.requests_checked = 0
        self.responses_validated = 0

    @property
    def description(self) -> RestDescription:
        if self._description is None:
            self._description = rest_description()
        return self._description

    def check(self, method: str, raw_path: str, body: object, status: int, answer: object) -> list[str]:
        """Every way this request or its answer is off the description (empty when it conforms)."""
        path, query = urlsplit(raw_path).path, dict(parse_qsl(urlsplit(raw_path).query))
        if path.startswith(_NOT_REST):
            return []
        operation = self.description.find(method, path)
        if operation is None:
            return [f"{method} {path}: no documented operation"]
        where = f"{method} {operation.template}"
        with self._lock:
            self.operations_seen.add(where)
            self.requests_checked += 1
        problems = self._parameter_problems(operation, path, query)
        problems += self._body_problems(operation, body)
        problems += self._answer_problems(operation, status, answer)
        return [f"{where}: {problem}" for problem in problems]

    def _parameter_problems(self, operation: Operation, path: str, query: dict) -> list[str]:
        params = [self.description.parameter(p) for p in operation.spec.get("parameters", [])]
        in_query = {p["name"]: p for p in params if p["in"] == "query"}
        problems = [f"undocumented query parameter {name!r}" for name in query if name not in in_query]
        problems += [f"missing required query parameter {name!r}" for name, p in in_query.items()
                     if p.get("required") and name not in query]
        names = re.findall(r"\{([^}]+)\}", operation.template)
        matched = operation.pattern.fullmatch(path)
        values = dict(zip(names, matched.groups() if matched else (), strict=False))
        for p in params:
            if p["in"] == "path" and p["schema"].get("type") == "integer" and not values[p["name"]].isdigit():
                problems.append(f"path parameter {p['name']!r} is not an integer: {values[p['name']]!r}")
        return problems

    def _body_problems(self, operation: Operation, body: object) -> list[str]:
        request = operation.spec.get("requestBody")
        if request is None:
            return [] if body is None else ["a body where the operation takes none"]
        if body is None:
            return ["missing the required request body"] if request.get("required") else []
        validator = self._validator(operation, "request", lambda: _json_schema(request))
        return [f"request body {_error_text(e)}" for e in validator.iter_errors(body)] if validator else []

    def _answer_problems(self, operation: Operation, status: int, answer: object) -> list[str]:
        documented = operation.spec.get("responses", {})
        if str(status) not in documented:
            if status in _ANYWHERE or status >= 500:
                return []
            return [f"status {status} is not documented (documented: {', '.join(documented)})"]
        if isinstance(answer, bytes) or status in (204, 302, 304):
            return []
        response = self.description.response(documented[str(status)])
        validator = self._validator(operation, str(status), lambda: _json_schema(response))
        if validator is None:
            return []
        with self._lock:
            self.responses_validated += 1
        return [f"response {status} {_error_text(e)}" for e in validator.iter_errors(answer)]

    def _validator(self, operation: Operation, key: str,
                   schema_of: Callable[[], dict | None]) -> Draft202012Validator | None:
        cache_key = (operation.method, operation.template, key)
        with self._lock:
            if cache_key not in self._validators:
                schema = schema_of()
                self._validators[cache_key] = self.description.validator(schema) if schema else None
            return self._validators[cache_key]


def _json_schema(node: dict) -> dict | None:
    content = node.get("content", {})
    for media in ("application/json", "application/vnd.github+json"):
        if media in content and "schema" in content[media]:
            return content[media]["schema"]
    return None


def _error_text(error: ValidationError) -> str:
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"at {where}: {error.message[:300]}"


def shaped(schema_name: str, value: object) -> object:
    """`value` with every property the named schema requires and it lacks filled in, at every level,
    with a neutral default (null where allowed, else false, 0, "", [] or the first enum value).
    Present values are kept. For the fake's seeded objects, so they are whole as GitHub's are."""
    return _filled({"$ref": f"#/components/schemas/{schema_name}"}, value)


def projected(schema_name: str, value: dict) -> dict:
    """Only the top-level properties the named schema documents (a list's simpler item shape)."""
    schema = _resolved({"$ref": f"#/components/schemas/{schema_name}"})
    return {key: item for key, item in value.items() if key in schema.get("properties", {})}


def _resolved(schema: dict) -> dict:
    components: dict[str, Any] = rest_description().document["components"]
    while "$ref" in schema:
        schema = components["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _filled(schema: dict, value: object) -> object:
    schema = _resolved(schema)
    for part in schema.get("allOf", []):
        value = _filled(part, value)
    options = [_resolved(s) for s in schema.get("anyOf", []) + schema.get("oneOf", [])]
    if options:
        if value is None:
            return None
        typed = [s for s in options if s.get("type") != "null"]
        return _filled(typed[0], value) if typed and len(typed) == 1 else value
    if isinstance(value, dict) and "properties" in schema:
        for name, sub in schema["properties"].items():
            if name in value:
                value[name] = _filled(sub, value[name])
            elif name in schema.get("required", []):
                value[name] = _default(sub)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_filled(schema["items"], item) for item in value]
    return value


def _default(schema: dict) -> object:
    schema = _resolved(schema)
    kind = schema.get("type")
    options = schema.get("anyOf", []) + schema.get("oneOf", [])
    if (isinstance(kind, list) and "null" in kind) or any(_resolved(s).get("type") == "null" for s in options):
        return None
    if "enum" in schema:
        return schema["enum"][0]
    if options or schema.get("allOf"):
        return _filled(schema, {}) if not options else _default(options[0])
    kind = kind[0] if isinstance(kind, list) else kind
    basics = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": []}
    if kind in basics:
        return basics[kind]
    return _filled(schema, {})
