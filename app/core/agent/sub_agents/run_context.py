"""An orchestration run's context, built by one function for its start and its resume.

A run (app.core.store.orchestration) is created when the parent's run starts its first child;
in ``approval`` mode each child waits for the person and the run pauses. Whether that child
runs now (the start) or after the person's approval (the resume, also after a restart), the
run's mode and its pending children are read by ``build_run_context`` from the stored run, so
the two can never differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.store.orchestration import Execution, OrchestrationRepository, OrchestrationRun


@dataclass(frozen=True)
class RunContext:
    run: OrchestrationRun
    # Children that wait for the person's approval, in the order they were asked for.
    pending: tuple[Execution, ...]


def build_run_context(repo: OrchestrationRepository, run_id: int) -> RunContext:
    """The stored run ``run_id`` and its children awaiting approval (KeyError: no such run).
    Reads the store: call it off the GUI thread."""
    run = repo.run(run_id)
    pending = tuple(e for e in repo.executions(run_id) if e.status == "awaiting_approval")
    return RunContext(run, pending)
