"""Runs in a workspace of their own: a clone of the project that borrows its objects read-only
(app.core.worktrees.workspace), reviewed and applied back through the project's checkpoints
(review.py, apply.py)."""
