"""The AI panel's rendering of a run: the agent's events become transcript items — streamed
assistant text (its Markdown re-rendered at most every 60 ms, so the GUI never stalls), tool
cards and their progress, thinking blocks, the round-cap card, error cards with Retry and the
"Stopped" note.

A mixin of ``AIPanel`` (app.ui.widgets.ai_panel), apart from starting and stopping runs and from
switching conversations: this is the one place that knows what each ``AgentEvent`` looks like
on screen. The events module, the tool cards and the thinking view are imported by the first
event (or before it, off the GUI thread, by app.startup_threads' warm-up): the panel is ready
without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, SignalInstance
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from app.core.outcomes import CardStatus
from app.ui.widgets.transcript_view import ErrorCard, MessageView, RunFooter, Transcript

if TYPE_CHECKING:
    from app.core.agent.session import AgentSession
    from app.core.pricing import Usage
    from app.ui.widgets.conversation_actions import ConversationActions
    from app.ui.widgets.flow_chip import FlowChip
    from app.ui.widgets.tool_card import ToolCard

    _Base = QWidget
else:
    _Base = object

_RENDER_INTERVAL_MS = 60


class RunEvents(_Base):
    """Mixin of AIPanel (see the module docstring)."""

    session: AgentSession | None
    transcript: Transcript
    status_message: SignalInstance
    flow_chip: FlowChip
    conversation_actions: ConversationActions
    cards: dict[str, ToolCard]
    _run_cards: list[ToolCard]
    _footers: dict[str, RunFooter]

    if TYPE_CHECKING:
        def send(self, text: str | None = None) -> bool: ...
        def retry(self) -> None: ...
        def show_usage(self, model: str, turn: Usage | None, conversation: dict[str, Usage],
                       cache_ttl: str = "5m") -> None: ...
        def _connect_card(self, card: ToolCard) -> None: ...
        def _refresh_restore_actions(self) -> None: ...

    def _build_rendering(self) -> None:
        """The streamed text's throttled Markdown rendering."""
        self._current_text: MessageView | None = None
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(_RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self._render_current_text)

    def handle_event(self, event: object) -> None:
        from app.core.agent.events import (
            AwaitingApproval,
            FilesChanged,
            FlowChanged,
            ReviewArrived,
            ReviewFinished,
            RunCancelled,
            RunFailed,
            RunFinished,
            TextDelta,
            ThinkingBlock,
            ToolFinished,
            ToolProgress,
            ToolRequested,
            ToolStarted,
            UsageUpdated,
        )

        if isinstance(event, TextDelta):
            if self._current_text is None:
                self._current_text = MessageView("", "assistant")
                self.transcript.add(self._current_text)
            self._current_text.append(event.text)
            if not self._render_timer.isActive():
                self._render_timer.start()
        elif isinstance(event, ToolRequested):
            self._flush_text()
            rule = event.decision.explain()
            from app.ui.widgets.tool_card import ToolCard

            new_card = ToolCard(event.tool_use_id, event.tool_name, event.server_id, event.input,
                                event.decision.kind, rule,
                                decided_by=event.decision.decided_by,
                                has_rule=event.decision.rule is not None)
            self.cards[event.tool_use_id] = new_card
            self._connect_card(new_card)
            self._run_cards.append(new_card)
            self.transcript.add(new_card)
        elif isinstance(event, AwaitingApproval):
            card = self.cards.get(event.request.tool_use_id)
            if card is not None:
                card.set_status(CardStatus.AWAITING)
            self.status_message.emit(f"Waiting for your approval of {event.request.tool_name}")
        elif isinstance(event, ToolStarted):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                if card.status == CardStatus.AWAITING:
                    card.mark_approved()
                card.set_status(CardStatus.RUNNING)
            self.status_message.emit(f"Running {event.tool_name}…")
        elif isinstance(event, ToolProgress):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                card.set_progress(event.progress, event.total, event.message)
        elif isinstance(event, ToolFinished):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                card.finish(event.outcome, event.is_error, event.duration_ms, event.content,
                            event.images)
            self.status_message.emit("Working…")
        elif isinstance(event, FilesChanged):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                checkpointer = self.session.checkpointer if self.session is not None else None
                card.set_changes(event.changes, checkpointer)
                footer = self._footers.get(event.tool_use_id)
                if footer is not None:  # it came after the run ended (a stopped call)
                    footer.refresh()
                self._refresh_restore_actions()
        elif isinstance(event, FlowChanged):
            self.flow_chip.set_flow(event.summary, event.sources)
        elif isinstance(event, ReviewArrived | ReviewFinished):
            card = self.cards.get(event.tool_use_id)
            if card is not None:
                card.handle_review_event(event)
        elif isinstance(event, ThinkingBlock):
            from app.ui.widgets.thinking_view import ThinkingView

            # Above this turn's answer (still the current text view: the turn just ended).
            self.transcript.insert_before(ThinkingView(event.text, event.redacted),
                                          self._current_text)
        elif isinstance(event, UsageUpdated):
            self.show_usage(event.model, event.turn, event.conversation, event.cache_ttl)
            self.conversation_actions.show_context(event.model, event.turn)
        elif isinstance(event, RunFinished):
            self._flush_text()
            if event.stop_reason == "max_iterations":
                self.transcript.add(self._round_cap_card(event.iterations))
        elif isinstance(event, RunFailed):
            if self._current_text is not None:  # the stream broke off mid-answer
                self._current_text.mark_incomplete()
            self._flush_text()
            self._add_error_card(event.message, event.retryable)
            self.conversation_actions.offer_compaction(event.message)
        elif isinstance(event, RunCancelled):
            self._flush_text()
            label = QLabel("■ Stopped.")
            label.setObjectName("cancelled-note")
            label.setStyleSheet("color: palette(placeholder-text);")
            self.transcript.add(label)

    def _round_cap_card(self, iterations: int) -> QWidget:
        """The run reached the profile's round cap: not an error, the work can go on. Continue
        sends a continue message as the next prompt (once)."""
        from PySide6.QtWidgets import QFrame

        card = QFrame()
        card.setObjectName("round-cap-card")
        card.setStyleSheet("QFrame#round-cap-card { border: 1px solid palette(mid); "
                           "border-radius: 8px; }")
        row = QHBoxLayout(card)
        label = QLabel(f"Paused after {iterations} tool rounds (the profile's limit per "
                       "request). Continue to let the AI carry on where it stopped.")
        label.setWordWrap(True)
        row.addWidget(label, 1)
        button = QPushButton("Continue")
        button.setObjectName("round-cap-continue")

        def carry_on() -> None:
            if self.send("Continue where you stopped."):
                button.setEnabled(False)

        button.clicked.connect(carry_on)
        row.addWidget(button)
        return card

    def _render_current_text(self) -> None:
        if self._current_text is not None:
            self._current_text.render_markdown()

    def _flush_text(self) -> None:
        self._render_timer.stop()
        self._render_current_text()
        self._current_text = None

    def _add_error_card(self, message: str, retryable: bool) -> None:
        """A failed turn: the newest card is the only one whose Retry works."""
        self._retire_error_cards()
        self.transcript.add(ErrorCard(message, retryable, self.retry))

    def _retire_error_cards(self) -> None:
        for item in self.transcript.items():
            if isinstance(item, ErrorCard):
                item.retire()
