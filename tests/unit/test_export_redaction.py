"""A conversation export never carries a secret: learnt values and token formats are redacted,
and the save dialog starts in Documents (or home), never in the project folder."""

from __future__ import annotations

from pathlib import Path

from app.core.conversation_export import REDACTED, export_folder, redacted_markdown
from app.core.permissions.egress import SecretMatcher
from app.core.store.conversations import ConversationRepository

LEARNT = "hunter2-correct-horse-battery-staple-42"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_learnt_secrets_and_tokens_are_redacted(db) -> None:
    repo = ConversationRepository(db)
    conversation = repo.create(title="leak", project_root="/p")
    repo.append(conversation.id, "user", [{"type": "text", "text": f"key {TOKEN} ok"}])
    repo.append(conversation.id, "assistant",
                     [{"type": "text", "text": f"The password is {LEARNT}."}])
    learnt = SecretMatcher()
    learnt.add_secret(LEARNT, ".env")
    text, count = redacted_markdown(repo.get(conversation.id), repo.messages(conversation.id),
                                    [learnt])
    assert LEARNT not in text and TOKEN not in text
    assert count == 2 and text.count(REDACTED) == 2
    assert "The password is" in text


def test_the_save_dialog_starts_in_documents_or_home(tmp_path: Path) -> None:
    assert export_folder(tmp_path) == tmp_path
    (tmp_path / "Documents").mkdir()
    assert export_folder(tmp_path) == tmp_path / "Documents"
