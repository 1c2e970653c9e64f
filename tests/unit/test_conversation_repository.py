"""Conversations per project folder: listing, search within a folder, the last one open."""

from __future__ import annotations

import pytest

from app.core.settings_fields import LAST_CONVERSATIONS
from app.core.store.conversations import ConversationRepository
from app.core.store.settings import SettingsRepository

HOSTILE = ['"', '""', "NEAR(", "NEAR(a b)", "*", "wor*", "(", "a OR", "AND", "content:x",
           "{a b}: c", "'", "\\", "\x00", "  ", ""]


def test_a_project_lists_only_its_conversations_newest_first(db) -> None:
    repo = ConversationRepository(db)
    old = repo.create(title="old", project_root="/p/a")
    other = repo.create(title="elsewhere", project_root="/p/b")
    new = repo.create(title="new", project_root="/p/a")
    repo.create(title="no folder")
    assert [c.id for c in repo.list_for_project("/p/a")] == [new.id, old.id]
    assert [c.id for c in repo.list_for_project("/p/b")] == [other.id]
    assert repo.list_for_project("/p/c") == []
    assert [c.id for c in repo.list_for_project("/p/a", limit=1)] == [new.id]

    # A message moves its conversation to the top: append sets updated_at (the two were
    # last updated a day ago here, so the order cannot hang on the clock's resolution).
    db.conn.execute("UPDATE conversations SET updated_at = '2026-01-01T00:00:00.000+00:00'"
                    " WHERE id = ?", (old.id,))
    db.conn.execute("UPDATE conversations SET updated_at = '2026-01-01T00:00:01.000+00:00'"
                    " WHERE id = ?", (new.id,))
    before = repo.get(old.id).updated_at
    repo.append(old.id, "user", "again")
    assert repo.get(old.id).updated_at > before
    assert [c.id for c in repo.list_for_project("/p/a")] == [old.id, new.id]


def test_search_within_one_project(db) -> None:
    repo = ConversationRepository(db)
    here = repo.create(title="here", project_root="/p/a")
    there = repo.create(title="there", project_root="/p/b")
    repo.append(here.id, "user", "the zanzibar plan")
    repo.append(there.id, "user", "another zanzibar plan")
    assert {c.id for c in repo.search("zanzibar")} == {here.id, there.id}
    assert [c.id for c in repo.search("zanzibar", project_root="/p/a")] == [here.id]
    assert [c.id for c in repo.search("there", project_root="/p/b")] == [there.id]
    assert repo.search("there", project_root="/p/a") == []


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_within_a_project_never_raise(db, query: str) -> None:
    repo = ConversationRepository(db)
    conv = repo.create(title="NEAR( * quotes", project_root="/p/a")
    repo.append(conv.id, "user", 'say "hi" NEAR( x * y')
    found = repo.search(query, project_root="/p/a")
    assert all(c.id == conv.id for c in found)


def test_the_index_serves_the_project_list(db) -> None:
    plan = db.conn.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM conversations WHERE project_root = ?"
        " ORDER BY updated_at DESC, id DESC LIMIT 5", ("/p",)).fetchall()
    details = " ".join(row[-1] for row in plan)
    assert "idx_conversations_project" in details
    assert "TEMP B-TREE" not in details  # no sort: rows come in index order


def test_the_last_conversation_is_remembered_per_project(db) -> None:
    settings = SettingsRepository(db)
    assert settings.last_conversation("/p/a") is None
    settings.set_last_conversation("/p/a", 3)
    settings.set_last_conversation("/p/b", 5)
    assert settings.last_conversation("/p/a") == 3
    assert settings.last_conversation("/p/b") == 5
    settings.set_last_conversation("/p/a", None)
    assert settings.last_conversation("/p/a") is None
    assert settings.last_conversation("/p/b") == 5


@pytest.mark.parametrize("stored", [None, [], "text", {"/p/a": "3"}, {"/p/a": True},
                                    {"/p/a": 1.5}])
def test_a_damaged_setting_means_nothing_remembered(db, stored: object) -> None:
    settings = SettingsRepository(db)
    settings.set(LAST_CONVERSATIONS.key, stored)
    assert settings.last_conversation("/p/a") is None
    settings.set_last_conversation("/p/a", 9)  # and it is repaired by the next one
    assert settings.last_conversation("/p/a") == 9
