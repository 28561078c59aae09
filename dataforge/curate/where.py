"""``--where``: which episodes a curation keeps, as an expression over an episode's fields.

The grammar is a small part of Python's expression syntax (parsed by :mod:`ast`, never run):

- fields: ``id`` (the episode id), ``unit`` (the unit, i.e. the shard, it was made in),
  ``length`` (its rows in its longest time-indexed array: frames, steps), and every field of its
  metadata, nested ones with dots (``origin.scene_id``); a metadata field whose name is one of
  the three is read as ``metadata.<name>``;
- literals: strings (``"kitchen"``), numbers, ``True``, ``False``, ``None``, and lists or tuples
  of them (``["a", "b"]``);
- comparisons ``==  !=  <  <=  >  >=`` (chained: ``2 <= length < 100``), ``in`` and ``not in``
  (a value in a list, a substring in a string, an item in a list field);
- ``and``, ``or``, ``not``, parentheses, and a unary minus on numbers.

Anything else (calls, arithmetic, subscripts, comprehensions) is refused in one line before any
episode is read. An episode without a field the expression reads is a one-line error naming the
episode and the fields it has, as is a comparison of values that do not compare (a number with
a string).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dataforge.errors import UsageError

BUILT_IN = ("id", "unit", "length")
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def flatten(metadata: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``metadata`` with nested mappings as dotted keys (``{"a": {"b": 1}}`` -> ``a.b``); the
    nested mappings themselves are kept too (``a``)."""
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        name = f"{prefix}{key}"
        out[name] = value
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
    return out


def episode_fields(
    episode_id: str, unit: str, length: int, metadata: Mapping[str, Any]
) -> dict[str, Any]:
    """The fields ``--where`` reads of one episode (see the module docstring)."""
    meta = flatten(metadata)
    fields = {**meta, **{f"metadata.{k}": v for k, v in meta.items()}}
    fields.update(id=episode_id, unit=unit, length=int(length))
    return fields


@dataclass(frozen=True)
class Where:
    """A parsed ``--where`` expression; ``fields`` are the names it reads."""

    text: str
    tree: ast.Expression
    fields: tuple[str, ...]

    def __call__(self, fields: Mapping[str, Any]) -> bool:
        return bool(_eval(self.tree.body, fields, self.text))


def parse_where(text: str) -> Where:
    """Parse ``text``; a one-line :class:`UsageError` for a syntax error or a construct the
    grammar lacks."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"--where {text!r}: not an expression ({exc.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Name, ast.Attribute, *_ALLOWED)):
            raise UsageError(
                f"--where {text!r}: {type(node).__name__.lower()} is not in the grammar "
                "(fields, literals, comparisons, in, and/or/not: see dataforge subset --help)"
            )
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Name | ast.Attribute)]
    names = [
        _dotted(n, text)
        for n in sorted(nodes, key=lambda n: (n.lineno, n.col_offset))  # in the text's order
        if id(n) not in inner
    ]
    return Where(text, tree, tuple(dict.fromkeys(names)))


_ALLOWED = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.UnaryOp,
    ast.Not,
    ast.USub,
    ast.Compare,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Load,
    *_COMPARE,
)


def _dotted(node: ast.expr, text: str) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value, text)}.{node.attr}"
    raise UsageError(f"--where {text!r}: a field name is letters, digits, '_' and dots")


def _eval(node: ast.expr, fields: Mapping[str, Any], text: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(e, fields, text) for e in node.elts]
    if isinstance(node, ast.Name | ast.Attribute):
        name = _dotted(node, text)
        if name not in fields:
            known = ", ".join(sorted(k for k in fields if not k.startswith("metadata.")))
            raise UsageError(
                f"--where {text!r}: episode {fields.get('id')!r} has no field {name!r} "
                f"(its fields: {known})"
            )
        return fields[name]
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, fields, text) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, fields, text)
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise UsageError(f"--where {text!r}: '-' takes a number, not {value!r}")
        return -value
    if isinstance(node, ast.Compare):
        left = _eval(node.left, fields, text)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, fields, text)
            try:
                ok = _COMPARE[type(op)](left, right)
            except TypeError:
                raise UsageError(
                    f"--where {text!r}: episode {fields.get('id')!r}: {left!r} and {right!r} "
                    "do not compare"
                ) from None
            if not ok:
                return False
            left = right
        return True
    raise UsageError(f"--where {text!r}: {type(node).__name__.lower()} is not in the grammar")
