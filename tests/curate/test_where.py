"""The --where grammar: what it keeps, decided by hand on small field sets, and what it refuses
in one line before any episode is read."""

from __future__ import annotations

import pytest

from dataforge.curate.where import episode_fields, flatten, parse_where
from dataforge.errors import UsageError

EP = episode_fields(
    "house_7/ep-3",
    "house_7",
    120,
    {
        "task": "BinFill",
        "difficulty": "hard",
        "origin": {"scene_id": "s1", "room": 2},
        "tags": ["a"],
    },
)


@pytest.mark.parametrize(
    ("expr", "keep"),
    [
        ('task == "BinFill"', True),
        ('task != "BinFill"', False),
        ("length < 120", False),
        ("length <= 120", True),
        ("100 < length <= 120", True),  # chained
        ("100 < length < 110", False),
        ('difficulty in ["easy", "medium"]', False),
        ('difficulty not in ("easy", "medium")', True),
        ('"a" in tags', True),
        ('"Fill" in task', True),  # a substring
        ('origin.scene_id == "s1" and origin.room == 2', True),
        ('unit == "house_7" and not id == "house_7/ep-3"', False),
        ('task == "x" or length > -1', True),  # unary minus
        ('metadata.task == "BinFill"', True),
        ("True", True),
    ],
)
def test_keeps_what_the_expression_says(expr: str, keep: bool) -> None:
    assert parse_where(expr)(EP) is keep


def test_built_ins_win_over_metadata_of_the_same_name() -> None:
    fields = episode_fields("e", "u", 5, {"length": 99, "id": "other"})
    assert parse_where("length == 5 and id == 'e'")(fields)
    assert parse_where("metadata.length == 99 and metadata.id == 'other'")(fields)


def test_fields_are_the_dotted_names_read() -> None:
    assert parse_where('origin.scene_id == "s" and length > 2 or task == "t"').fields == (
        "origin.scene_id",
        "length",
        "task",
    )
    assert flatten({"a": {"b": {"c": 1}}}) == {"a": {"b": {"c": 1}}, "a.b": {"c": 1}, "a.b.c": 1}


@pytest.mark.parametrize(
    ("expr", "says"),
    [
        ("len(task) > 2", "call is not in the grammar"),
        ("length + 1 > 2", "binop is not in the grammar"),
        ("tags[0] == 'a'", "subscript is not in the grammar"),
        ("[x for x in tags]", "listcomp is not in the grammar"),
        ("task ==", "not an expression"),
        ("__import__('os')", "call is not in the grammar"),
    ],
)
def test_what_the_grammar_lacks_is_refused_before_reading(expr: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        parse_where(expr)


def test_a_missing_field_and_values_that_do_not_compare_are_one_line() -> None:
    with pytest.raises(UsageError, match=r"episode 'house_7/ep-3' has no field 'house'.*task"):
        parse_where("house == 'x'")(EP)
    with pytest.raises(UsageError, match="120 and 'long' do not compare"):
        parse_where("length < 'long'")(EP)
