"""Input and output schemas derived from type hints, defaults and docstrings."""

from __future__ import annotations

import dataclasses
import enum
import sys
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

import pytest
from toolwire import Context
from toolwire._schema import analyse, parse_docstring


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


class Movie(TypedDict):
    title: str
    year: int


try:
    import pydantic

    class Address(pydantic.BaseModel):
        street: str

    class User(pydantic.BaseModel):
        name: str
        address: Address
except ImportError:  # pragma: no cover - pydantic is optional
    pydantic = None  # type: ignore[assignment]


def schema_of(fn: Any) -> dict:
    return analyse(fn, Context).input_schema


def test_scalars_defaults_and_required() -> None:
    def f(s: str, i: int, x: float, b: bool, n: None, anything: Any, d: int = 3) -> None: ...

    schema = schema_of(f)
    assert schema["properties"] == {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "x": {"type": "number"},
        "b": {"type": "boolean"},
        "n": {"type": "null"},
        "anything": {},
        "d": {"type": "integer", "default": 3},
    }
    assert schema["required"] == ["s", "i", "x", "b", "n", "anything"]
    assert schema["type"] == "object"


def test_optional_union_list_dict_tuple_literal() -> None:
    def f(
        a: Optional[int] = None,
        b: Union[int, str] = 1,
        c: list[str] = [],  # noqa: B006
        d: dict[str, float] = {},  # noqa: B006
        e: tuple[int, str] = (1, "x"),
        f: tuple[int, ...] = (),
        g: Literal["x", "y"] = "x",
        h: set[int] = frozenset(),  # noqa: B006
    ) -> None: ...

    p = schema_of(f)["properties"]
    assert p["a"] == {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}
    assert p["b"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert p["c"] == {"type": "array", "items": {"type": "string"}, "default": []}
    assert p["d"] == {"type": "object", "additionalProperties": {"type": "number"}, "default": {}}
    assert p["e"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}] and p["e"]["default"] == [1, "x"]
    assert p["f"]["items"] == {"type": "integer"}
    assert p["g"] == {"enum": ["x", "y"], "type": "string", "default": "x"}
    assert p["h"]["uniqueItems"] is True


@pytest.mark.skipif(sys.version_info < (3, 10), reason="X | None needs Python 3.10")
def test_pep604_unions() -> None:
    ns: dict = {}
    exec("def f(a: int | None = None) -> None: ...", ns)
    assert schema_of(ns["f"])["properties"]["a"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]


def test_named_types_go_to_defs() -> None:
    def f(color: Color, point: Point, movie: Movie) -> None: ...

    schema = schema_of(f)
    assert schema["properties"]["color"] == {"$ref": "#/$defs/Color"}
    assert schema["$defs"]["Color"]["enum"] == ["red", "blue"]
    assert schema["$defs"]["Point"]["properties"] == {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}}
    assert schema["$defs"]["Point"]["required"] == ["x"]
    assert schema["$defs"]["Movie"]["required"] == ["title", "year"]


def test_descriptions_from_annotated_and_docstring() -> None:
    def f(city: Annotated[str, "The city name"], days: int = 3) -> None:
        """Forecast for a city.

        More detail here.

        Args:
            city: ignored, Annotated wins
            days (int): How many days,
                at most seven.
        """

    sig = analyse(f, Context)
    assert sig.description == "Forecast for a city.\n\nMore detail here."
    assert sig.input_schema["properties"]["city"]["description"] == "The city name"
    assert sig.input_schema["properties"]["days"]["description"] == "How many days, at most seven."


def test_context_parameter_is_not_an_argument() -> None:
    def f(text: str, ctx: Context) -> str: ...

    sig = analyse(f, Context)
    assert sig.context_param == "ctx"
    assert list(sig.input_schema["properties"]) == ["text"]


def test_output_schema_from_return_annotation() -> None:
    def structured() -> Movie: ...

    def mapping() -> dict[str, int]: ...

    def text() -> str: ...

    assert analyse(structured, Context).output_schema["properties"]["year"] == {"type": "integer"}
    assert analyse(mapping, Context).output_schema == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert analyse(text, Context).output_schema is None


@dataclasses.dataclass
class Route:
    name: str
    start: Point
    end: Point


@dataclasses.dataclass
class Tree:
    label: str
    children: list[Tree]


def test_output_schema_inlines_the_returned_type_once() -> None:
    def route() -> Route: ...

    def tree() -> Tree: ...

    schema = analyse(route, Context).output_schema
    assert schema["properties"]["start"] == {"$ref": "#/$defs/Point"}
    # The returned type is the schema itself, not repeated in $defs.
    assert list(schema["$defs"]) == ["Point"]
    # A recursive type refers back to itself, so there it stays.
    recursive = analyse(tree, Context).output_schema
    assert recursive["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    assert list(recursive["$defs"]) == ["Tree"]


@pytest.mark.skipif(pydantic is None, reason="pydantic is not installed")
def test_pydantic_models_when_installed() -> None:
    def f(user: User) -> User: ...

    sig = analyse(f, Context)
    assert sig.input_schema["properties"]["user"] == {"$ref": "#/$defs/User"}
    assert "Address" in sig.input_schema["$defs"]
    assert sig.output_schema["properties"]["name"]["type"] == "string"


def test_unsupported_annotation_is_a_clear_error() -> None:
    def f(x: complex) -> None: ...

    with pytest.raises(TypeError, match="explicit input_schema"):
        schema_of(f)


def test_unresolvable_annotation_is_a_clear_error() -> None:
    def f(x: NotDefinedAnywhere) -> None: ...  # noqa: F821

    with pytest.raises(TypeError, match="cannot resolve the type hints"):
        schema_of(f)


def test_docstring_parser_without_args() -> None:
    assert parse_docstring("Just a line.") == ("Just a line.", {})
    assert parse_docstring(None) == (None, {})


try:
    from pydantic import AfterValidator, Field

    def forecast(
        city: Annotated[str, Field(min_length=1, description="City name", examples=["Oslo"])],
        days: Annotated[int, Field(ge=1, le=7, description="How many days")] = 3,
        units: str = Field("metric", pattern="^(metric|imperial)$"),
        tags: list[str] = Field(default_factory=list, max_length=3),
        day_count: int = Field(1, alias="dayCount", ge=1),
    ) -> dict:
        """Forecast for a city."""
        return {"city": city, "days": days, "units": units, "tags": tags, "day_count": day_count}

    def shout(text: Annotated[str, AfterValidator(str.upper)]) -> str:
        return text

    def bag(items: Annotated[list[str], Field(default_factory=list)], seen: list[int] = Field([1])) -> list[int]:
        seen.append(len(items))
        return seen

    SHARED_ALIAS = Annotated[int, Field(alias="dayCount")]

    def aliased(day_count: SHARED_ALIAS = 1) -> int:
        return day_count

    def clashing(count: Annotated[int, Field(alias="other")], other: int) -> None: ...
except ImportError:  # pragma: no cover - pydantic is optional
    pass

try:
    import annotated_types

    def ranged(
        n: Annotated[int, annotated_types.Ge(2), annotated_types.Lt(5)],
        name: Annotated[str, annotated_types.Len(1, 8)],
        items: Annotated[list[int], annotated_types.MaxLen(3)],
        step: Annotated[float, annotated_types.Interval(gt=0, le=1), annotated_types.MultipleOf(0.25)],
    ) -> None: ...
except ImportError:  # pragma: no cover - annotated_types is optional
    pass


try:
    from typing_extensions import Doc

    def documented(city: Annotated[str, Doc("The city")]) -> None: ...
except ImportError:  # pragma: no cover - typing_extensions without Doc
    documented = None  # type: ignore[assignment]


class Unknown:
    """Metadata no schema generator knows."""


def counted(count: Annotated[int, Unknown()]) -> None: ...


def _forecast_server() -> Any:
    from toolwire import Server

    server = Server("weather")
    server.add_tool(forecast)
    return server


def test_pydantic_field_constraints_reach_the_schema() -> None:
    pytest.importorskip("pydantic")
    from conftest import Client

    client = Client(_forecast_server())
    client.initialize()
    client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    (tool,) = client.recv()["result"]["tools"]
    properties = tool["inputSchema"]["properties"]
    assert properties["city"] == {"description": "City name", "examples": ["Oslo"], "minLength": 1, "type": "string"}
    assert properties["days"] == {
        "description": "How many days",
        "maximum": 7,
        "minimum": 1,
        "type": "integer",
        "default": 3,
    }
    assert properties["units"] == {"default": "metric", "pattern": "^(metric|imperial)$", "type": "string"}
    assert properties["tags"] == {"items": {"type": "string"}, "maxItems": 3, "type": "array"}
    # An alias names the argument; the parameter keeps its own name.
    assert properties["dayCount"] == {"default": 1, "minimum": 1, "type": "integer"}
    assert tool["inputSchema"]["required"] == ["city"]


def test_pydantic_field_limits_are_enforced_and_defaults_filled() -> None:
    pytest.importorskip("pydantic")
    from conftest import Client

    client = Client(_forecast_server())
    client.initialize()
    client.call(1, "forecast", {"city": "Oslo", "days": 9})
    refused = client.recv()["result"]
    assert refused["isError"] is True
    assert "/days" in refused["content"][0]["text"], refused
    client.call(2, "forecast", {"city": "Oslo", "dayCount": 2})
    answered = client.recv()["result"]
    assert answered.get("isError") is not True, answered
    assert answered["structuredContent"] == {
        "city": "Oslo",
        "days": 3,
        "units": "metric",
        "tags": [],
        "day_count": 2,
    }


def test_annotated_types_without_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("annotated_types")
    # The mapping of its own, used where pydantic is not installed.
    monkeypatch.delitem(sys.modules, "pydantic", raising=False)

    properties = analyse(ranged, Context).input_schema["properties"]
    assert properties["n"] == {"type": "integer", "minimum": 2, "exclusiveMaximum": 5}
    assert properties["name"] == {"type": "string", "minLength": 1, "maxLength": 8}
    assert properties["items"] == {"type": "array", "items": {"type": "integer"}, "maxItems": 3}
    assert properties["step"] == {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "multipleOf": 0.25}


def test_metadata_that_cannot_be_expressed_is_refused_naming_the_parameter() -> None:
    with pytest.raises(TypeError, match="parameter 'count' of 'counted': cannot express"):
        analyse(counted, Context)


def test_pydantic_validators_run_and_defaults_are_fresh() -> None:
    pydantic = pytest.importorskip("pydantic")
    from toolwire._schema import converter

    signature = analyse(shout, Context)
    assert converter(signature.params["text"])("loud") == "LOUD"
    signature = analyse(bag, Context)
    # `items` has a factory: not required; `seen` gets a copy of its default on each call.
    assert "required" not in signature.input_schema
    first, second = signature.defaults["seen"](), signature.defaults["seen"]()
    assert first == second == [1] and first is not second
    assert signature.defaults["items"]() == []
    del pydantic


def test_an_alias_names_the_argument_and_the_users_field_keeps_it() -> None:
    pydantic = pytest.importorskip("pydantic")
    signature = analyse(aliased, Context)
    assert list(signature.input_schema["properties"]) == ["dayCount"]
    assert signature.renamed == {"dayCount": "day_count"}

    # The Field the user wrote still has its alias: a model made from it later sees it.
    class Model(pydantic.BaseModel):
        day_count: SHARED_ALIAS = 1

    assert Model.model_validate({"dayCount": 5}).day_count == 5


def test_an_alias_that_names_another_argument_is_refused() -> None:
    pytest.importorskip("pydantic")
    with pytest.raises(TypeError, match="the argument name 'other' is taken already"):
        analyse(clashing, Context)


def test_typing_extensions_doc_is_a_description() -> None:
    if documented is None:
        pytest.skip("typing_extensions without Doc")
    assert analyse(documented, Context).input_schema["properties"]["city"] == {
        "type": "string",
        "description": "The city",
    }
