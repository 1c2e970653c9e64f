"""Commands for shell_exec: parsed (``syntax``; ``tree``, ``structure``, ``words`` and ``refusals``
beside it), checked against the allowlist (``policy``), turned into rule subjects
(``subjects``), and run in the background (``jobs``).
"""
