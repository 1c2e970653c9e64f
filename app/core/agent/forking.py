"""Forking a conversation: edit and resend a person's message, regenerate the last answer.

Both cut the stored conversation and the session's in-memory history at a prompt, then run:

- ``resend_from(i, text, attachments)``: the i-th prompt and everything after it are
  deleted; ``text`` (with ``attachments``) is sent as a new prompt in its place
  (``prompt_content(i)`` is what the prompt had, to put its attachments back on the tray);
- ``regenerate()``: everything after the last prompt (the answer, its tool calls and their
  results) is set aside as a version of the answer (app.core.store.answer_versions) and the
  prompt is sent again; ``show_version(i)`` brings version i back as the conversation's
  answer, so the next prompt continues from the version shown (``versions()``: which one of
  how many).

A *prompt* is a stored user message with no tool results (tool results are stored as user
messages too, and a compaction marker is neither). The UI counts its user messages the same
way, so index i is the i-th user message shown in the transcript.

What stays: the audit trail (every tool call that ran is history, and the tool history keeps
showing it), the usage rows (the tokens were spent), the flow labels (what the conversation
read is still known to the model's provider and to the person) and the files: a removed call's
file changes are not undone (the transcript's "Restore to before this message" does that).
A cut through a compacted part deletes the compaction marker too, so the full history is sent
again from there.

Neither is allowed while a run is going: both run through the session's ``drive`` (its
``_drive``), which refuses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from app.core.agent.attachments import Attachment, content_blocks, default_prompt
from app.core.agent.compaction import marker_of
from app.core.agent.models import ProviderBadRequest
from app.core.agent.session_history import ConversationHistory, title_for
from app.core.store.answer_versions import AnswerVersionRepository
from app.core.store.conversations import ConversationRepository, StoredMessage
from app.core.store.writer import BackgroundWriter

# Run before the request is sent: a fork cuts the conversation first.
Prepare = Callable[[], Awaitable[None]]
# Runs the conversation (the session's): the person's text (None: resend what is there), what
# to do first, and the attachments' content blocks.
Drive = Callable[[str | None, Prepare | None, list[dict[str, Any]] | None], Awaitable[None]]


def _prompt_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content
                       if isinstance(b, dict) and b.get("type") == "text")
    return ""


def prompt_rows(stored: Sequence[StoredMessage]) -> list[StoredMessage]:
    """The person's prompts among ``stored``, in order."""
    out = []
    for message in stored:
        if message.role != "user" or marker_of(message.content) is not None:
            continue
        blocks = message.content if isinstance(message.content, list) else []
        if not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
            out.append(message)
    return out


class ConversationForking:
    """``resend_from`` and ``regenerate`` for the conversation of ``history``: they cut it in
    the store (``conversations``, after ``writer`` has written everything) and in memory, then
    run it through ``drive``."""

    def __init__(self, history: ConversationHistory, conversations: ConversationRepository,
                 writer: BackgroundWriter, drive: Drive) -> None:
        self._history = history
        self._conversations = conversations
        self._writer = writer
        self._drive = drive
        self._versions = AnswerVersionRepository(conversations.db)

    async def resend_from(self, prompt_index: int, text: str,
                          attachments: Sequence[Attachment] = ()) -> None:
        """Replace the ``prompt_index``-th prompt (negative: from the end) and everything after
        it with ``text`` and ``attachments``, and run. Emits events like ``run``; a prompt
        that is gone ends as ``RunFailed``."""
        if not text.strip():
            if not attachments:
                raise ValueError("the message is empty")
            text = default_prompt(attachments)

        async def cut() -> None:
            await self._cut_at_prompt(prompt_index, keep_prompt=False, new_text=text)

        blocks = await asyncio.to_thread(content_blocks, attachments) if attachments else []
        await self._drive(text, cut, blocks)

    async def ends_unanswered(self) -> bool:
        """Whether the conversation ends with a prompt the model never answered (its run
        failed): a new prompt then takes its place instead of joining it in one user turn."""
        conversation_id = self._history.conversation_id
        if conversation_id is None:
            return False
        await self._writer.flush()  # the last run's messages are on disk
        last = await asyncio.to_thread(self._conversations.last_message, conversation_id)
        return last is not None and bool(prompt_rows([last]))

    async def prompt_content(self, prompt_index: int) -> object:
        """The stored content of the ``prompt_index``-th prompt (its attachment blocks and its
        text), None when there is no such prompt."""
        if self._history.conversation_id is None:
            return None
        await self._writer.flush()  # the last run's prompt is on disk
        return await asyncio.to_thread(self.stored_prompt_content, prompt_index)

    def stored_prompt_content(self, prompt_index: int) -> object:
        """``prompt_content`` without flushing the writer first (blocking: a worker's)."""
        conversation_id = self._history.conversation_id
        if conversation_id is None:
            return None
        prompts = prompt_rows(self._conversations.messages(conversation_id))
        if not -len(prompts) <= prompt_index < len(prompts):
            return None
        return prompts[prompt_index].content

    def _retitle(self, conversation_id: int, first: StoredMessage, new_text: str) -> None:
        """The first prompt was edited: the title follows it, unless the person renamed the
        conversation (its title is then not the one the old first prompt gave it)."""
        old = _prompt_text(first.content)
        if self._conversations.get(conversation_id).title == title_for(old):
            self._conversations.rename(conversation_id, title_for(new_text))

    async def regenerate(self) -> None:
        """Delete the last answer (with its tool calls and results) and ask again."""

        async def cut() -> None:
            await self._cut_at_prompt(-1, keep_prompt=True)

        await self._drive(None, cut, None)

    async def versions(self) -> tuple[int, int] | None:
        """(the version shown, how many) of the answer to the last prompt; None when it was
        never regenerated."""
        found = await self._last_prompt()
        if found is None:
            return None
        return await asyncio.to_thread(self._versions.of, *found)

    async def show_version(self, position: int) -> bool:
        """Make version ``position`` of the last answer the conversation's answer (the store
        and the history the next request sends). False when there is no such version."""
        found = await self._last_prompt()
        if found is None:
            return False
        if not await asyncio.to_thread(self._versions.show, *found, position):
            return False
        conversation_id = found[0]
        stored = await asyncio.to_thread(self._conversations.messages, conversation_id)
        self._history.replace(await asyncio.to_thread(self._history.from_rows, stored))
        return True

    async def _last_prompt(self) -> tuple[int, int] | None:
        """(conversation id, the last prompt's message id), with the writer flushed."""
        conversation_id = self._history.conversation_id
        if conversation_id is None:
            return None
        await self._writer.flush()
        stored = await asyncio.to_thread(self._conversations.messages, conversation_id)
        prompts = prompt_rows(stored)
        return (conversation_id, prompts[-1].id) if prompts else None

    async def _cut_at_prompt(self, prompt_index: int, *, keep_prompt: bool,
                             new_text: str | None = None) -> None:
        conversation_id = self._history.conversation_id
        if conversation_id is None:
            raise ProviderBadRequest("This conversation has no messages yet.")
        await self._writer.flush()  # the last run's messages are all on disk
        stored = await asyncio.to_thread(self._conversations.messages, conversation_id)
        prompts = prompt_rows(stored)
        if not -len(prompts) <= prompt_index < len(prompts):
            raise ProviderBadRequest("That message is no longer in this conversation.")
        prompt = prompts[prompt_index]
        first = prompt.id + 1 if keep_prompt else prompt.id
        if keep_prompt and prompt is prompts[-1]:  # regenerate: the answer stays a version
            await asyncio.to_thread(self._versions.set_aside, conversation_id, prompt.id)
        else:
            await asyncio.to_thread(self._conversations.delete_from, conversation_id, first)
        if new_text is not None and prompt is prompts[0]:
            await asyncio.to_thread(self._retitle, conversation_id, prompt, new_text)
        remaining = [m for m in stored if m.id < first]
        self._history.replace(await asyncio.to_thread(self._history.from_rows, remaining))
