"""Review changes' files that changed in the project since the run started, through the restore
merge UI (app.ui.dialogs.restore_preview.RestorePreviewDialog): keep mine, take the run's, or a
three-way merge the person can edit — the same dialog, diff and merge as an undo's conflicts.

The dialog reads a ``RestorePlan``; this adapter makes one of the files to apply (``mine``: the
project's file now, ``theirs``: the run's, the merge's base: the commit the run started from;
the plan's blob names only tell the dialog which versions exist), merges with the checkpoints'
``merge_text`` in a worker thread, and turns the answer into the apply's resolutions and
merged texts. Nothing here writes a file.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence

from app.core.checkpoints import (
    Checkpoint,
    CheckpointError,
    MergeResult,
    PlannedAction,
    RestorePlan,
    merge_text,
)
from app.core.worktrees.apply import ApplyItem, Resolution
from app.ui.dialogs.restore_preview import MERGE, TAKE, PreviewWords, RestorePreviewDialog

APPLY_WORDS = PreviewWords(
    doing="Applying", changed_since="changed in the project since the run started",
    conflicts_title="Changed in the project since the run started", take="Take the run's",
    theirs_mark="the run", diff_title="Changes applying makes (from the files as they are now)")
MERGE_LABELS = ("yours", "started from", "the run")
_NO_CHECKPOINT = Checkpoint("", 0.0, "the run's files")


def conflict_plan(items: Sequence[ApplyItem]) -> RestorePlan:
    """What applying ``items`` writes, as the preview shows a restore."""
    actions = tuple(
        PlannedAction(item.path, "write" if item.theirs is not None else "delete",
                      target_mode=None,
                      target_blob="theirs" if item.theirs is not None else None,
                      current_blob="mine" if item.mine is not None else None,
                      expected_blob="base" if item.base is not None else None,
                      conflict=item.conflict)
        for item in items)
    return RestorePlan(_NO_CHECKPOINT, _NO_CHECKPOINT, _NO_CHECKPOINT, actions,
                       tuple(i.path for i in items if i.conflict), (),
                       "".join(_diff(i) for i in items))


def preview(items: Sequence[ApplyItem], title: str, parent: object = None
            ) -> RestorePreviewDialog:
    by_path = {i.path: i for i in items}

    async def merger(action: PlannedAction) -> MergeResult:
        return await merge(by_path[action.path])
    return RestorePreviewDialog(conflict_plan(items), title, merger=merger,
                                parent=parent, words=APPLY_WORDS)  # type: ignore[arg-type]


async def merge(item: ApplyItem) -> MergeResult:
    """The three-way merge of a file both changed (in a worker thread; git merge-file)."""
    versions = (item.base or b"", item.mine or b"", item.theirs or b"")
    if any(b"\0" in data for data in versions):
        raise CheckpointError("it is a binary file")
    texts = [data.decode("utf-8", "surrogateescape") for data in versions]
    return await asyncio.to_thread(merge_text, *texts, labels=MERGE_LABELS)


def answers(dialog: RestorePreviewDialog) -> tuple[dict[str, Resolution], dict[str, bytes]]:
    """The person's choice per conflict, for ``apply``: their merged texts (as edited in the
    dialog) and "mine" or "theirs" for the others."""
    merged = {p: t.encode("utf-8", "surrogateescape")
              for p, t in dialog.merged_texts().items()}
    resolutions: dict[str, Resolution] = {}
    for path in dialog.choices:
        choice = dialog.choice(path)
        resolutions[path] = "merge" if choice == MERGE and path in merged else \
            "theirs" if choice == TAKE else "mine"
    return resolutions, merged


def _diff(item: ApplyItem) -> str:
    """The project's file now → what applying writes (a conflict shows the run's version)."""
    try:
        old = (item.mine or b"").decode("utf-8").splitlines(keepends=True)
        new = (item.theirs or b"").decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return f"Binary file {item.path} differs\n"
    return "".join(difflib.unified_diff(old, new, f"a/{item.path}", f"b/{item.path}"))
