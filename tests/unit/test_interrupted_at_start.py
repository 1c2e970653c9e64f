"""Sub-agents that were working when the app stopped read as failed once the tools are built
(app.core.services.Services.build_tools), not on the start path before ready."""

from __future__ import annotations

from app.core.services import build_store_services
from app.core.store.conversations import ConversationRepository
from app.core.store.orchestration import OrchestrationRepository
from app.core.tools.registry import ToolRegistry


def test_the_tools_build_fails_what_was_working_at_the_last_quit(db, fresh_data_dir):
    repo = OrchestrationRepository(db)
    conversation = ConversationRepository(db).create(title="delegating")
    run = repo.create_run(conversation.id, "auto")
    working = repo.add_execution(run.id, tool_use_id="t1", agent_name="reader", chain="",
                                 definition={}, input="read", background=False,
                                 status="working")
    paused = repo.add_execution(run.id, tool_use_id="t2", agent_name="writer", chain="",
                                definition={}, input="write", background=False,
                                status="awaiting_approval")

    services = build_store_services(db, fresh_data_dir, registry=ToolRegistry([]))
    assert repo.execution(working.id).status == "working"  # the ready window reads nothing
    services.build_tools()
    assert repo.execution(working.id).status == "failed"
    assert "Interrupted" in repo.execution(working.id).summary
    assert repo.run(run.id).status == "failed"
    assert repo.execution(paused.id).status == "awaiting_approval"  # resumes on approval
