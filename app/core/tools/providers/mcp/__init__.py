"""The MCP provider: tools of Model Context Protocol servers as Tebiki tools.

``provider`` holds ``McpProvider`` and explains the whole (tool names, trust, failures,
roots, reconnecting, the sandbox); the other modules are one concern each.
``config`` is the servers' configuration, ``oauth`` signing in to HTTP servers.
"""
