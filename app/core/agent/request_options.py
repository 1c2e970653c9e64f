"""The model-request options an agent profile sets beyond model, tokens and temperature
(reasoning and prompt caching), made safe to send: a value the API would not take falls back
to the request's default, so a bad setting never fails a run."""

from __future__ import annotations

from typing import Any

from app.core.agent.models import CACHE_TTLS, EFFORTS, THINKING_DISPLAYS, THINKING_MODES
from app.core.store.profiles import AgentProfile


def request_options(profile: AgentProfile) -> dict[str, Any]:
    """The model-request options a profile sets beyond model, tokens and temperature:
    ``thinking`` ("off" | "adaptive"), ``thinking_display``, ``effort`` (None or "low" …
    "max"), ``cache`` and ``cache_ttl`` ("5m" | "1h"), as ``ModelRequest`` keyword arguments.

    Read with ``getattr``: a profile (or a store version) without the attribute gets the
    request's default, and a value the API would not take is replaced by the default, so a
    bad setting never fails a run."""
    thinking = getattr(profile, "thinking", "off")
    display = getattr(profile, "thinking_display", None)
    effort = getattr(profile, "effort", None)
    ttl = getattr(profile, "cache_ttl", "5m")
    return {
        "thinking": thinking if thinking in THINKING_MODES else "off",
        "thinking_display": display if display in THINKING_DISPLAYS else None,
        "effort": effort if effort in EFFORTS else None,
        "cache": bool(getattr(profile, "prompt_cache", True)),
        "cache_ttl": ttl if ttl in CACHE_TTLS else "5m",
    }
