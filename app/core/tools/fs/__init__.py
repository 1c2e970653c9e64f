"""The file tools' filesystem layer, one responsibility per module.

- ``errors``: the FsError family, whose messages tell the model how to fix a call.
- ``paths``: path text checks, resolution, containment and display.
- ``scope``: ``ScopedFs``, the one door: unrestricted reads, writes checked against the scope.
- ``writer``: the race-safe execution of a checked write (``O_NOFOLLOW`` directory fds).
- ``walker``: .gitignore-aware tree walking.

The glob dialect lives in ``app.core.globs`` (shared with permission path patterns) and the
dict-argument helpers in ``app.core.tools.arguments``.
"""
