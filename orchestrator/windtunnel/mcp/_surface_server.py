"""What an SDK server shows besides tool answers: identity, resources, prompts, completions.

`_sdk_server.build_sdk_server` builds the server; this module adds to it what a `ServedSurface`
holds (issue 25, docs/serving.md "The recorded surface"):

- the identity: with a recorded `server` section, `initialize` answers with its `serverInfo`,
  `capabilities` and `instructions` exactly as recorded (a middleware replaces the SDK's own
  after the SDK negotiated the version), `server/discover` with its capabilities and
  instructions, and 2026-07-28 results are stamped with its identity (the SDK's `Server` is made
  with its name, version, title, ...). Without one, the SDK's answers stand (today's);
- `resources/list`, `resources/templates/list` and `prompts/list` list what was recorded;
- `resources/read`, `prompts/get` and `completion/complete` are answered by `request` (a replay
  or a mock): a divergent answer is the JSON-RPC error the spec prescribes: `resources/read`
  -32002 "Resource not found" (-32602 from 2026-07-28, which retired -32002), `prompts/get`
  -32602, `completion/complete` -32602 (an empty completion would pass for a real answer),
  unless the universe's miss policy for the method answered an empty result instead;
- `logging/setLevel` and `resources/subscribe` / `unsubscribe` are acknowledged when the
  recorded capabilities declare logging / resource subscriptions.

Listed objects and answers go to the SDK as its models, so its per-version surface applies to
them as to any SDK server's.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from typing import Any, TypeVar

import mcp_types as types
import pydantic
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from .. import trace_context
from ..calls import MCPCall
from ..errors import ServerError
from ..surface_matching import completion_target
from ..universe import ServerSurface
from ._sdk_internals import MODERN_PROTOCOL_VERSIONS
from ._shapes import Request, ServedSurface

__all__ = [
    "RESOURCE_NOT_FOUND",
    "Request",
    "ServedSurface",
    "identity_kwargs",
    "install_surface",
]

_Result = TypeVar("_Result", bound=pydantic.BaseModel)

RESOURCE_NOT_FOUND = -32002
"""`resources/read` of an unknown resource, up to protocol 2025-11-25."""


def identity_kwargs(server: ServerSurface | None) -> dict[str, Any]:
    """The SDK `Server`'s identity arguments for a recorded `serverInfo` (what it stamps on
    2026-07-28 results); fields the SDK cannot represent are left to the `initialize` answer."""
    if server is None or server.info is None:
        return {}
    info = server.info
    kwargs: dict[str, Any] = {"name": info["name"], "version": info["version"]}
    for key, argument in (("title", "title"), ("description", "description")):
        if isinstance(info.get(key), str):
            kwargs[argument] = info[key]
    if isinstance(info.get("websiteUrl"), str):
        kwargs["website_url"] = info["websiteUrl"]
    if isinstance(info.get("icons"), list):
        # Icons the SDK cannot represent are still shown in `initialize`, as recorded.
        with contextlib.suppress(pydantic.ValidationError):
            kwargs["icons"] = [types.Icon.model_validate(icon) for icon in info["icons"]]
    if server.instructions is not None:
        kwargs["instructions"] = server.instructions
    return kwargs


def _models(model: type[pydantic.BaseModel], entries: list[dict[str, Any]], what: str) -> Any:
    try:
        return [model.model_validate(entry) for entry in entries]
    except pydantic.ValidationError as exc:
        raise ServerError(f"a recorded {what} is not a valid MCP {model.__name__}: {exc}") from None


def install_surface(server: Server[Any], surface: ServedSurface, request: Request) -> None:
    """Add `surface`'s handlers (and, with a recorded identity, its middleware) to `server`."""
    capabilities = surface.capabilities()
    if surface.serves_resources():
        _install_resources(server, surface, request)
    if surface.serves_prompts():
        _install_prompts(server, surface, request)
    if "completions" in capabilities or "completion/complete" in surface.requests:
        _install_completions(server, request)
    if "logging" in capabilities:
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _acknowledge)
    if surface.server is not None:
        server.middleware.append(_IdentityMiddleware(surface.server))


async def _acknowledge(ctx: ServerRequestContext[Any], params: Any) -> types.EmptyResult:
    return types.EmptyResult()


def _raw(ctx: ServerRequestContext[Any]) -> Mapping[str, Any]:
    """The request's params as sent (the SDK's models would re-shape them)."""
    params = ctx.params
    return params if params is not None else {}


def _refused(call: MCPCall) -> bool:
    """A divergent request answered with its method's JSON-RPC error (policy `fail_call`); one
    a miss policy answered otherwise (`empty`) is sent as that answer."""
    return call.divergence is not None and call.is_error


def _answered(model: type[_Result], call: MCPCall) -> _Result:
    """The answer of a request that did not diverge; a mock's failing function, or an answer
    that is not the method's result, is an internal error (never a traceback on the wire)."""
    if not call.is_error:
        try:
            return model.model_validate(call.result)
        except pydantic.ValidationError:
            pass
    message = call.result.get("message") if isinstance(call.result, dict) else None
    raise MCPError(code=INTERNAL_ERROR, message=f"{call.method} failed: {message or 'no answer'}")


def _install_resources(server: Server[Any], surface: ServedSurface, request: Request) -> None:
    listed = types.ListResourcesResult(
        resources=_models(types.Resource, surface.resources, "resource")
    )
    templates = types.ListResourceTemplatesResult(
        resource_templates=_models(
            types.ResourceTemplate, surface.resource_templates, "resource template"
        )
    )

    async def on_list(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        return listed

    async def on_list_templates(
        ctx: ServerRequestContext[Any], params: Any
    ) -> types.ListResourceTemplatesResult:
        return templates

    async def on_read(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(_raw(ctx).get("uri", params.uri))
        call = await _answer(ctx, request, "resources/read", uri, {})
        if _refused(call):
            modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            raise MCPError(
                code=INVALID_PARAMS if modern else RESOURCE_NOT_FOUND,
                message="Resource not found",
                data={"uri": uri},
            )
        return _answered(types.ReadResourceResult, call)

    server.add_request_handler("resources/list", types.PaginatedRequestParams, on_list)
    server.add_request_handler(
        "resources/templates/list", types.PaginatedRequestParams, on_list_templates
    )
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, on_read)
    resources = surface.capabilities().get("resources")
    if isinstance(resources, Mapping) and resources.get("subscribe") is True:
        server.add_request_handler(
            "resources/subscribe", types.SubscribeRequestParams, _acknowledge
        )
        server.add_request_handler(
            "resources/unsubscribe", types.UnsubscribeRequestParams, _acknowledge
        )


async def _answer(
    ctx: ServerRequestContext[Any], request: Request, method: str, target: str, args: dict[str, Any]
) -> MCPCall:
    """`request`'s answer, with the request's trace context noted for an OpenTelemetry export
    (`trace_context`: `_meta.traceparent`, else the HTTP header)."""
    if not trace_context.capturing:
        return await request(method, target, args)
    header = trace_context.header_of(ctx.request)
    with trace_context.carried_by(_raw(ctx).get("_meta"), header):
        call = await request(method, target, args)
        trace_context.note(call)
    return call


def _install_prompts(server: Server[Any], surface: ServedSurface, request: Request) -> None:
    listed = types.ListPromptsResult(prompts=_models(types.Prompt, surface.prompts, "prompt"))

    async def on_list(ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
        return listed

    async def on_get(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        arguments = _raw(ctx).get("arguments")
        call = await _answer(ctx, request, "prompts/get", params.name, dict(arguments or {}))
        if _refused(call):
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"No recorded prompt {params.name!r} with these arguments",
            )
        return _answered(types.GetPromptResult, call)

    server.add_request_handler("prompts/list", types.PaginatedRequestParams, on_list)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, on_get)


def _install_completions(server: Server[Any], request: Request) -> None:
    async def on_complete(
        ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        raw = _raw(ctx)
        args = {key: raw[key] for key in ("ref", "argument", "context") if key in raw}
        ref = args.get("ref")
        target = completion_target(ref) if isinstance(ref, dict) else ""
        call = await _answer(ctx, request, "completion/complete", target, args)
        if _refused(call):
            raise MCPError(code=INVALID_PARAMS, message=f"No recorded completion for {target!r}")
        return _answered(types.CompleteResult, call)

    server.add_request_handler("completion/complete", types.CompleteRequestParams, on_complete)


class _IdentityMiddleware:
    """Shows the recorded identity: `initialize` keeps the SDK's negotiated version and takes
    the recorded `serverInfo`, `capabilities` and `instructions` as they are; `server/discover`
    takes the recorded capabilities and instructions."""

    def __init__(self, server: ServerSurface) -> None:
        self._server = server

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: Any) -> Any:
        result = await call_next(ctx)
        method = ctx.method
        if method != "initialize" and method != "server/discover":
            return result
        if not isinstance(result, dict):
            return result
        recorded = self._server
        shown = dict(result)
        if method == "initialize" and recorded.info is not None:
            shown["serverInfo"] = copy.deepcopy(recorded.info)
        if recorded.capabilities is not None:
            shown["capabilities"] = copy.deepcopy(recorded.capabilities)
        if recorded.instructions is not None:
            shown["instructions"] = recorded.instructions
        else:
            shown.pop("instructions", None)
        return shown
