"""Resources, resource templates, prompts and completion: the `Server` methods that register
them (`CatalogMixin`), the conversion of what their functions return into the wire's results,
and who sees what (`visible_when`, `Viewer`, `CatalogItem`).

A mixin over `ServerBase` rather than part of `_server`, so that this concern reads on its own;
it imports `_base`, not `_server`, so there is no import cycle.
"""

from __future__ import annotations

import base64
import inspect
import os
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from . import _native
from ._base import F, ServerBase, logger, millis
from ._content import InputRequired, Round
from ._context import Context
from ._native import RegistrationError
from ._schema import _field_has_default, _field_info, analyse, converter, parse_docstring


def _not_for(given: dict[str, bool], keys: tuple[str, ...], upstream: str) -> None:
    """A keyword of `mount` that the upstream kind takes no use of is a mistake, not a no-op."""
    for key in keys:
        if given[key]:
            raise TypeError(f"mount: {key}= does not apply to {upstream}")


class Mount:
    """A catalog mounted with `Server.mount`: what it registered here, and the way to take it
    off."""

    def __init__(self, native: _native.NativeMount) -> None:
        self._native = native

    @property
    def prefix(self) -> str:
        return self._native.prefix

    def registered(self) -> list[str]:
        """The names and URIs it registered, as this server's clients see them."""
        return self._native.registered()

    def refresh(self) -> None:
        """Reads the upstream's lists again now (they are read when it says they changed, too).
        Blocks its caller until read."""
        self._native.refresh()

    def unmount(self) -> None:
        """Takes what it registered off this server and ends the connection (calls in flight
        to the upstream finish first). Blocks its caller until then."""
        self._native.unmount()

    def __repr__(self) -> str:
        return f"<Mount {self.prefix!r}>"


@dataclass(frozen=True)
class Viewer:
    """Who a request comes from, as a visibility rule sees it: over HTTP with a
    `token_validator`, the token's `subject`, `scopes` and `tags`; the client's `client_info`
    (`{"name", "version"}`) and the request's `protocol_version`."""

    subject: Optional[str] = None
    scopes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    client_info: Optional[dict[str, Any]] = None
    protocol_version: Optional[str] = None


@dataclass(frozen=True)
class CatalogItem:
    """A tool, resource, resource template or prompt, as a visibility rule sees it. `kind` is
    `"tool"`, `"resource"`, `"resourceTemplate"` or `"prompt"`; `name` a tool's or prompt's
    name, a resource's URI, a template's URI template."""

    kind: str
    name: str
    required_scopes: tuple[str, ...] = ()
    required_tags: tuple[str, ...] = ()


def _requirements(
    definition: dict[str, Any], required_scopes: Optional[Sequence[str]], required_tags: Optional[Sequence[str]]
) -> None:
    """Who may see it, in the definition's own keys (the engine checks them on each request)."""
    for key, given in (("requiredScopes", required_scopes), ("requiredTags", required_tags)):
        if given is None:
            continue
        if isinstance(given, str):
            raise TypeError(f"{key}: give a list of strings, not the string {given!r}")
        definition[key] = list(given)


class ResourceNotFound(Exception):
    """Raise it in a resource function: the client gets JSON-RPC -32002 (resource not found)."""


class CatalogMixin(ServerBase):
    """`Server`'s resources, prompts and completion."""

    def resource(
        self,
        uri: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
        annotations: Optional[dict[str, Any]] = None,
        meta: Optional[dict[str, Any]] = None,
        required_scopes: Optional[Sequence[str]] = None,
        required_tags: Optional[Sequence[str]] = None,
    ) -> Callable[[F], F]:
        """Registers the decorated function (sync or `async def`) as the reader of `uri`.

        A `uri` with `{variables}` (RFC 6570: `{id}` is one path segment, `{+path}` anything) is a
        resource template: the function gets the variables as keyword arguments. A parameter
        named `uri` gets the URI asked for. Return a str (text), bytes (a blob), a dict with
        `text` or `blob`, or a list of those; raise `ResourceNotFound` for a URI that does not
        exist.

        `required_scopes` / `required_tags`: only clients whose token holds every one of them
        see it (listed, read); to the rest it does not exist (see `visible_when`).
        """

        def register(fn: F) -> F:
            self.add_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                annotations=annotations,
                meta=meta,
                required_scopes=required_scopes,
                required_tags=required_tags,
            )
            return fn

        return register

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        mime_type: Optional[str] = None,
        annotations: Optional[dict[str, Any]] = None,
        meta: Optional[dict[str, Any]] = None,
        required_scopes: Optional[Sequence[str]] = None,
        required_tags: Optional[Sequence[str]] = None,
    ) -> None:
        """Registers `fn` as a resource or resource template (see `resource`)."""
        template = "{" in uri
        definition: dict[str, Any] = {"uriTemplate" if template else "uri": uri, "name": name or fn.__name__}
        described = description or _first_paragraph(fn)
        for key, value in (
            ("title", title),
            ("description", described),
            ("mimeType", mime_type),
            ("annotations", annotations),
            ("_meta", meta),
        ):
            if value is not None:
                definition[key] = value
        _requirements(definition, required_scopes, required_tags)
        round_param = _round_parameter(fn)
        context_param = _context_parameter(fn)
        special = (round_param, context_param)
        parameters = {k: p for k, p in inspect.signature(fn).parameters.items() if k not in special}
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())

        def invoke(request: dict[str, Any], native_ctx: Optional[_native.NativeContext] = None) -> Any:
            kwargs = {k: v for k, v in request["variables"].items() if takes_any or k in parameters}
            if "uri" in parameters:
                kwargs["uri"] = request["uri"]
            if round_param:
                kwargs[round_param] = _round_of(request, self._lifespan.value)
            if context_param:
                kwargs[context_param] = Context(native_ctx, self._lifespan)
            try:
                value = self._call(fn, **kwargs)
            except ResourceNotFound as exc:
                return {"notFound": str(exc) or request["uri"]}
            except Exception:
                logger.error("resource %s raised", uri, exc_info=True)
                raise
            if isinstance(value, InputRequired):
                return {"inputRequired": value.to_json()}
            return {"returned": _returned(value)}

        self._native.add_resource(definition, invoke, template)

    def prompt(
        self,
        name: Optional[str] = None,
        *,
        title: Optional[str] = None,
        description: Optional[str] = None,
        meta: Optional[dict[str, Any]] = None,
        arguments: Optional[dict[str, dict[str, str]]] = None,
        required_scopes: Optional[Sequence[str]] = None,
        required_tags: Optional[Sequence[str]] = None,
    ) -> Callable[[F], F]:
        """Registers the decorated function (sync or `async def`) as a prompt.

        Its parameters are the prompt's arguments (strings; required unless they have a
        default), each described by the docstring's `Args:` section or `Annotated[str, "doc"]`;
        `arguments={"city": {"title": "City", "description": "..."}}` gives an argument's
        title and description outright. Return a str (one user message), a list of messages
        (str, content blocks such as `Image`, or `{"role", "content"}` dicts), or a dict with
        `messages`. `required_scopes` / `required_tags`: as for `resource`.
        """

        def register(fn: F) -> F:
            self.add_prompt(
                fn,
                name=name,
                title=title,
                description=description,
                meta=meta,
                arguments=arguments,
                required_scopes=required_scopes,
                required_tags=required_tags,
            )
            return fn

        return register

    def add_prompt(
        self,
        fn: Callable[..., Any],
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        meta: Optional[dict[str, Any]] = None,
        arguments: Optional[dict[str, dict[str, str]]] = None,
        required_scopes: Optional[Sequence[str]] = None,
        required_tags: Optional[Sequence[str]] = None,
    ) -> None:
        """Registers `fn` as a prompt (see `prompt`)."""
        prompt_name = name or fn.__name__
        definition: dict[str, Any] = {"name": prompt_name, "arguments": _prompt_arguments(fn, arguments or {})}
        schema, conversions = _prompt_schema(fn, prompt_name)
        if schema is not None:
            definition["argumentsSchema"] = schema
        described = description or _first_paragraph(fn)
        for key, value in (("title", title), ("description", described), ("_meta", meta)):
            if value is not None:
                definition[key] = value
        _requirements(definition, required_scopes, required_tags)

        round_param = _round_parameter(fn)
        context_param = _context_parameter(fn)
        fills = _prompt_field_defaults(fn)

        def invoke(request: dict[str, Any], native_ctx: Optional[_native.NativeContext] = None) -> Any:
            # Checked by the engine against `argumentsSchema`; here only made the declared type.
            kwargs = {
                key: (conversions[key](value) if key in conversions else value)
                for key, value in request["arguments"].items()
            }
            for param, make in fills.items():
                # A `Field(...)` default: Python would pass the Field itself.
                if param not in kwargs:
                    kwargs[param] = make()
            if round_param:
                kwargs[round_param] = _round_of(request, self._lifespan.value)
            if context_param:
                kwargs[context_param] = Context(native_ctx, self._lifespan)
            try:
                value = self._call(fn, **kwargs)
                if isinstance(value, InputRequired):
                    return {"inputRequired": value.to_json()}
                return {"returned": _returned(value)}
            except Exception:
                logger.error("prompt %s raised", definition["name"], exc_info=True)
                raise

        self._native.add_prompt(definition, invoke)

    def completion(self, *, prompt: Optional[str] = None, template: Optional[str] = None) -> Callable[[F], F]:
        """Registers the decorated `fn(argument, value, context) -> list[str]` (sync or async) as
        the completer of a prompt's arguments or a resource template's variables (`context`:
        the other arguments given so far; a parameter annotated `Context` gets the request's)."""
        if (prompt is None) == (template is None):
            raise ValueError("give exactly one of prompt= and template=")

        def register(fn: F) -> F:
            context_param = _context_parameter(fn)

            def invoke(request: dict[str, Any], native_ctx: Optional[_native.NativeContext] = None) -> Any:
                extra = {context_param: Context(native_ctx, self._lifespan)} if context_param else {}
                values = self._call(fn, request["argument"], request["value"], request["context"], **extra)
                return {"values": [str(v) for v in values]}

            if prompt is not None:
                self._native.set_completer("prompt", prompt, invoke)
            else:
                self._native.set_completer("template", template or "", invoke)
            return fn

        return register

    def remove_resource(self, uri: str) -> bool:
        """Removes a resource or template; False if there was none."""
        return self._native.remove_resource(uri)

    def remove_prompt(self, name: str) -> bool:
        """Removes a prompt; False if there was none."""
        return self._native.remove_prompt(name)

    def notify_resource_updated(self, uri: str) -> None:
        """Tells the clients subscribed to `uri` that it changed."""
        self._native.notify_resource_updated(uri)

    def add_ui_resource(
        self,
        uri: str,
        html: str,
        *,
        name: Optional[str] = None,
        title: Optional[str] = None,
        description: Optional[str] = None,
        csp: Optional[Mapping[str, list[str]]] = None,
        permissions: Optional[Mapping[str, Mapping[str, Any]]] = None,
        domain: Optional[str] = None,
        prefers_border: Optional[bool] = None,
        listed: bool = True,
        required_scopes: Optional[Sequence[str]] = None,
        required_tags: Optional[Sequence[str]] = None,
    ) -> None:
        """Serves an MCP Apps view: the HTML5 document `html` at `uri` (`ui://…`), for tools to
        link to (`@server.tool(ui_resource=uri)`). `csp` (`connectDomains`, `resourceDomains`,
        `frameDomains`, `baseUriDomains`: origins), `permissions` (`camera`, `microphone`,
        `geolocation`, `clipboardWrite`, each `{}`), `domain` and `prefers_border` are its
        `_meta.ui`. `listed=False` keeps it out of `resources/list`; `required_scopes` /
        `required_tags` show and serve it only to clients holding them. Raises `RegistrationError`
        naming what the spec forbids. Removed with `remove_resource(uri)`."""
        ui: dict[str, Any] = {}
        for key, value in (
            ("csp", csp),
            ("permissions", permissions),
            ("domain", domain),
            ("prefersBorder", prefers_border),
        ):
            if value is not None:
                ui[key] = value
        definition: dict[str, Any] = {"uri": uri, "html": html, "ui": ui, "listed": bool(listed)}
        # No name is the engine's default: the URI's last segment.
        for key, value in (("name", name or None), ("title", title), ("description", description)):
            if value is not None:
                definition[key] = value
        _requirements(definition, required_scopes, required_tags)
        self._native.add_ui_resource(definition)

    def add_skill(
        self,
        path: str,
        skill_md: Union[str, bytes],
        files: Optional[Mapping[str, Union[str, bytes]]] = None,
    ) -> None:
        """Serves an Agent Skill (the Skills extension) at `skill://{path}/`: its SKILL.md (YAML
        frontmatter with `name` and `description`, the last segment of `path`) and `files`, by
        path relative to the skill. Raises `RegistrationError` naming what the spec refuses."""
        extra = [(name, _bytes(contents)) for name, contents in (files or {}).items()]
        self._native.add_skill(path, _bytes(skill_md), extra)

    def load_skills(self, root: Union[str, os.PathLike[str]]) -> int:
        """Serves the skills under the directory `root`: every directory holding a SKILL.md is
        a skill at its path relative to `root`. Call it again to serve what changed (sessions
        are told); all or nothing. Returns how many skills it has."""
        return self._native.load_skills(os.fspath(root))

    def watch_skills(self, root: Union[str, os.PathLike[str]], interval: float = 1.0) -> int:
        """`load_skills(root)`, then loads it again whenever its files change, for as long as
        the server lives: a thread of the engine compares the tree's files (paths, sizes,
        modification times) every `interval` seconds. A changed tree that fails to load is
        logged and what was served stays. Returns how many skills the first load found."""
        return self._native.watch_skills(os.fspath(root), millis("interval", interval) or 0)

    def remove_skill(self, path_or_uri: str) -> bool:
        """Stops serving a skill, by its path or its SKILL.md's URI; False if there was none."""
        return self._native.remove_skill(path_or_uri)

    def visible_when(self, rule: Callable[[CatalogItem, Viewer], bool]) -> Callable[[CatalogItem, Viewer], bool]:
        """Decides per request who sees which tools, resources, templates and prompts, beyond
        their `required_scopes` / `required_tags` (use it as a decorator). `rule(item, viewer)`
        is asked for each item the viewer's requirements allowed, once per list (or for the one
        item called, read or rendered); a hidden item is left out of lists and answers as
        unknown. It must return at once (a plain `def`: it runs on the engine's threads for
        token checks); one that raises hides everything it was asked about, and is logged.
        Replaces the rule set before; clients whose view changes get `list_changed`."""
        if inspect.iscoroutinefunction(rule):
            raise TypeError("visible_when takes a plain function (it is asked on every list), not an async def")

        def decide(request: dict[str, Any]) -> dict[str, Any]:
            asked = request["viewer"]
            viewer = Viewer(
                subject=asked.get("subject"),
                scopes=tuple(asked.get("scopes") or ()),
                tags=tuple(asked.get("tags") or ()),
                client_info=asked.get("clientInfo"),
                protocol_version=asked.get("protocolVersion"),
            )
            verdicts = []
            for item in request["items"]:
                shown = CatalogItem(
                    kind=item["kind"],
                    name=item["name"],
                    required_scopes=tuple(item.get("requiredScopes") or ()),
                    required_tags=tuple(item.get("requiredTags") or ()),
                )
                verdict = rule(shown, viewer)
                if inspect.isawaitable(verdict):
                    # A callable object or partial that is async underneath: refused as loudly as
                    # an `async def` (the engine logs it and hides the items).
                    close = getattr(verdict, "close", None)
                    if close is not None:
                        close()
                    raise TypeError("the visible_when rule returned an awaitable: it must be a plain function")
                verdicts.append(verdict is True)
            return {"visible": verdicts}

        self._native.visible_when(decide)
        return rule

    def visibility_changed(self) -> None:
        """What the `visible_when` rule decides from changed (a user's role, a feature flag):
        every session checks again and gets `list_changed` where its view changed."""
        self._native.visibility_changed()

    def tool_search(
        self,
        *,
        pinned: Iterable[str] = (),
        max_results: int = 5,
        search_tool_name: str = "search_tools",
        call_tool_name: str = "call_tool",
        enabled: bool = True,
    ) -> None:
        """Offers the tools through a search, for catalogs too large to list whole:
        `tools/list` shows the `pinned` tools and two of the engine's own, `search_tools`
        (ranked full-text search over names, titles, descriptions and arguments: BM25F) and
        `call_tool` (calls a tool by name). Every tool stays callable by its own name; a search
        finds only what the client may see (`visible_when`, required scopes and tags); a call
        through `call_tool` is the named tool's call for middleware and limits. A search
        returns at most `max_results` tools (1 to 50). `enabled=False` lists every tool
        again. Raises `RegistrationError` when a tool already has one of the two names."""
        if not enabled:
            self._native.tool_search(None)
            return
        if isinstance(pinned, str):
            raise TypeError("pinned takes tool names (a list), not one string")
        if isinstance(max_results, bool) or not isinstance(max_results, int):
            raise TypeError(f"max_results must be an int, not {type(max_results).__name__}")
        self._native.tool_search(
            {
                "pinned": list(pinned),
                "maxResults": max_results,
                "searchToolName": search_tool_name,
                "callToolName": call_tool_name,
            }
        )

    def mount(
        self,
        prefix: str,
        server: Optional[ServerBase] = None,
        *,
        command: Union[str, Sequence[str], None] = None,
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        url: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        protocol_version: Optional[str] = None,
    ) -> Mount:
        """Mounts another server's tools, resources, templates and prompts under `prefix`:
        `server` (a `Server` in this process; its `async def` code runs on a loop of its own
        unless it serves on one), a server to spawn and speak to over stdio (`command`: the
        program, or a list of the program and its arguments; plus `args`, `env` set on top of
        this process's, `cwd`), or a Streamable HTTP server (`url`, `http://` or `https://`,
        the certificate checked against `SSL_CERT_FILE`/`SSL_CERT_DIR` or the system's roots;
        `headers` sent with every request). Names become
        `{prefix}_{name}` and URIs `scheme://{prefix}/rest`. A call is forwarded with its
        progress and cancellation, and what the upstream asks during it (elicitation,
        sampling, roots) is asked of this server's client; this server's middleware, limits and
        visibility apply. When the upstream's lists change, this server's clients are told.
        An upstream that goes away fails the calls in flight with an error naming it, and the
        next call connects again. `protocol_version` is the version asked of the upstream
        (default 2026-07-28, falling back to `initialize` for a server of the handshake era);
        give `"2025-11-25"` for an upstream whose tools ask questions as requests, which
        2026-07-28 has no channel for. Connects before it returns, blocking its caller (from a
        coroutine: `await asyncio.to_thread(server.mount, ...)`); raises `TransportError` if it
        cannot. Names already taken here are skipped, with a warning in the logs."""
        given = {"args": bool(args), "env": env is not None, "cwd": cwd is not None, "headers": headers is not None}
        if server is not None:
            if command is not None or url is not None:
                raise TypeError("mount takes a server, or command=, or url=: one of them")
            native = getattr(server, "_native", None)
            if not isinstance(native, _native.NativeServer):
                raise TypeError(f"mount takes a toolwire Server, not {type(server).__name__}")
            _not_for(given, ("args", "env", "cwd", "headers"), "a server in this process")
            loop = getattr(server, "_loop", None)
            if loop is None or loop.is_closed():
                # Its tools, resources, prompts and lifespan on one loop of its own, whatever
                # loop this server later serves on.
                server._bind_loop(private=True)  # type: ignore[attr-defined]
            return Mount(self._native.mount(prefix, native, None, protocol_version))
        if (command is None) == (url is None):
            raise TypeError("mount needs a server, command= or url=: one of them")
        _not_for(
            given,
            ("headers",) if command is not None else ("args", "env", "cwd"),
            "command=" if command is not None else "url=",
        )
        settings: dict[str, Any]
        if command is not None:
            if isinstance(command, str):
                program, given = command, list(args)
            else:
                parts = list(command)
                if not parts:
                    raise ValueError("command= is empty")
                program, given = parts[0], parts[1:] + list(args)
            settings = {"command": program, "args": given, "env": dict(env or {})}
            if cwd is not None:
                settings["cwd"] = os.fspath(cwd)
        else:
            settings = {"url": url, "headers": dict(headers or {})}
        return Mount(self._native.mount(prefix, None, settings, protocol_version))

    def declare_extension(self, id: str, settings: Optional[Mapping[str, Any]] = None) -> None:
        """Declares an extension this server serves: `capabilities.extensions[id]` in
        `initialize` and `server/discover`. A tool reads what the client declared with
        `ctx.client_extension(id)`."""
        self._native.declare_extension(id, dict(settings or {}))

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Runs `fn` on this (engine) thread; a coroutine runs on the serving loop meanwhile."""
        result = fn(*args, **kwargs)
        if inspect.isawaitable(result):
            import asyncio

            loop = self._handler_loop()
            return asyncio.run_coroutine_threadsafe(_awaited(result), loop).result()
        return result


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _bytes(contents: Union[str, bytes]) -> bytes:
    return contents.encode() if isinstance(contents, str) else bytes(contents)


def _round_parameter(fn: Callable[..., Any]) -> Optional[str]:
    """The parameter annotated `Round`, if any (it is not a prompt argument)."""
    try:
        hints = typing.get_type_hints(fn)
    except NameError:
        hints = {}
    return next((name for name, hint in hints.items() if hint is Round), None)


def _context_parameter(fn: Callable[..., Any]) -> Optional[str]:
    """The parameter annotated `Context`, if any: it gets the request's context, as a tool's."""
    try:
        hints = typing.get_type_hints(fn)
    except NameError:
        hints = {}
    return next(
        (name for name, hint in hints.items() if isinstance(hint, type) and issubclass(hint, Context)),
        None,
    )


def _round_of(request: dict[str, Any], lifespan_context: Any) -> Round:
    return Round(request.get("inputResponses") or {}, request.get("requestState"), lifespan_context)


def _first_paragraph(fn: Callable[..., Any]) -> Optional[str]:
    doc = inspect.getdoc(fn)
    return doc.split("\n\n")[0].strip() if doc else None


def _prompt_arguments(fn: Callable[..., Any], given: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """A prompt function's parameters as the wire's `arguments`: name, required, and a title and
    description from `given`, else a description from the docstring or `Annotated`."""
    _, docs = parse_docstring(inspect.getdoc(fn))
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError:
        hints = {}
    special = (_round_parameter(fn), _context_parameter(fn))
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY) and p.name not in special
    ]
    unknown = set(given) - {p.name for p in params}
    if unknown:
        raise RegistrationError(f"arguments= names no parameter of {fn.__name__}: {', '.join(sorted(unknown))}")
    result = []
    for p in params:
        entry: dict[str, Any] = {"name": p.name}
        extra = given.get(p.name, {})
        field = _prompt_field(p, hints.get(p.name))
        if field is not None and (field.alias or field.validation_alias):
            raise RegistrationError(f"prompt argument {p.name!r} of {fn.__name__}: an alias cannot rename it")
        title = extra.get("title") or (field.title if field is not None else None)
        if title:
            entry["title"] = title
        described = (
            extra.get("description")
            or docs.get(p.name)
            or _annotated_doc(hints.get(p.name))
            or (field.description if field is not None else None)
        )
        if described:
            entry["description"] = described
        if _field_info(p.default) is not None:
            entry["required"] = not _field_has_default(p.default)
        else:
            entry["required"] = p.default is inspect.Parameter.empty
        result.append(entry)
    return result


def _prompt_schema(
    fn: Callable[..., Any], prompt: str
) -> tuple[Optional[dict[str, Any]], dict[str, Callable[[Any], Any]]]:
    """The JSON Schema the engine checks a prompt's arguments against (from the annotations:
    `Literal`, `Enum`, pydantic `Field(min_length=…, pattern=…)`, `annotated_types`; an enum
    also completes its argument), and per argument the conversion to its declared type. Prompt
    arguments are strings on the wire: another type is refused here, naming the parameter."""
    try:
        signature = analyse(fn, (Context, Round))
    except TypeError as err:
        raise RegistrationError(f"prompt {prompt!r}: {err}") from err
    schema = signature.input_schema
    for argument, property_schema in schema.get("properties", {}).items():
        if not _string_schema(property_schema, schema):
            raise RegistrationError(
                f"prompt {prompt!r}: argument {argument!r} is annotated {signature.params[argument]!r}, "
                "but prompt arguments are strings (annotate it str, a Literal of strings or a str Enum)"
            )
    conversions = {
        argument: convert for argument, tp in signature.params.items() if (convert := converter(tp)) is not None
    }
    checked = any(set(p) - {"description", "title", "default", "type"} for p in schema.get("properties", {}).values())
    return (schema if checked else None), conversions


def _string_schema(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """Whether every value `schema` allows is a string (or null, for an Optional argument)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _string_schema(root.get("$defs", {}).get(name, {}), root)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return all(_string_schema(option, root) for option in options)
    if "enum" in schema:
        return all(isinstance(value, str) for value in schema["enum"])
    if "const" in schema:
        return isinstance(schema["const"], str)
    kind = schema.get("type")
    return kind in (None, "string", "null") or (isinstance(kind, list) and set(kind) <= {"string", "null"})


def _prompt_field(param: inspect.Parameter, hint: Any) -> Any:
    """The pydantic `Field(...)` of a prompt parameter: its default, or in its `Annotated`."""
    if _field_info(param.default) is not None:
        return param.default
    if typing.get_origin(hint) is typing.Annotated:
        return next(filter(None, map(_field_info, typing.get_args(hint)[1:])), None)
    return None


def _prompt_field_defaults(fn: Callable[..., Any]) -> dict[str, Callable[[], Any]]:
    """Parameters whose default is a `Field(...)` with a value: a fresh one for each render."""
    return {
        p.name: (lambda field=p.default: field.get_default(call_default_factory=True))
        for p in inspect.signature(fn).parameters.values()
        if _field_info(p.default) is not None and _field_has_default(p.default)
    }


def _annotated_doc(hint: Any) -> Optional[str]:
    if typing.get_origin(hint) is typing.Annotated:
        return next((a for a in typing.get_args(hint)[1:] if isinstance(a, str)), None)
    return None


def _returned(value: Any) -> Any:
    """A resource or prompt function's return value as the JSON the engine reads by its one rule
    (core's `ResourceContents::from_returned` and `PromptResult::from_returned`, the same in
    every language): only what JSON cannot say is converted here. Bytes become
    `{"blob": base64}` (as a `blob` value, its base64), content blocks such as `Image` their
    JSON; lists, messages and their `content` are looked into."""
    if isinstance(value, (list, tuple)):
        return [_returned(item) for item in value]
    if isinstance(value, dict):
        converted = dict(value)
        if isinstance(converted.get("blob"), (bytes, bytearray, memoryview)):
            converted["blob"] = _base64(converted["blob"])
        if "content" in converted:
            converted["content"] = _returned(converted["content"])
        if isinstance(converted.get("messages"), (list, tuple)):
            converted["messages"] = _returned(converted["messages"])
        return converted
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"blob": _base64(value)}
    if hasattr(value, "to_json"):
        return value.to_json()
    return value


def _base64(data: bytes | bytearray | memoryview) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")
