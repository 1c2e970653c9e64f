"""Keeping a stored conversation sendable: the Messages API is strict about its shape.

The API rejects a transcript where a ``tool_use`` has no ``tool_result`` in the next user turn,
where a text block is empty, or (depending on the version) where two turns of the same role
follow each other. Stored conversations can be in any of those states: the app may have been
killed while a tool ran, a run may have failed after the user's text was saved and the person
typed again. ``normalize`` turns any stored history into a valid request without losing
anything the person saw.
"""

from __future__ import annotations

from typing import Any

INTERRUPTED_RESULT = ("This tool call was interrupted before it finished (the app stopped or "
                      "the run was cancelled); its effects, if any, are unknown. Check before "
                      "relying on it.")

Message = dict[str, Any]


def as_blocks(content: list[dict[str, Any]] | str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content
            if isinstance(b, dict) and not (b.get("type") == "text" and not b.get("text"))]


def tool_use_ids(message: Message) -> list[str]:
    if message["role"] != "assistant":
        return []
    return [b["id"] for b in as_blocks(message["content"]) if b.get("type") == "tool_use"]


def interrupted_results(ids: list[str]) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": i, "content": INTERRUPTED_RESULT,
             "is_error": True} for i in ids]


def dangling_tool_uses(history: list[Message]) -> list[str]:
    """tool_use ids of a final assistant turn that has no results yet (a crash mid-tool)."""
    if history and history[-1]["role"] == "assistant":
        return tool_use_ids(history[-1])
    return []


def normalize(history: list[Message]) -> list[Message]:
    """A valid Messages API ``messages`` list for ``history`` (which is not modified).

    One pass, as it runs before every model turn on a transcript that keeps growing.
    """
    merged: list[Message] = []
    for msg in history:
        content = msg["content"]
        if type(content) is str:
            blocks = [{"type": "text", "text": content}] if content else []
        else:
            blocks = [b for b in content
                      if type(b) is dict and (b.get("type") != "text" or b.get("text"))]
        if not blocks:
            continue
        if merged and merged[-1]["role"] == msg["role"]:
            merged[-1]["content"] += blocks
        elif merged or msg["role"] == "user":  # the conversation must open with the person
            merged.append({"role": msg["role"], "content": blocks})
    out: list[Message] = []
    pending: list[str] = []  # tool_use ids of the previous assistant turn
    for msg in merged:
        blocks = msg["content"]
        if msg["role"] == "assistant":
            if pending:  # an assistant turn follows unanswered tool calls
                out.append({"role": "user", "content": interrupted_results(pending)})
            pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            out.append(msg)
            continue
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results or pending:
            wanted = set(pending)
            answered = {b.get("tool_use_id") for b in results}
            # results first, in any order, only for calls of the turn before; then the rest
            kept = [b for b in results if b.get("tool_use_id") in wanted]
            missing = [i for i in pending if i not in answered]
            others = [b for b in blocks if b.get("type") != "tool_result"]
            blocks = interrupted_results(missing) + kept + others
            if not blocks:
                pending = []
                continue
            msg = {"role": "user", "content": blocks}
        pending = []
        if out and out[-1]["role"] == "user":
            out[-1] = {"role": "user", "content": out[-1]["content"] + msg["content"]}
        else:
            out.append(msg)
    if pending:
        out.append({"role": "user", "content": interrupted_results(pending)})
    return out
