"""Pipeline configurations: one frozen dataclass per pipeline, the one source of every setting's
default and help text.

A setting that users choose on the command line is declared with :func:`option`::

    @dataclass(frozen=True)
    class SyntheticConfig(PipelineConfig):
        scenes: int = option(4, "Number of scenes (one work unit and one shard each).", min=1)

The generation command builds its click options from these fields (``cli/options.py``), so a
default is written once. Fields declared with a plain default are facts the pipeline records
itself (a library version, specs read from an input file). :meth:`PipelineConfig.to_dict`
writes the config into the manifest and :meth:`PipelineConfig.from_dict` rebuilds it from
there (``dataforge reproduce``); ``from_dict(c.to_dict()) == c``.

The limits an option declares (``choices``, ``min``, ``max``) are enforced in one place,
:func:`check_options`, which runs before each config's own ``__post_init__`` (every subclass's
``__post_init__`` is wrapped, :meth:`PipelineConfig.__init_subclass__`), so a config built from
Python, the command line or a manifest is checked the same way. A config's ``__post_init__``
checks only what the declarations cannot say (relations between fields, formats), raising
``UsageError`` with the option's name.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from dataforge.errors import UsageError

C = TypeVar("C", bound="PipelineConfig")


@dataclass(frozen=True)
class OptionSpec:
    """How a config field appears on the command line.

    ``flags``: the option's names (default ``--field-name``); ``choices``: allowed values;
    ``min``/``max``: numeric range; ``parse``: text -> value for values that are not plain
    numbers or words (e.g. ``96x72`` -> ``(96, 72)``), with ``show`` to print the default;
    ``metavar``: the value's name in --help.
    """

    help: str
    flags: tuple[str, ...] = ()
    choices: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None
    parse: Callable[[str], Any] | None = None
    show: Callable[[Any], str] | None = None
    metavar: str | None = None


def option(
    default: Any,
    help: str,
    *,
    flags: Sequence[str] = (),
    choices: Sequence[Any] | None = None,
    min: float | None = None,
    max: float | None = None,
    parse: Callable[[str], Any] | None = None,
    show: Callable[[Any], str] | None = None,
    metavar: str | None = None,
) -> Any:
    """A config field that is also a command-line option (see :class:`OptionSpec`)."""
    spec = OptionSpec(
        help=help,
        flags=tuple(flags),
        choices=tuple(choices) if choices is not None else None,
        min=min,
        max=max,
        parse=parse,
        show=show,
        metavar=metavar,
    )
    return dataclasses.field(default=default, metadata={"option": spec})


def option_spec(f: dataclasses.Field) -> OptionSpec | None:
    return f.metadata.get("option")


def option_flags(f: dataclasses.Field) -> tuple[str, ...]:
    spec = option_spec(f)
    if spec is None:
        return ()
    return spec.flags or ("--" + f.name.replace("_", "-"),)


def parse_size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` (e.g. ``640x480``) -> ``(width, height)``."""
    try:
        w, h = (int(v) for v in str(text).lower().split("x"))
    except ValueError:
        raise UsageError(f"{text!r} is not WIDTHxHEIGHT, e.g. 640x480") from None
    return w, h


def show_size(value: Sequence[int]) -> str:
    return f"{value[0]}x{value[1]}"


def parse_list(text: str) -> tuple[str, ...]:
    """A comma-separated list (blanks dropped)."""
    return tuple(p.strip() for p in str(text).split(",") if p.strip())


def show_list(value: Sequence[str]) -> str:
    return ",".join(value)


def _number(v: float) -> str:
    return f"{v:g}"


@functools.cache
def _integer_field(cls: type, name: str) -> bool:
    """Whether field ``name`` of config class ``cls`` is annotated ``int`` (or ``int | None``)."""
    hint = typing.get_type_hints(cls)[name]
    return hint is int or (
        typing.get_origin(hint) in (typing.Union, types.UnionType)
        and int in typing.get_args(hint)
        and float not in typing.get_args(hint)
    )


def check_options(config: Any) -> None:
    """Every option field of ``config`` within its declared ``choices`` / ``min`` / ``max``
    (``None`` passes: an option left to its computed default); a one-line ``UsageError`` naming
    the option otherwise."""
    cls: type = type(config)
    for f in dataclasses.fields(config):
        spec = option_spec(f)
        if spec is None:
            continue
        value = getattr(config, f.name)
        if value is None or value is dataclasses.MISSING:
            continue
        flag = option_flags(f)[0]
        if spec.choices is not None and value not in spec.choices:
            allowed = ", ".join(str(c) for c in spec.choices)
            raise UsageError(f"{flag} must be one of {allowed}, got {value!r}")
        if spec.min is None and spec.max is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError(f"{flag} must be a number, got {value!r}")
        if _integer_field(cls, f.name) and not isinstance(value, int):
            raise UsageError(f"{flag} must be an integer, got {value!r}")
        low, high = spec.min, spec.max
        if (low is not None and value < low) or (high is not None and value > high):
            if low is not None and high is not None:
                want = f"in [{_number(low)}, {_number(high)}]"
            elif low is not None:
                want = f"at least {_number(low)}"
            else:
                want = f"at most {_number(high)}"  # type: ignore[arg-type]
            raise UsageError(f"{flag} must be {want}, got {value!r}")


class PipelineConfig:
    """Mixin of every pipeline's frozen config dataclass: ``to_dict``, ``from_dict``, ``with_``;
    the declared option limits are checked (:func:`check_options`) before the config's own
    ``__post_init__``."""

    def __post_init__(self) -> None:
        check_options(self)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__post_init__")
        if own is None:
            return  # inherits a checked __post_init__

        def __post_init__(self: Any) -> None:
            check_options(self)
            own(self)

        __post_init__.__doc__ = own.__doc__
        cls.__post_init__ = __post_init__  # type: ignore[method-assign]

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls: type[C], d: Mapping[str, Any]) -> C:
        """The config recorded as ``d`` (a manifest's ``config``). Unknown settings are a
        ``UsageError`` (a dataset made by another dataforge); missing ones take the default."""
        if not isinstance(d, Mapping):
            raise UsageError(f"a {cls.__name__} must be a mapping, got {type(d).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(d) - set(fields))
        if unknown:
            raise UsageError(
                f"the recorded configuration has settings this dataforge does not know: "
                f"{', '.join(unknown)} (made by another version?)"
            )
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for name, value in d.items():
            try:
                kwargs[name] = _typed(hints[name], value)
            except (TypeError, ValueError) as exc:
                raise UsageError(f"recorded setting {name}={value!r} is malformed: {exc}") from None
        return cls(**kwargs)

    def with_(self: C, **changes: Any) -> C:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        """The fields that are command-line options, in declaration order."""
        return [f for f in dataclasses.fields(cls) if option_spec(f) is not None]  # type: ignore[arg-type]


def _plain(value: Any) -> Any:
    """JSON-ready: dataclasses to dicts (through their own ``to_dict`` when they have one),
    tuples to lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "to_dict"):
            return value.to_dict()
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _typed(hint: Any, value: Any) -> Any:
    """``value`` (from JSON) converted to the annotated type: tuples, nested dataclasses,
    optional values; scalars are checked, not coerced (``1.5`` is not an ``int``)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        errors = []
        for a in inner:
            try:
                return _typed(a, value)
            except (TypeError, ValueError) as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_typed(args[0], v) for v in value)
        if len(args) != len(value):
            raise ValueError(f"expected {len(args)} values, got {len(value)}")
        return tuple(_typed(a, v) for a, v in zip(args, value, strict=True))
    if origin in (dict, Mapping) or hint is dict:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping, got {type(value).__name__}")
        kt, vt = args or (Any, Any)
        return {_typed(kt, k): _typed(vt, v) for k, v in value.items()}
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        cls = typing.cast("type[Any]", hint)  # a hint is a class, not a dataclass instance
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping for {cls.__name__}")
        if hasattr(cls, "from_dict"):
            return cls.from_dict(value)
        sub = typing.get_type_hints(cls)
        return cls(**{k: _typed(sub[k], v) for k, v in value.items()})
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"expected a number, got {value!r}")
        return float(value)
    if hint in (int, str, bool):
        if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
            raise TypeError(f"expected {hint.__name__}, got {value!r}")
        return value
    return value
