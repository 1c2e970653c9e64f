"""Signing in to HTTP MCP servers with OAuth: ``sign_in`` (``McpOAuth``, what the connections
and the UI use), ``flow`` (the adapter to the SDK's OAuth client), ``callback`` (the loopback
listener), ``store`` (records in the keyring) and ``errors``.
"""
