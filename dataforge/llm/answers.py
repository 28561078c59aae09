"""Read one JSON object out of a model's answer and validate it against a JSON schema.

Models wrap JSON in prose, in ```json fences, or put their reasoning first (``<think>...</think>``
blocks, Think-and-Act answers). :func:`parse_json_answer` drops think blocks, finds the
top-level ``{...}`` spans of what is left, and takes the last one that parses and validates (the
decision comes after the reasoning). A problem raises :class:`AnswerError`, whose message is one
short sentence meant to be sent back to the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from dataforge.errors import DataforgeError, missing_dependency

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_QUOTE_LIMIT = 120
_JSON_KINDS = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


class AnswerError(DataforgeError, ValueError):
    """A model's answer is unusable. ``str(err)`` (also ``feedback``) is a sentence for the model;
    ``kind`` is ``"json"`` (no or broken JSON) or ``"schema"`` (valid JSON, wrong content);
    ``value`` is the parsed object for schema problems, else None."""

    def __init__(self, feedback: str, kind: str, value: dict[str, Any] | None = None) -> None:
        super().__init__(feedback)
        self.feedback = feedback
        self.kind = kind
        self.value = value


def strip_reasoning(text: str) -> str:
    """The answer without its ``<think>...</think>`` blocks. An unclosed ``<think>`` hides the
    rest of the text; a lone ``</think>`` (templates that open the block in the prompt) hides
    what precedes it."""
    text = _THINK.sub("", text)
    lower = text.lower()
    close = lower.rfind("</think>")
    if close >= 0:
        text = text[close + len("</think>") :]
        lower = text.lower()
    start = lower.find("<think>")
    if start >= 0:
        text = text[:start]
    return text.strip()


def _spans(text: str) -> Iterator[str]:
    """Top-level ``{...}`` spans, matching braces outside JSON strings; an unclosed one runs to
    the end of the text."""
    i, n = 0, len(text)
    while True:
        start = text.find("{", i)
        if start < 0:
            return
        depth, in_string, escaped = 0, False, False
        end = n
        for j in range(start, n):
            c = text[j]
            if in_string:
                if escaped:
                    escaped = False
                elif c == "\\":
                    escaped = True
                elif c == '"':
                    in_string = False
            elif c == '"':
                in_string = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    end = j + 1
                    break
        yield text[start:end]
        if end >= n:
            return
        i = end


_TOO_DEEP = "Your answer was nested too deeply."


def _loads(text: str) -> Any:
    """``json.loads``; nesting too deep for the parser is a ValueError too, not a crash."""
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc


def _quote(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _QUOTE_LIMIT else text[: _QUOTE_LIMIT - 3] + "..."


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Any:
    try:
        import jsonschema
    except ImportError as exc:  # pragma: no cover - jsonschema comes with the llm extra
        raise missing_dependency("jsonschema", "llm", "Checking LLM answers") from exc
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)  # a broken schema is the caller's bug: SchemaError, not feedback
    return cls(schema)


def _where(path: Any) -> str:
    parts = list(path)
    if not parts:
        return "the answer"
    out = str(parts[0])
    for p in parts[1:]:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return f"'{out}'"


def _describe(error: Any) -> str:
    """A schema violation as a sentence a model can act on."""
    where = _where(error.absolute_path)
    v, expected = error.validator, error.validator_value
    if v == "enum":
        options = ", ".join(_quote(o) for o in expected)
        return f"{where} must be one of {options}, not {_quote(error.instance)}."
    if v == "const":
        return f"{where} must be {_quote(expected)}, not {_quote(error.instance)}."
    if v == "type":
        kinds = expected if isinstance(expected, str) else " or ".join(expected)
        return f"{where} must be of type {kinds}, not {_quote(error.instance)}."
    if v == "required":
        missing = [k for k in expected if k not in error.instance]
        names = ", ".join(f"'{k}'" for k in missing) or str(expected)
        return f"{where} is missing the required key(s) {names}."
    if v == "additionalProperties":
        return f"{where}: {error.message}."
    return f"{where}: {error.message}."


def validate_answer(value: Any, schema: Mapping[str, Any]) -> None:
    """Raise :class:`AnswerError` (kind ``"schema"``) when ``value`` breaks ``schema``."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    import jsonschema

    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        described = _describe(error) if error is not None else None
    except RecursionError as exc:  # a value nested deeper than Python recurses
        raise AnswerError(_TOO_DEEP, "json") from exc
    if described is not None:
        raise AnswerError(
            f"Your answer did not follow the required format: {described}",
            "schema",
            value if isinstance(value, dict) else None,
        )


def parse_json_answer(text: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The one JSON object a model answered, validated against ``schema``.

    Accepted: plain JSON, JSON in ```json fences, JSON with prose around it, JSON after
    ``<think>`` blocks. With several objects, the last one that parses and validates wins.
    Raises :class:`AnswerError` with a sentence to send back to the model.
    """
    body = strip_reasoning(text or "")
    if not body:
        if (text or "").strip():
            raise AnswerError("Your answer held only reasoning and no JSON object.", "json")
        raise AnswerError("Your answer was empty.", "json")
    try:
        whole = _loads(body)
    except ValueError:
        pass
    else:
        if not isinstance(whole, dict):
            raise AnswerError(
                f"Your answer must be one JSON object ({{...}}), not a JSON "
                f"{_JSON_KINDS.get(type(whole), 'value')}.",
                "json",
            )
        validate_answer(whole, schema)
        return whole

    parsed: list[dict[str, Any]] = []
    last_json_error: str | None = None
    for span in _spans(body):
        try:
            value = _loads(span)
        except ValueError as exc:
            last_json_error = str(exc)
            continue
        if isinstance(value, dict):
            parsed.append(value)
    if not parsed:
        if last_json_error is None:
            raise AnswerError("Your answer contained no JSON object.", "json")
        raise AnswerError(f"Your answer was not valid JSON: {last_json_error}.", "json")
    first_problem: AnswerError | None = None
    for value in reversed(parsed):
        try:
            validate_answer(value, schema)
        except AnswerError as exc:
            first_problem = first_problem or exc
            continue
        return value
    assert first_problem is not None
    raise first_problem
