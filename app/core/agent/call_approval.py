"""Asking the person about one tool call, for the call runner: the tool's preview (a diff for
file writes), the approval request awaited from the approver (the UI's dialog), and the rules
the person chose to remember with their answer."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable, Mapping
from typing import Any

from app.core.agent.events import (
    ApprovalRequest,
    ApprovalResponse,
    Approver,
    AwaitingApproval,
    EventSink,
)
from app.core.agent.models import ToolCall
from app.core.outcomes import Outcome
from app.core.permissions.repository import RuleRepository
from app.core.permissions.rules import PermissionRule
from app.core.permissions.service import Decision
from app.core.review import QuorumResult
from app.core.tools.base import Tool, ToolContext, ToolSpec
from app.core.tools.capability_lift import CapabilityLift

log = logging.getLogger(__name__)

PREVIEW_TIMEOUT_S = 10.0

STOPPED_BEFORE_APPROVAL = ("The user stopped the run before approving this tool call, so it was "
                           "not run.")


def declined_message(reason: str) -> str:
    reason = reason.strip()
    if reason:
        return f"The user declined this tool call. Reason: {reason}"
    return "The user declined this tool call. No reason was given; ask the user how to proceed."


class CallApproval:
    """The person's side of a call that asks: ``approver`` answers the request (replaceable,
    e.g. by a different dialog), the rules they remember go to ``rules``, and ``emit`` is told
    that a call awaits approval.

    A sub-agent's (``agent_chain`` not empty): its requests name the chain, its lifts are for
    one call only (never kept in the profile), and the rules its person chose to remember go to
    ``scoped_rules`` (that child's conversation only), never to the rules table."""

    def __init__(self, approver: Approver, rules: RuleRepository, emit: EventSink,
                 keep_lift: Callable[[str, CapabilityLift], object] | None = None, *,
                 agent_chain: tuple[str, ...] = (),
                 scoped_rules: Callable[[tuple[PermissionRule, ...]], None] | None = None
                 ) -> None:
        self.approver = approver
        self._agent_chain = agent_chain
        self._scoped_rules = scoped_rules
        self._rules = rules
        self._emit = emit
        self._keep_lift = keep_lift

    async def ask_person(self, call: ToolCall, spec: ToolSpec, server_id: str,
                         decision: Decision, preview: str | None,
                         reviewed: QuorumResult | None, finish: Callable[..., None],
                         position: tuple[int, int] | None = None,
                         lift: CapabilityLift | None = None) -> bool:
        """The approval dialog; False (the call answered through ``finish``) unless the
        person approved. ``lift``: the configuration change approving runs the call with (kept
        in the profile when the person ticks it)."""
        request = ApprovalRequest(call.id, call.name, server_id, copy.deepcopy(call.input), spec,
                                  decision, preview,
                                  reviews=reviewed.reviews if reviewed is not None else (),
                                  review_reason=reviewed.reason if reviewed is not None else "",
                                  position=position, lift=lift,
                                  agent_chain=self._agent_chain)
        try:
            self._emit(AwaitingApproval(request))
            # object: the approver is the UI's, and a wrong answer must decline (below)
            response: object = await self.approver(request)
        except asyncio.CancelledError:
            finish(Outcome.DECLINED, STOPPED_BEFORE_APPROVAL, True, decision)
            raise
        except Exception as exc:  # a broken dialog must not approve anything
            log.exception("approver failed for %s", call.name)
            response = ApprovalResponse.decline(
                f"the approval dialog failed ({type(exc).__name__})")
        if not isinstance(response, ApprovalResponse):
            response = ApprovalResponse.decline("the approval answer was not understood")
        self._remember_all(response.rules_to_remember)
        if not response.approved:
            finish(Outcome.DECLINED, declined_message(response.reason), True, decision)
            return False
        if lift is not None and response.keep_lift and self._keep_lift is not None and \
                not self._agent_chain:
            try:
                self._keep_lift(call.name, lift)
            except Exception:  # the call was approved either way; the setting is a courtesy
                log.exception("could not keep the configuration change for %s", call.name)
        return True

    async def preview(self, tool: Tool, tool_input: Mapping[str, Any],
                      ctx: ToolContext) -> str | None:
        """What the call would do (a diff), shown with the request; None when the tool has
        no preview or it failed."""
        preview = getattr(tool, "preview", None)
        if not callable(preview):
            return None
        try:
            text = await asyncio.wait_for(preview(dict(tool_input), ctx), PREVIEW_TIMEOUT_S)
        except asyncio.CancelledError:
            raise
        except Exception:  # a preview is a courtesy; asking still works without it
            log.exception("preview of %s failed", tool.spec.name)
            return None
        return text if isinstance(text, str) else None

    def _remember_all(self, rules: tuple[PermissionRule, ...]) -> None:
        if not rules:
            return
        if self._agent_chain:  # a sub-agent's: for that child only, or not at all
            if self._scoped_rules is not None:
                try:
                    self._scoped_rules(rules)
                except Exception:  # an invalid rule must not block the answer
                    log.exception("could not remember the rule for the sub-agent")
            return
        for rule in rules:
            try:
                self._rules.add(rule)
            except Exception:  # an invalid rule must not block the answer the person gave
                log.exception("could not save the remembered permission rule")
