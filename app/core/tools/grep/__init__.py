"""grep_search's search engine, one responsibility per module (the tool itself is
``app.core.tools.builtin.grep_search``).

- ``results``: the request, per-file hits and the outcome both backends produce.
- ``python_backend``: the pure-Python search (the fallback).
- ``rg_backend``: ripgrep as a subprocess, and its output parsed.
- ``formatting``: one page of the outcome as text for the model.
"""
