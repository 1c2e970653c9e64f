"""Which protocol revision a session speaks, and what revision 2026-07-28 changes for a call.

Tebiki negotiates the newest revision both sides speak: it probes ``server/discover`` at the
newest revision the SDK implements and falls back to the ``initialize`` handshake (2025-11-25
and older) for any server that does not answer it as a modern server (the SDK's
``negotiate_auto``). Roots, sampling, elicitation and logging keep working on the older
revisions exactly as before.

On 2026-07-28 a server asks the client back inside a call's result (``input_required``, the
multi-round-trip requests): ``tools/call``, ``resources/read`` and ``prompts/get`` may answer
with input requests and an opaque state instead of their result. ``with_input`` fulfils them
through the session's own callbacks, the same sampling, elicitation and roots handlers that
answer the older revisions' standalone requests (so the same dialogs ask the person), and
sends the request again with the answers until the real result comes back.

``ping`` no longer exists on 2026-07-28; ``still_answering`` asks ``server/discover`` instead.
The Tasks extension (``mcp.task_follow``) is declared by the session itself
(``mcp.checked_session``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

log = logging.getLogger(__name__)

# Bounds the rounds of one request, so a server that keeps asking cannot hold a call for ever.
MAX_INPUT_ROUNDS = 10
MODERN_REVISION = "2026-07-28"


async def negotiate(session: Any) -> None:
    """Settle the session's revision: ``server/discover`` first, ``initialize`` as fallback."""
    from mcp.client._probe import negotiate_auto

    await negotiate_auto(session)


def speaks_modern(session: Any) -> bool:
    """Whether the session adopted a revision of the stateless (2026-07-28 and later) era."""
    return getattr(session, "discover_result", None) is not None


def protocol_version(session: Any) -> str:
    return str(getattr(session, "protocol_version", None) or "")


# The request sent again with the answers: (input responses, request state) → its result.
Resend = Callable[[Any, "str | None"], Awaitable[Any]]


async def with_input(session: Any, first: Any, resend: Resend) -> Any:
    """``first`` when it is a result; when it is ``input_required``, the result that comes
    back once the server's input requests are answered through the session's callbacks.
    A refused request raises the SDK's MCPError, rounds past the bound a RuntimeError."""
    import mcp_types as types
    from mcp.client._input_required import run_input_required_driver
    from mcp.client.context import ClientRequestContext

    if not isinstance(first, types.InputRequiredResult):
        return first

    async def dispatch(key: str, request: Any) -> Any:
        meta = request.params.meta if request.params is not None else None
        ctx = ClientRequestContext(session=session, request_id=key, meta=meta)
        return await session.dispatch_input_request(ctx, request)

    return await run_input_required_driver(first, dispatch=dispatch, retry=resend,
                                           max_rounds=MAX_INPUT_ROUNDS)


async def still_answering(session: Any, timeout_s: float, server: str) -> Exception | None:
    """A liveness check the server's revision knows: ``ping`` before 2026-07-28,
    ``server/discover`` after. None when it answered, or is only slow (a server busy with a
    long call may answer late, and tearing the session down would kill that call); the
    failure when it refused (session unknown, connection closed)."""
    try:
        with anyio.fail_after(timeout_s):
            if speaks_modern(session):
                await session.send_discover(protocol_version(session))
            else:
                await session.send_ping()
    except TimeoutError:
        log.debug("MCP server %s: no answer to a liveness check yet", server)
    except Exception as exc:
        return exc
    return None
