"""How ``app.core.tools.git_safety`` builds git's environment, one responsibility per module.

- ``reader``: running git to read configuration (streamed, under a deadline), the version check.
- ``overrides``: the fixed overrides and the harmless values for program-running keys.
- ``files``: which files configure a repository (discovery, submodules, worktrees, includes).
- ``global_config``: the controlled global config Tebiki writes.
"""
