"""Offering a capability lift (app.core.tools.capability_lift) for a refused call, and keeping
it when the person asks to.

A lift is offered only when it works: the refusal check, run again on a context built from the
lifted configuration, lets the call through. So approving it never runs a call the lifted
configuration would still refuse, and nothing wider than the proposal is ever granted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from app.core.store.profiles import ProfileRepository, ToolSetting
from app.core.tools.base import ToolContext, ToolSpec
from app.core.tools.capability_lift import CapabilityLift

__all__ = ["keep_lift", "lifted_settings", "working_lift"]

log = logging.getLogger(__name__)

ContextFor = Callable[[Mapping[str, ToolSetting]], ToolContext]
"""Builds the call's ToolContext from (possibly lifted) tool settings."""


def lifted_settings(settings: Mapping[str, ToolSetting], tool_name: str,
                    lift: CapabilityLift) -> dict[str, ToolSetting]:
    """``settings`` with ``lift`` applied to ``tool_name``'s configuration."""
    current = settings.get(tool_name, ToolSetting(tool_name, enabled=True))
    lifted = {**settings}
    lifted[tool_name] = replace(current, config={**current.config, lift.key: list(lift.value)})
    return lifted


def working_lift(spec: ToolSpec, tool_input: Mapping[str, Any], ctx: ToolContext,
                 refusal: str, settings: Mapping[str, ToolSetting],
                 context_for: ContextFor) -> tuple[CapabilityLift, ToolContext] | None:
    """The tool's proposed lift and the context it gives the call, when under it the call is
    no longer refused; None otherwise. Blocking (a command's check parses it)."""
    propose, check = spec.capability_lift, spec.capability_refusal
    if propose is None or check is None:
        return None
    try:
        lift = propose(tool_input, ctx)
        if lift is None:
            return None
        lifted_ctx = context_for(lifted_settings(settings, spec.name, lift))
        if check(tool_input, lifted_ctx) is not None:
            return None
    except Exception:  # a broken proposal is no proposal: the refusal stands
        log.exception("capability lift of %s failed", spec.name)
        return None
    return replace(lift, refusal=refusal), lifted_ctx


def keep_lift(profiles: ProfileRepository, profile_id: int, tool_name: str,
              lift: CapabilityLift) -> None:
    """Save the lift in the profile's configuration of the tool: what it adds, joined to the
    stored list (the person may have changed the configuration since the run started)."""
    stored = profiles.tool_settings(profile_id)
    current = stored.get(tool_name, ToolSetting(tool_name, enabled=True))
    before = current.config.get(lift.key)
    kept = [str(v) for v in before] if isinstance(before, list) else []
    merged = replace(lift, value=(*kept, *(v for v in lift.value if v not in kept)))
    profiles.set_tool(profile_id, lifted_settings(stored, tool_name, merged)[tool_name])
