"""ToolRegistry: routes tool names to the highest-priority provider and executes calls safely.

``execute`` never raises for bad calls: an unknown tool, input that does not match the tool's
params (``spec.params``; for tools without them, MCP and custom ones, its JSON schema), or an
exception inside the tool all become ``ToolResult.error`` texts the model can act on. Only
cancellation propagates, so Stop works.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.tools.base import Tool, ToolContext, ToolResult, ToolSpec
from app.core.tools.params.problems import ParamsError
from app.core.tools.providers.base import ToolProvider

if TYPE_CHECKING:  # jsonschema costs ~70 ms to import: loaded on first validation instead
    from jsonschema import Draft202012Validator

log = logging.getLogger(__name__)

_MAX_ERRORS_REPORTED = 5


@dataclass(frozen=True)
class RegisteredTool:
    tool: Tool
    provider: ToolProvider

    @property
    def spec(self) -> ToolSpec:
        return self.tool.spec


class ToolRegistry:
    def __init__(self, providers: Iterable[ToolProvider] = ()) -> None:
        self._providers: list[ToolProvider] = []
        self._routes: dict[str, RegisteredTool] = {}
        self._validators: dict[int, Any] = {}
        # Bumped whenever routes change, so caches keyed on tools (permissions) can tell.
        self.generation = 0
        for provider in providers:
            self.register_provider(provider)

    # -- providers -------------------------------------------------------------------------

    def register_provider(self, provider: ToolProvider) -> None:
        self._providers = [p for p in self._providers if p.id != provider.id]
        self._providers.append(provider)
        self.refresh()

    def unregister_provider(self, provider_id: str) -> None:
        self._providers = [p for p in self._providers if p.id != provider_id]
        self.refresh()

    def providers(self) -> list[ToolProvider]:
        return sorted(self._providers, key=lambda p: p.priority, reverse=True)

    def refresh(self) -> None:
        """Rebuild name → tool routes; call after a provider's tool list changed."""
        routes: dict[str, RegisteredTool] = {}
        # Ascending priority, so a later (higher) provider overwrites a lower one's name.
        for provider in sorted(self._providers, key=lambda p: p.priority):
            try:
                if not provider.is_available():
                    continue
                tools = provider.tools()
            except Exception:  # a broken provider must not take the others down
                log.exception("tool provider %s failed to list its tools", provider.id)
                continue
            for tool in tools:
                routes[tool.spec.name] = RegisteredTool(tool, provider)
        self._routes = routes
        self._validators.clear()
        self.generation += 1

    # -- lookup ----------------------------------------------------------------------------

    def get(self, name: str) -> Tool | None:
        entry = self._routes.get(name)
        return entry.tool if entry else None

    def provider_of(self, name: str) -> ToolProvider | None:
        entry = self._routes.get(name)
        return entry.provider if entry else None

    def specs(self) -> list[ToolSpec]:
        return [entry.spec for entry in self._routes.values()]

    def names(self) -> list[str]:
        return list(self._routes)

    def definitions_for(self, enabled_names: Iterable[str]) -> list[dict[str, Any]]:
        """Anthropic tool definitions for the enabled names that exist, in the given order."""
        out = []
        for name in enabled_names:
            entry = self._routes.get(name)
            if entry is not None:
                out.append(entry.spec.definition())
        return out

    # -- execution -------------------------------------------------------------------------

    def validate(self, name: str, tool_input: Any) -> str | None:
        """Return an error text the model can act on, or None when the input is valid."""
        entry = self._routes.get(name)
        if entry is None:
            return self._unknown_tool_message(name)
        if not isinstance(tool_input, Mapping):
            return (f"Invalid input for {name}: expected a JSON object, got "
                    f"{type(tool_input).__name__}. Call the tool again with an object matching "
                    "its input_schema.")
        params = entry.spec.params
        if params is not None:  # the tool's typed model is its one validation (no jsonschema)
            try:
                params.parse(tool_input)
            except ParamsError as problem:
                return problem.message_for(name)
            return None
        validator = self._validator_for(entry.spec)
        if validator is None:
            return None
        errors = sorted(validator.iter_errors(tool_input), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        lines = []
        for err in errors[:_MAX_ERRORS_REPORTED]:
            where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
            lines.append(f"- {where}: {err.message}")
        more = len(errors) - _MAX_ERRORS_REPORTED
        if more > 0:
            lines.append(f"- … and {more} more")
        required = entry.spec.input_schema.get("required", [])
        props = ", ".join(entry.spec.input_schema.get("properties", {}))
        return (f"Invalid input for {name}:\n" + "\n".join(lines) +
                f"\nExpected properties: {props or '(none)'}; required: "
                f"{', '.join(required) or '(none)'}. Fix the input and call the tool again.")

    async def execute(self, name: str, tool_input: Any, ctx: ToolContext, *,
                      validated: Tool | None = None) -> ToolResult:
        """Run the call. ``validated``: the tool the caller already validated ``tool_input``
        for (``validate``); while ``name`` still routes to that tool, it is not checked again."""
        entry = self._routes.get(name)
        if entry is None or validated is None or entry.tool is not validated:
            problem = self.validate(name, tool_input)
            if problem is not None:
                return ToolResult.error(problem)
        tool = self._routes[name].tool
        try:
            # object: a third-party tool may return anything (checked below)
            result: object = await tool.execute(dict(tool_input), ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must reach the model as an error, not a crash
            log.exception("tool %s raised", name)
            return ToolResult.error(f"{name} failed with an internal error: "
                                    f"{type(exc).__name__}: {exc}")
        if not isinstance(result, ToolResult):
            return ToolResult.error(f"{name} returned no result (internal error).")
        return result

    async def aclose(self) -> None:
        """Release what tools hold open (HTTP clients, background jobs) at shutdown."""
        for entry in self._routes.values():
            close = getattr(entry.tool, "aclose", None)
            if close is None:
                continue
            try:
                await close()
            except Exception:
                log.exception("closing tool %s failed", entry.spec.name)

    def _validator_for(self, spec: ToolSpec) -> Draft202012Validator | None:
        key = id(spec)
        validator = self._validators.get(key)
        if validator is None:
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import SchemaError

            try:
                Draft202012Validator.check_schema(spec.input_schema)
            except SchemaError:
                log.warning("tool %s has an invalid input schema; input not validated", spec.name)
                return None
            validator = Draft202012Validator(spec.input_schema)
            self._validators[key] = validator
        return validator

    def _unknown_tool_message(self, name: str) -> str:
        available = ", ".join(sorted(self._routes)) or "(none)"
        return f"Unknown tool: {name!r}. Available tools: {available}."
