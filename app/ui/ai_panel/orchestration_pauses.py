"""Sub-agents waiting for the person (an orchestration run in "approval" mode): a bar in the
transcript, "Sub-agent ‹name› waits for your approval to start. [Run it] [Don't run]". It comes
with the live event, and from the store when a conversation with a paused run is opened (after
a restart too). Run it resumes the run (app.core.agent.sub_agents.orchestration
``approve_orchestration``) as the conversation's run, so Stop works and Send waits."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

if TYPE_CHECKING:
    from app.core.agent.events import SubAgentUpdated
    from app.core.services import Services
    from app.ui.ai_panel.ports import SessionSource, Status
    from app.ui.ai_panel.run_task import RunTask
    from app.ui.widgets.transcript_view import Transcript

log = logging.getLogger(__name__)


class PauseBar(QFrame):
    def __init__(self, run_id: int, names: list[str]) -> None:
        super().__init__()
        self.run_id = run_id
        self.setObjectName("orchestration-pause")
        self.setStyleSheet("QFrame#orchestration-pause { border: 1px solid palette(mid); "
                           "border-radius: 8px; }")
        who = ", ".join(names)
        self.label = QLabel(f"Sub-agent {who} waits for your approval to start."
                            if len(names) == 1 else
                            f"Sub-agents {who} wait for your approval to start.")
        self.label.setWordWrap(True)
        self.run_button = QPushButton("Run it")
        self.run_button.setObjectName("orchestration-run")
        self.skip_button = QPushButton("Don't run")
        self.skip_button.setObjectName("orchestration-skip")
        row = QHBoxLayout(self)
        row.addWidget(self.label, 1)
        row.addWidget(self.run_button)
        row.addWidget(self.skip_button)

    def answered(self) -> None:
        self.run_button.setEnabled(False)
        self.skip_button.setEnabled(False)


class OrchestrationPauses:
    """The bars of the open conversation's paused runs, by run id."""

    def __init__(self, services: Services, sessions: SessionSource, runs: RunTask,
                 transcript: Transcript, status: Status) -> None:
        self._services = services
        self._sessions = sessions
        self._runs = runs
        self._transcript = transcript
        self._status = status
        self._bars: dict[int, PauseBar] = {}

    def show(self, event: SubAgentUpdated) -> None:
        """A live update: a child that waits for the person gets its run's bar."""
        if event.status == "awaiting_approval" and event.run_id:
            self._bar(event.run_id, [event.name])

    def restore(self, conversation_id: int | None) -> None:
        """The open conversation's paused runs (after a restart too), from the store."""
        self._bars = {k: b for k, b in self._bars.items() if b in self._transcript.items()}
        if conversation_id is None:  # the ready window: its store module is not loaded yet
            return
        from app.core.store.orchestration import OrchestrationRepository

        repo = OrchestrationRepository(self._services.db)
        try:
            for run in repo.runs_for(conversation_id):
                if run.status == "paused":
                    names = [e.agent_name for e in repo.executions(run.id)
                             if e.status == "awaiting_approval"]
                    if names:
                        self._bar(run.id, names)
        except Exception:  # a damaged row must not break opening the conversation
            log.exception("could not read the conversation's orchestration runs")

    def _bar(self, run_id: int, names: list[str]) -> None:
        bar = self._bars.get(run_id)
        if bar is not None and bar in self._transcript.items():
            return
        bar = self._bars[run_id] = PauseBar(run_id, names)
        bar.run_button.clicked.connect(lambda: self._answer(bar, approve=True))
        bar.skip_button.clicked.connect(lambda: self._answer(bar, approve=False))
        self._transcript.add(bar)

    def _answer(self, bar: PauseBar, *, approve: bool) -> None:
        from app.core.agent.sub_agents.orchestration import (
            approve_orchestration,
            decline_orchestration,
        )

        session = self._sessions.session
        if session is None or self._runs.running:
            self._status("Wait for the run to finish first.")
            return
        bar.answered()
        resume = approve_orchestration if approve else decline_orchestration
        self._runs.start(resume(session, bar.run_id))
