"""The agent: model providers, the tool-use loop and the events it emits (no Qt here).

Start with ``AgentSession`` (session.py) and the events in events.py; ``build_tool_context``
(context.py) maps a profile's per-tool configuration onto a ``ToolContext``; the models
package holds the model clients (the Anthropic Messages API and OpenAI-compatible servers, both
over httpx) and the ``ProviderError`` hierarchy a failed run reports.

Each name is imported from the module that defines it, and this package imports nothing:
importing one submodule (``app.core.agent.checkpointing`` at start-up, say) must not load the
whole loop.
"""
