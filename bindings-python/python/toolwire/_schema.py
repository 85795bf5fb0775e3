"""JSON Schema from Python type hints and docstrings, and arguments back into those types."""

from __future__ import annotations

import copy
import dataclasses
import enum
import inspect
import json
import re
import sys
import typing
from typing import Any, Callable, Union

try:  # Python 3.10+
    from types import NoneType, UnionType
except ImportError:  # pragma: no cover - Python 3.9
    NoneType = type(None)  # type: ignore[misc]
    UnionType = None  # type: ignore[assignment,misc]

_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    NoneType: {"type": "null"},
    type(None): {"type": "null"},
}


def _pydantic_model(tp: Any) -> bool:
    model = sys.modules.get("pydantic")
    return model is not None and isinstance(tp, type) and issubclass(tp, model.BaseModel)


def _is_doc(item: Any) -> bool:
    """`typing_extensions.Doc("...")`, a parameter's documentation (PEP 727)."""
    return type(item).__name__ == "Doc" and isinstance(getattr(item, "documentation", None), str)


def _pydantic_metadata(tp: Any) -> bool:
    """Whether `tp` carries, anywhere inside, `Annotated` metadata that pydantic acts on (a
    `Field`, constraints, validators): pydantic then converts its values, as in its SDK."""
    if typing.get_origin(tp) is typing.Annotated:
        args = typing.get_args(tp)
        if any(type(a).__module__.split(".")[0] in ("pydantic", "annotated_types") for a in args[1:]):
            return True
        return _pydantic_metadata(args[0])
    return any(_pydantic_metadata(arg) for arg in typing.get_args(tp))


def _field_info(value: Any) -> Any:
    """`value` if it is a pydantic `Field(...)`, else None."""
    fields = sys.modules.get("pydantic.fields")
    return value if fields is not None and isinstance(value, fields.FieldInfo) else None


_ALIASES = ("alias", "validation_alias", "serialization_alias", "alias_priority")


def _without_alias(field: Any) -> Any:
    """A copy of a `Field(...)` that names no alias: outside a model pydantic ignores (and warns
    of) an alias, which here renames the argument instead (see `analyse`)."""
    if not any(getattr(field, name, None) is not None for name in _ALIASES):
        return field
    stripped = copy.copy(field)
    for name in _ALIASES:
        setattr(stripped, name, None)
    # A dict of its own: the copy shares the original's, and the user's Field keeps its alias.
    attributes = getattr(field, "_attributes_set", None)
    if attributes is not None:
        stripped._attributes_set = {k: v for k, v in attributes.items() if k not in _ALIASES}
    return stripped


# annotated_types constraints as JSON Schema keywords (numbers; lengths depend on the type).
_BOUNDS = {"Ge": "minimum", "Gt": "exclusiveMinimum", "Le": "maximum", "Lt": "exclusiveMaximum"}


def _constraint_keywords(item: Any, schema: dict[str, Any]) -> bool:
    """Adds what an annotated_types constraint says to `schema`; False if `item` is none."""
    kind = type(item).__name__ if type(item).__module__ == "annotated_types" else None
    if kind in _BOUNDS:
        schema[_BOUNDS[kind]] = getattr(item, kind.lower())
    elif kind == "MultipleOf":
        schema["multipleOf"] = item.multiple_of
    elif kind == "Interval":
        for name in ("gt", "ge", "lt", "le"):
            bound = getattr(item, name)
            if bound is not None:
                schema[_BOUNDS[name.capitalize()]] = bound
    elif kind in ("MinLen", "MaxLen", "Len"):
        words = ("minLength", "maxLength") if schema.get("type") == "string" else ("minItems", "maxItems")
        if kind != "MaxLen" and getattr(item, "min_length", 0):
            schema[words[0]] = item.min_length
        if kind != "MinLen" and getattr(item, "max_length", None) is not None:
            schema[words[1]] = item.max_length
    else:
        return False
    return True


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__annotations__") and hasattr(tp, "__total__")


def _is_union(origin: Any) -> bool:
    return origin is Union or (UnionType is not None and origin is UnionType)


class SchemaBuilder:
    """Builds schemas; named types (dataclasses, TypedDicts, enums, models) go to `$defs`."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def schema(self, tp: Any) -> dict[str, Any]:
        if tp is inspect.Parameter.empty or tp is Any or tp is object:
            return {}
        if tp in _SCALARS:
            return dict(_SCALARS[tp])
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            docs = [a for a in args[1:] if isinstance(a, str)]
            others = [a for a in args[1:] if not isinstance(a, str)]
            inner = self._annotated(tp, args[0], others) if others else self.schema(args[0])
            if docs:
                inner.setdefault("description", docs[0])
            return inner
        if _is_union(origin):
            options = [self.schema(a) for a in args]
            return {"anyOf": options}
        if origin is typing.Literal:
            values = list(args)
            schema: dict[str, Any] = {"enum": values}
            kinds = {type(v) for v in values}
            if len(kinds) == 1 and next(iter(kinds)) in _SCALARS:
                schema["type"] = _SCALARS[next(iter(kinds))]["type"]
            return schema
        if origin in (list, set, frozenset) or tp in (list, set):
            schema = {"type": "array"}
            if args:
                schema["items"] = self.schema(args[0])
            if origin in (set, frozenset):
                schema["uniqueItems"] = True
            return schema
        if origin is tuple or tp is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.schema(args[0])}
            if args:
                return {
                    "type": "array",
                    "prefixItems": [self.schema(a) for a in args],
                    "minItems": len(args),
                    "maxItems": len(args),
                }
            return {"type": "array"}
        if origin is dict or tp is dict:
            schema = {"type": "object"}
            if len(args) == 2:
                schema["additionalProperties"] = self.schema(args[1])
            return schema
        collections_abc = getattr(origin, "__module__", "") == "collections.abc"
        if collections_abc and origin.__name__ in ("Sequence", "Iterable", "Collection"):
            return {"type": "array", "items": self.schema(args[0]) if args else {}}
        if collections_abc and origin.__name__ == "Mapping":
            return {"type": "object", "additionalProperties": self.schema(args[1]) if len(args) == 2 else {}}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._named(tp, lambda: {"enum": [m.value for m in tp]})
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            return self._named(tp, lambda: self._dataclass(tp))
        if _is_typeddict(tp):
            return self._named(tp, lambda: self._typeddict(tp))
        if _pydantic_model(tp):
            return self._pydantic(tp)
        raise TypeError(f"cannot derive a JSON Schema for {tp!r}; give the tool an explicit input_schema")

    def _annotated(self, tp: Any, inner_type: Any, metadata: list[Any]) -> dict[str, Any]:
        """`Annotated[T, ...]` with constraints or a `Field(...)`: pydantic's own schema where
        pydantic is installed (what users of the official SDK get), otherwise the annotated_types
        constraints mapped here. Metadata neither can express is refused, never dropped."""
        docs = [item.documentation for item in metadata if _is_doc(item)]
        metadata = [item for item in metadata if not _is_doc(item)]
        if not metadata:
            schema = self.schema(inner_type)
            if docs:
                schema.setdefault("description", docs[0])
            return schema
        for item in metadata:
            module = type(item).__module__.split(".")[0]
            if module not in ("pydantic", "annotated_types"):
                # pydantic would pass over what it does not know: a limit lost without a word.
                raise TypeError(f"cannot express {item!r} in JSON Schema; give the tool an explicit input_schema")
        if "pydantic" in sys.modules or any(_field_info(item) is not None for item in metadata):
            schema = self._adapted(tp)
        else:
            schema = self.schema(inner_type)
            for item in metadata:
                if not _constraint_keywords(item, schema):
                    raise TypeError(f"cannot express {item!r} in JSON Schema; give the tool an explicit input_schema")
        if docs:
            schema.setdefault("description", docs[0])
        return schema

    def _adapted(self, tp: Any) -> dict[str, Any]:
        """pydantic's JSON Schema of `tp`; its named types join `$defs`."""
        import pydantic

        try:
            schema = pydantic.TypeAdapter(tp).json_schema(ref_template="#/$defs/{model}")
        except pydantic.PydanticUserError as err:
            raise TypeError(f"pydantic cannot make a JSON Schema of {tp!r}: {err}") from err
        self.defs.update(schema.pop("$defs", {}))
        return schema

    def _named(self, tp: type, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        name = tp.__name__
        if name not in self.defs:
            self.defs[name] = {}  # placeholder: recursive types refer to themselves
            schema = build()
            doc = inspect.getdoc(tp)
            if doc and not (dataclasses.is_dataclass(tp) and doc.startswith(f"{name}(")):
                schema.setdefault("description", doc.split("\n\n")[0])
            self.defs[name] = schema
        return {"$ref": f"#/$defs/{name}"}

    def _dataclass(self, tp: type) -> dict[str, Any]:
        hints = typing.get_type_hints(tp, include_extras=True)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in dataclasses.fields(tp):
            schema = self.schema(hints.get(field.name, Any))
            if field.default is not dataclasses.MISSING:
                _add_default(schema, field.default)
            elif field.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                required.append(field.name)
            properties[field.name] = schema
        return _object(properties, required)

    def _typeddict(self, tp: type) -> dict[str, Any]:
        hints = typing.get_type_hints(tp, include_extras=True)
        required_keys = getattr(tp, "__required_keys__", set(hints))
        properties = {name: self.schema(hint) for name, hint in hints.items()}
        return _object(properties, [n for n in hints if n in required_keys])

    def _pydantic(self, tp: type) -> dict[str, Any]:
        schema = tp.model_json_schema(ref_template="#/$defs/{model}")  # type: ignore[attr-defined]
        self.defs.update(schema.pop("$defs", {}))
        name = tp.__name__
        self.defs[name] = schema
        return {"$ref": f"#/$defs/{name}"}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _json_value(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, (str, int, float, bool))
        or (
            isinstance(value, (list, tuple, dict))
            and all(_json_value(v) for v in (value.values() if isinstance(value, dict) else value))
        )
    )


def _add_default(schema: dict[str, Any], default: Any) -> None:
    if isinstance(default, enum.Enum):
        default = default.value
    if _json_value(default):
        schema["default"] = list(default) if isinstance(default, tuple) else default


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_ARG_LINE = re.compile(r"^\s{2,}(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SECTION = re.compile(r"^\s*\w[\w ]*:\s*$")


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """The summary (text before any section) and the Args section's per-parameter lines."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines) and not _ARGS_HEADER.match(lines[i]) and not (_SECTION.match(lines[i]) and i > 0):
        summary.append(lines[i])
        i += 1
    current = None
    for line in lines[i:]:
        if _ARGS_HEADER.match(line):
            current = None
            continue
        match = _ARG_LINE.match(line)
        if match:
            current = match.group(1).lstrip("*")
            params[current] = match.group(3).strip()
        elif _SECTION.match(line) and not line.startswith("  "):
            current = None
        elif current and line.strip():
            params[current] += " " + line.strip()
    text = "\n".join(summary).strip()
    return (text or None), params


@dataclasses.dataclass
class Signature:
    """What the engine needs from a tool function."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    description: str | None
    context_param: str | None
    params: dict[str, Any]  # argument name -> annotation, for converting arguments back
    # Arguments whose name is not the parameter's (a pydantic `Field(alias=...)`).
    renamed: dict[str, str] = dataclasses.field(default_factory=dict)
    # Parameters whose default is a `Field(...)`: what to pass when the argument is absent.
    defaults: dict[str, Callable[[], Any]] = dataclasses.field(default_factory=dict)


def analyse(
    fn: Callable[..., Any], context_type: Union[type, tuple[type, ...]], result_types: tuple[type, ...] = ()
) -> Signature:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError as err:
        raise TypeError(
            f"cannot resolve the type hints of {getattr(fn, '__name__', fn)!r} ({err}); "
            "define the types it uses at module level, or give an explicit input_schema"
        ) from err
    builder = SchemaBuilder()
    summary, docs = parse_docstring(inspect.getdoc(fn))
    properties: dict[str, Any] = {}
    required: list[str] = []
    params: dict[str, Any] = {}
    renamed: dict[str, str] = {}
    defaults: dict[str, Callable[[], Any]] = {}
    context_param = None
    fn_name = getattr(fn, "__name__", repr(fn))
    for name, param in inspect.signature(fn).parameters.items():
        annotation = hints.get(name, param.annotation)
        if isinstance(annotation, type) and issubclass(annotation, context_type):
            context_param = name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = param.default
        key = name
        field = _field_info(default)
        if field is not None:
            # `days: int = Field(3, ge=1)`: the Field says the schema and the default.
            bare = annotation if annotation is not param.empty else Any
            annotation = typing.Annotated[bare, _without_alias(field)]
            default = param.empty
        elif typing.get_origin(annotation) is typing.Annotated:
            items = typing.get_args(annotation)
            field = next(filter(None, map(_field_info, items[1:])), None)
            if field is not None:
                stripped = tuple(_without_alias(item) if item is field else item for item in items[1:])
                annotation = typing.Annotated[(items[0], *stripped)]
        if field is not None:
            if field.validation_alias is not None and field.validation_alias != field.alias:
                unsupported = "validation_alias is not supported; name the argument with alias="
                raise TypeError(f"parameter {name!r} of {fn_name!r}: {unsupported}")
            key = field.alias or name
            if default is param.empty and _field_has_default(field):
                # A fresh default for each call (a copy, or the factory's), as pydantic gives.
                defaults[name] = lambda field=field: field.get_default(call_default_factory=True)
        if key in properties:
            raise TypeError(f"parameter {name!r} of {fn_name!r}: the argument name {key!r} is taken already")
        try:
            schema = builder.schema(annotation)
        except TypeError as err:
            raise TypeError(f"parameter {name!r} of {fn_name!r}: {err}") from err
        if name in docs and "description" not in schema:
            schema["description"] = docs[name]
        if default is param.empty and name not in defaults:
            required.append(key)
        elif default is not param.empty and "default" not in schema:
            _add_default(schema, default)
        properties[key] = schema
        params[key] = annotation
        if key != name:
            renamed[key] = name
    input_schema = _with_defs(_object(properties, required), builder)
    output_schema = None
    returns = hints.get("return", inspect.Signature.empty)
    # The package's own result classes (ToolResult, content blocks) are results, not data.
    if returns is not inspect.Signature.empty and returns not in result_types:
        out_builder = SchemaBuilder()
        output_schema = _output_schema(returns, out_builder)
        if output_schema is not None:
            output_schema = _with_defs(output_schema, out_builder)
    return Signature(input_schema, output_schema, summary, context_param, params, renamed, defaults)


def _field_has_default(field: Any) -> bool:
    """Whether a `Field(...)` gives a default (a value or a factory); else it is required."""
    if field.default_factory is not None:
        return True
    return not (type(field.default).__name__ == "PydanticUndefinedType" or field.default is Ellipsis)


def _with_defs(schema: dict[str, Any], builder: SchemaBuilder) -> dict[str, Any]:
    """Attaches the named definitions when the schema refers to any."""
    if builder.defs and '"$ref"' in json.dumps(schema):
        schema["$defs"] = dict(builder.defs)
    return schema


def _output_schema(returns: Any, builder: SchemaBuilder) -> dict[str, Any] | None:
    """Structured output for returns that are JSON objects: dict[str, X], TypedDict, dataclass, model."""
    origin = typing.get_origin(returns)
    if origin is typing.Annotated:
        returns = typing.get_args(returns)[0]
        origin = typing.get_origin(returns)
    structured = (
        (origin is dict or returns is dict)
        or _is_typeddict(returns)
        or (dataclasses.is_dataclass(returns) and isinstance(returns, type))
        or _pydantic_model(returns)
    )
    if not structured:
        return None
    schema = builder.schema(returns)
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        inlined = dict(builder.defs[name])
        # The top-level type is written inline; it stays in `$defs` only when something refers
        # back to it (a recursive type), rather than being repeated there.
        others = {other: defn for other, defn in builder.defs.items() if other != name}
        if f'"#/$defs/{name}"' not in json.dumps([inlined, others]):
            del builder.defs[name]
        return inlined
    return schema


# Annotations whose validated JSON values `convert` returns as they are.
_UNCHANGED: tuple[Any, ...] = (inspect.Parameter.empty, Any, str, int, bool, dict, list, object)


def converter(tp: Any) -> Union[Callable[[Any], Any], None]:
    """`convert(value, tp)` as a function of the value, decided once per parameter (at
    registration); `None` where the value is passed as it is. A type with pydantic metadata
    anywhere inside is converted by pydantic (its validators run, unions as pydantic reads
    them), with the adapter made here, once."""
    if any(tp is unchanged for unchanged in _UNCHANGED):
        return None
    if "pydantic" in sys.modules and _pydantic_metadata(tp):
        import pydantic

        return pydantic.TypeAdapter(tp).validate_python
    return lambda value: convert(value, tp)


def convert(value: Any, tp: Any) -> Any:
    """A validated JSON argument as the declared Python type (enums, dataclasses, models)."""
    if value is None or tp is inspect.Parameter.empty or tp is Any:
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return convert(value, args[0])
    if _is_union(origin):
        for option in args:
            if option is NoneType:
                continue
            try:
                return convert(value, option)
            except (TypeError, ValueError):
                continue
        return value
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type) and isinstance(value, dict):
        hints = typing.get_type_hints(tp)
        return tp(**{k: convert(v, hints.get(k, Any)) for k, v in value.items()})
    if _pydantic_model(tp):
        return tp.model_validate(value)  # type: ignore[attr-defined]
    if origin is list and isinstance(value, list) and args:
        return [convert(v, args[0]) for v in value]
    if origin in (set, frozenset) and isinstance(value, list):
        return origin(convert(v, args[0]) if args else v for v in value)
    if origin is tuple and isinstance(value, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(v, args[0]) for v in value)
        return tuple(convert(v, a) for v, a in zip(value, args)) if args else tuple(value)
    if origin is dict and isinstance(value, dict) and len(args) == 2:
        return {k: convert(v, args[1]) for k, v in value.items()}
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value
