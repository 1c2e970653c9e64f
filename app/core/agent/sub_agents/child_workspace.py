"""Where a write-capable sub-agent works: a run workspace of its own (app.core.worktrees), a
clone of its parent's project on a branch ``tebiki/<id>``, with its own checkpoints; its
changes come back through "Review changes" like a worktree conversation's.

Always, not a setting: children run at once (up to the limit in Settings), and two of them
editing the parent's project directly overwrite each other and the parent's edits, with undo
tangled across them. A workspace keeps each child's edits apart until the person has reviewed
them. Only a project that cannot have one (not a git repository, no commit yet, or no data
folder) keeps the old way: the child edits the project, each call checkpointed for undo.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from app.core.agent.checkpointing import Checkpointer
from app.core.worktrees.host_git import WorktreeError
from app.core.worktrees.review import run_changes
from app.core.worktrees.workspace import RunWorkspace, Worktrees

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChildPlace:
    """A child's workspace and the checkpoints of it (None: checkpoints are off)."""

    workspace: RunWorkspace
    checkpointer: Checkpointer | None


class ChildWorkspaces:
    """Makes the workspace of each child whose tools can change files. ``changes_files(name)``:
    whether the tool ``name`` can; ``parent_checkpointer()``: the parent's (a child's
    checkpoints are kept like them, or not at all)."""

    def __init__(self, *, data_dir: Path | None, project_root: Path,
                 changes_files: Callable[[str], bool],
                 parent_checkpointer: Callable[[], Checkpointer | None]) -> None:
        self._worktrees = Worktrees(data_dir) if data_dir is not None else None
        self._data_dir = data_dir
        self._project_root = project_root
        self._changes_files = changes_files
        self._parent_checkpointer = parent_checkpointer

    async def prepare(self, tools: Iterable[str]) -> ChildPlace | None:
        """A workspace for a child with ``tools`` (None: it cannot change files, or the
        project cannot have one)."""
        if self._worktrees is None or self._data_dir is None or \
                not any(self._changes_files(name) for name in tools):
            return None
        try:
            workspace = await self._worktrees.create(self._project_root)
        except (WorktreeError, OSError) as exc:
            log.info("a sub-agent edits %s directly: %s", self._project_root, exc)
            return None
        parent = self._parent_checkpointer()
        checkpointer = None if parent is None else Checkpointer(
            self._data_dir, workspace.repo, max_file_bytes=parent.store.max_file_bytes)
        return ChildPlace(workspace, checkpointer)

    async def finish(self, place: ChildPlace, conversation_id: int | None) -> str:
        """Record the workspace against the child's conversation (so it is not stale and its
        row can open it); the line the parent reads. A workspace with no change is removed."""
        assert self._worktrees is not None
        if not await run_changes(self._worktrees, place.workspace):
            await self._worktrees.remove(place.workspace)
            return ""
        if conversation_id is not None:
            await asyncio.to_thread(self._worktrees.attach, place.workspace, conversation_id)
        return (f"\n\nIts changes are waiting for review in {place.workspace.branch} (a copy "
                f"of the project): the person reviews and applies them with Review changes; "
                f"they are not in the project yet.")
