"""Orchestration runs as core functions: start one in a mode, and resume a paused one.

- ``orchestrate_agent(session, text, mode)``: the person's message, run with sub-agents in
  ``mode`` ("auto": children run when the model starts them; "approval": each waits for the
  person and the run pauses).
- ``approve_orchestration(session, run_id)``: the person approved the run's waiting children:
  they run (scoped as at the start: app.core.agent.sub_agents.host), each one's result fills
  in the paused call's result in the stored conversation, and the parent continues. The run's
  context is read from the store by ``build_run_context``, as at the start, so this works the
  same after a restart.
- ``decline_orchestration(session, run_id)``: the waiting children do not run; the model is
  told so and continues.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from app.core.agent.sub_agents.run_context import build_run_context
from app.core.store.conversations import ConversationRepository
from app.core.store.orchestration import OrchestrationRepository, RunMode

if TYPE_CHECKING:
    from app.core.agent.session import AgentSession
    from app.core.agent.sub_agents.host import SubAgentHost

DECLINED = ("The person declined to run sub-agent {name!r} (execution {id}): it did not run "
            "and did nothing. Continue without it, or ask the person.")


async def orchestrate_agent(session: AgentSession, text: str, mode: RunMode) -> int | None:
    """Run ``text`` with sub-agents in ``mode``; the orchestration run's id (None when no
    child was started)."""
    host = _host(session)
    host.request_mode(mode)
    try:
        await session.run(text)
    finally:
        host.request_mode(None)
    return host.run_id


async def approve_orchestration(session: AgentSession, run_id: int) -> None:
    """Run the children waiting in ``run_id`` and let the parent continue with their
    results."""
    host = _host(session)
    repo, conversations = _stores(session)
    context = await asyncio.to_thread(build_run_context, repo, run_id)
    _check_conversation(session, context.run.conversation_id)
    await asyncio.to_thread(repo.set_run_status, run_id, "running")
    for execution in context.pending:
        result, _ok = await host.run_approved(execution)
        await asyncio.to_thread(conversations.replace_tool_result, context.run.conversation_id,
                                execution.tool_use_id, result)
    await _continue(session, repo, run_id)


async def decline_orchestration(session: AgentSession, run_id: int) -> None:
    """The children waiting in ``run_id`` do not run; the parent is told and continues."""
    repo, conversations = _stores(session)
    context = await asyncio.to_thread(build_run_context, repo, run_id)
    _check_conversation(session, context.run.conversation_id)
    for execution in context.pending:
        await asyncio.to_thread(repo.set_status, execution.id, "cancelled")
        await asyncio.to_thread(conversations.replace_tool_result, context.run.conversation_id,
                                execution.tool_use_id,
                                DECLINED.format(name=execution.agent_name, id=execution.id))
    await asyncio.to_thread(repo.set_run_status, run_id, "cancelled")
    await _continue(session, repo, run_id)


async def _continue(session: AgentSession, repo: OrchestrationRepository, run_id: int) -> None:
    host = _host(session)
    session.reload_history()
    host.resume(run_id)
    await session.retry()
    run = await asyncio.to_thread(repo.run, run_id)
    if run.status == "running" and not host.running():
        await asyncio.to_thread(repo.set_run_status, run_id, "done")


def _host(session: AgentSession) -> SubAgentHost:
    host = session.sub_agents
    if host is None:
        raise RuntimeError("this session cannot start sub-agents")
    return host


def _stores(session: AgentSession) -> tuple[OrchestrationRepository, ConversationRepository]:
    return OrchestrationRepository(session.db), ConversationRepository(session.db)


def _check_conversation(session: AgentSession, conversation_id: int) -> None:
    if session.conversation_id != conversation_id:
        raise ValueError(f"run belongs to conversation {conversation_id}, not this one")
