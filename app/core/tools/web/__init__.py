"""Helpers of the web tools (web_fetch, web_search): URL checks, fetching, page results and
search providers. Not tool modules: the tools themselves live in ``app.core.tools.builtin``.

Like the tools, these modules import their heavy libraries (httpx, the HTML parsers) inside
the functions that use them, so importing them at start-up costs nothing; the run warm-up
loads those libraries (see each tool's ``WARMUP_IMPORTS``).
"""
