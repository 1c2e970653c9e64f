"""The agent's events on screen: each ``AgentEvent`` becomes transcript items — streamed
assistant text, tool cards and their progress, thinking blocks, the round-cap card, error cards
with Retry and the "Stopped" note — and the header's flow chip and usage line follow.

This is the one place that knows what each event looks like in the AI panel: the ``match`` in
``RunEvents.handle`` names every member of the ``AgentEvent`` union (mypy checks that none is
left out). The events module is imported by the first event (or before it, off the GUI thread,
by app.startup_threads' warm-up): the panel is ready without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, assert_never, cast

from app.ui.ai_panel.run_notes import (
    RetryCountdown,
    add_error_card,
    grey_note,
    round_cap_card,
)

if TYPE_CHECKING:
    from app.core.agent.events import AgentEvent, RunEvent, SubAgentUpdated, ToolEvent
    from app.ui.ai_panel.answer_stream import AnswerStream
    from app.ui.ai_panel.compaction import ContextCompaction
    from app.ui.ai_panel.flow_controls import FlowControls
    from app.ui.ai_panel.ports import SessionSource, Status
    from app.ui.ai_panel.tool_cards import ToolCards
    from app.ui.ai_panel.undo_actions import UndoActions
    from app.ui.ai_panel.usage_line import UsageLine
    from app.ui.widgets.transcript_view import Transcript


class RunEvents:
    """Routes each event to the parts that show it; ``send`` and ``retry`` are what the
    round-cap card's Continue and an error card's Retry do."""

    def __init__(self, transcript: Transcript, stream: AnswerStream, cards: ToolCards,
                 undo: UndoActions, flow: FlowControls, usage: UsageLine,
                 compaction: ContextCompaction, sessions: SessionSource, status: Status, *,
                 send: Callable[[str], bool], retry: Callable[[], None],
                 sub_agent_paused: Callable[[SubAgentUpdated], None] = lambda _e: None
                 ) -> None:
        self._transcript = transcript
        self._stream = stream
        self._cards = cards
        self._undo = undo
        self._flow = flow
        self._usage = usage
        self._compaction = compaction
        self._sessions = sessions
        self._status = status
        self._send = send
        self._retry = retry
        self._sub_agent_paused = sub_agent_paused  # a bar to run it (orchestration_pauses)
        self._countdown: RetryCountdown | None = None  # a request waiting to be sent again

    def handle(self, event: AgentEvent) -> None:
        from app.core.agent.events import is_tool_event

        if is_tool_event(event):
            self._tool_event(event)
        else:  # what is not about one call is about the run (events.RunEvent)
            self._run_event(cast("RunEvent", event))

    def _tool_event(self, event: ToolEvent) -> None:
        from app.core.agent.events import (
            AwaitingApproval,
            FilesChanged,
            ReviewArrived,
            ReviewFinished,
            ToolFinished,
            ToolProgress,
            ToolRequested,
            ToolStarted,
        )

        match event:
            case ToolRequested():
                self._stream.flush()
                card = self._cards.request(event)
                self._undo.connect_card(card)
                self._transcript.add(card)
            case AwaitingApproval():
                self._cards.await_approval(event.request.tool_use_id)
                self._status(f"Waiting for your approval of {event.request.tool_name}")
            case ToolStarted():
                self._cards.start(event.tool_use_id)
                self._status(f"Running {event.tool_name}…")
            case ToolProgress():
                self._cards.progress(event)
            case ToolFinished():
                self._cards.finish(event)
                self._status("Working…")
            case FilesChanged():
                session = self._sessions.session
                checkpointer = session.checkpointer if session is not None else None
                if self._cards.show_changes(event, checkpointer):
                    self._undo.refresh_restore_actions()
            case ReviewArrived() | ReviewFinished():
                self._cards.review(event)
            case _:
                assert_never(event)

    def _run_event(self, event: RunEvent) -> None:
        from app.core.agent.events import (
            FlowChanged,
            RetryWaiting,
            RunCancelled,
            RunFailed,
            RunFinished,
            SubAgentUpdated,
            TextDelta,
            ThinkingBlock,
            ThinkingDelta,
            UsageUpdated,
        )

        if self._countdown is not None and not isinstance(event, RetryWaiting):
            self._countdown.stop()  # the answer (or the end) came: no more waiting
            self._countdown = None
        match event:
            case TextDelta():
                self._stream.append(event.text)
            case FlowChanged():
                self._flow.set_flow(event.summary, event.sources)
            case ThinkingBlock():
                self._stream.add_thinking(event.text, event.redacted)
            case ThinkingDelta():
                self._stream.append_thinking(event.text)
            case UsageUpdated():
                self._usage.show(event.model, event.turn, event.conversation, event.cache_ttl)
                self._compaction.show_context(event.model, event.turn)
            case RunFinished():
                self._stream.flush()
                if event.stop_reason == "max_iterations":
                    self._transcript.add(round_cap_card(event.iterations, self._send))
            case RunFailed():
                self._stream.break_off()
                add_error_card(self._transcript, event.message, event.retryable, self._retry)
                self._compaction.offer_compaction(event.message)
            case RunCancelled():
                self._stream.flush()
                self._transcript.add(grey_note("■ Stopped."))
            case SubAgentUpdated():
                self._cards.sub_agent(event)
                self._sub_agent_paused(event)
            case RetryWaiting():
                if self._countdown is not None:
                    self._countdown.stop()
                self._countdown = RetryCountdown(event.seconds, event.why)
                self._transcript.add(self._countdown)
            case _:
                assert_never(event)
