"""Conversations survive a restart, keys stay out of SQLite, models are listed from the API."""

from __future__ import annotations

import logging

import pytest

from app.core.agent.credentials import KEYRING_SERVICE, get_api_key, set_api_key
from app.core.agent.events import RunFailed, RunFinished
from app.core.agent.models import ProviderAuthError, client_factory, list_models
from app.core.agent.transcript import INTERRUPTED_RESULT
from app.core.store.conversations import ConversationRepository
from app.core.store.db import open_database
from app.core.store.profiles import DEFAULT_MODEL, AgentProfile
from app.core.tools.default_registry import builtin_provider
from tests.fakes.anthropic_server import FakeAnthropicServer, MemoryKeyring, Response, tool
from tests.unit.agent.helpers import Harness

SECRET = "sk-ant-api03-SECRET-do-not-store-4242"


async def test_conversation_reloads_and_continues_after_restart(harness: Harness,
                                                                fresh_data_dir) -> None:
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "1"}, id="toolu_r",
                                            text="Recording."),
                          Response.text("Recorded it."))
    first = harness.session()
    await first.run("record 1")
    conversation_id = first.conversation_id
    await first.aclose()

    # "Restart": a new connection to the same file, a new session for the stored conversation.
    db2 = open_database(fresh_data_dir / "tebiki.sqlite3")
    try:
        harness.db = db2
        harness.server.script(Response.text("Still here."))
        second = harness.session(conversation_id=conversation_id)
        await second.run("and now?")
        req = harness.server.last_request
        assert [m["role"] for m in req.messages] == ["user", "assistant", "user", "assistant",
                                                    "user"]
        assert req.messages[1]["content"][1] == {"type": "tool_use", "id": "toolu_r",
                                                 "name": "record", "input": {"value": "1"}}
        assert req.messages[2]["content"][0]["tool_use_id"] == "toolu_r"
        assert req.messages[-1]["content"] == [{"type": "text", "text": "and now?"}]
        assert second.conversation_id == conversation_id
        assert len(ConversationRepository(db2).messages(conversation_id)) == 6
        conv = ConversationRepository(db2).get(conversation_id)
        assert conv.title == "record 1" and conv.agent_id == harness.profile_id
        assert conv.project_root == str(harness.project)
    finally:
        await second.aclose()
        db2.close()


async def test_a_crash_mid_tool_is_repaired_on_reload(harness: Harness) -> None:
    repo = ConversationRepository(harness.db)
    conv = repo.create(title="crashed")
    repo.append(conv.id, "user", [{"type": "text", "text": "run it"}])
    repo.append(conv.id, "assistant", [{"type": "tool_use", "id": "toolu_lost", "name": "slow",
                                        "input": {}}])
    harness.server.script(Response.text("Sorry about that."))
    session = harness.session(conversation_id=conv.id)
    await session.run("what happened?")

    req = harness.server.last_request
    assert req.messages[2]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_lost",
                                             "content": INTERRUPTED_RESULT, "is_error": True}
    assert req.messages[2]["content"][1] == {"type": "text", "text": "what happened?"}
    stored = harness.stored(conv.id)
    assert stored[2]["content"][0]["tool_use_id"] == "toolu_lost"  # repaired on disk too


async def test_deleted_conversation_fails_cleanly(harness: Harness) -> None:
    session = harness.session(conversation_id=999)
    await session.run("hello")
    failed = harness.last()
    assert isinstance(failed, RunFailed) and "no longer exists" in failed.message
    assert harness.server.message_requests == []


async def test_key_from_keyring_is_used_and_never_stored(harness: Harness,
                                                         isolated_keyring: MemoryKeyring,
                                                         fresh_data_dir) -> None:
    set_api_key(SECRET)
    assert isolated_keyring.store[(KEYRING_SERVICE, "anthropic_api_key")] == SECRET
    harness.update_profile(base_url=harness.server.base_url)
    harness.allow("record")
    harness.server.script(Response.tool_use("record", {"value": "1"}), Response.text("ok"))
    session = harness.session(client_factory=None)  # the app's default: keyring / environment
    await session.run("hello")
    assert harness.last() == RunFinished("end_turn", 2, 24, harness.last().output_tokens)
    sent = harness.server.last_request.headers
    assert SECRET in sent.get("x-api-key", "") + sent.get("authorization", "")

    harness.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for path in fresh_data_dir.iterdir():
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    dump = "\n".join(harness.db.conn.iterdump())
    assert SECRET not in dump


async def test_environment_key_and_base_url_are_honoured(harness: Harness,
                                                         fake_anthropic_env: FakeAnthropicServer
                                                         ) -> None:
    assert fake_anthropic_env is harness.server
    fake_anthropic_env.script(Response.text("ok"))
    session = harness.session(client_factory=None)
    await session.run("hello")
    assert harness.last().stop_reason == "end_turn"
    assert "sk-ant-test-fake-key-0000" in (
        harness.server.last_request.headers.get("x-api-key", "")
        + harness.server.last_request.headers.get("authorization", ""))


async def test_no_key_fails_before_any_request(harness: Harness) -> None:
    assert get_api_key() is None
    # Not a server on this computer (a local one needs no key: test_local_preset).
    harness.update_profile(base_url="https://anthropic.invalid")
    session = harness.session(client_factory=None)
    await session.run("hello")
    failed = harness.last()
    assert isinstance(failed, RunFailed) and failed.error is ProviderAuthError
    assert "ANTHROPIC_API_KEY" in failed.message
    assert harness.server.requests == []
    # once a key exists, retry sends the stored message
    set_api_key(SECRET)
    harness.update_profile(base_url=harness.server.base_url)
    harness.server.script(Response.text("ok"))
    await session.retry()
    assert harness.last().stop_reason == "end_turn"


async def test_a_broken_keyring_reads_as_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring

    def boom(*args: object) -> None:
        raise RuntimeError("no D-Bus session")

    monkeypatch.setattr(keyring, "get_password", boom)
    assert get_api_key() is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    assert get_api_key() == "from-env"


async def test_list_models(fake_anthropic: FakeAnthropicServer) -> None:
    profile = AgentProfile(name="p", base_url=fake_anthropic.base_url)
    assert await list_models(profile) == [DEFAULT_MODEL]  # no key: the built-in default
    assert fake_anthropic.requests == []
    fake_anthropic.models = ["claude-a", "claude-b"]
    assert await list_models(profile, api_key=SECRET) == ["claude-a", "claude-b"]
    assert fake_anthropic.requests[-1].path == "/v1/models"
    fake_anthropic.models_error = Response.error(401)
    assert await list_models(profile, api_key=SECRET) == [DEFAULT_MODEL]


async def test_builtin_provider_still_loads() -> None:
    assert "write_file" in [t.spec.name for t in builtin_provider().tools()]


async def test_tool_use_ids_survive_in_stored_json(harness: Harness) -> None:
    harness.allow("record")
    harness.server.script(Response.tools(tool("record", {"value": "ü ✓"}, id="toolu_x")),
                          Response.text("ok"))
    session = harness.session()
    await session.run("unicode")
    stored = harness.stored(session.conversation_id)
    assert stored[1]["content"][0]["input"] == {"value": "ü ✓"}
    assert stored[2]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_x",
                                       "content": "recorded ü ✓", "is_error": False}


async def test_a_wrong_key_is_refused_and_never_logged(harness: Harness,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    harness.server.api_key = "sk-ant-the-right-one"
    wrong = "sk-ant-WRONG-key-987654321"
    harness.max_retries = 2
    session = harness.session(client_factory=client_factory(
        api_key=wrong, base_url=harness.server.base_url, max_retries=2))
    with caplog.at_level(logging.DEBUG):
        await session.run("hello")
    failed = harness.last()
    assert isinstance(failed, RunFailed) and failed.error is ProviderAuthError
    assert "API key" in failed.message and wrong not in failed.message
    assert len(harness.server.message_requests) == 1  # a 401 is not retried
    assert caplog.records  # the SDK did log at debug level ...
    assert wrong not in caplog.text  # ... but never the key
    harness.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert wrong not in "\n".join(harness.db.conn.iterdump())
