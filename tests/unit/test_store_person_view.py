"""What a call's card showed instead of its result (content for the person only) is kept with
the call's audit row and read back with the conversation's calls, whichever way the row was
finished; the history's lists do not carry it."""

from __future__ import annotations

from app.core.agent.call_audit import person_view_json, person_view_of
from app.core.outcomes import CallState, Outcome
from app.core.store.audit import AuditRepository
from app.core.store.conversations import ConversationRepository
from app.core.tools.base import PersonView
from app.core.tools.images import ImagePart

VIEW = PersonView("for you only", (ImagePart("image/png", "iVBORw0KGgo="),))


def test_the_person_view_is_kept_with_the_call_and_read_back(db):
    audit = AuditRepository(db)
    conversation = ConversationRepository(db).create(title="t").id
    begun = audit.begin(tool_name="srv__t", server_id="srv", tool_input={}, decision="allow",
                        state=CallState.RUNNING, conversation_id=conversation,
                        tool_use_id="a")
    audit.finish(begun, tool_name="srv__t", server_id="srv", tool_input={}, decision="allow",
                 outcome=Outcome.EXECUTED, output="[meant for the user only]",
                 conversation_id=conversation, tool_use_id="a",
                 for_person=person_view_json(VIEW))
    # No begun row (its write failed): recorded whole, the view with it.
    audit.finish(None, tool_name="srv__t", server_id="srv", tool_input={}, decision="allow",
                 outcome=Outcome.EXECUTED, output="x", conversation_id=conversation,
                 tool_use_id="b", for_person=person_view_json(VIEW))
    audit.finish(None, tool_name="srv__t", server_id="srv", tool_input={}, decision="allow",
                 outcome=Outcome.EXECUTED, output="plain", conversation_id=conversation,
                 tool_use_id="c")
    calls = audit.for_conversation(conversation)
    assert person_view_of(calls["a"].for_person) == VIEW
    assert person_view_of(calls["b"].for_person) == VIEW
    assert calls["c"].for_person is None and person_view_of(None) is None
    assert calls["a"].output == "[meant for the user only]"
    assert all(row.for_person is None for row in audit.list())


def test_a_damaged_view_reads_as_none():
    assert person_view_of({"images": []}) is None
    assert person_view_of("text") is None
    assert person_view_of({"text": "t", "images": "nope"}) == PersonView("t")
