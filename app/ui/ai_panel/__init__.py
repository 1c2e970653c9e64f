"""The AI panel (``panel.AIPanel``): the conversation transcript, the prompt box, Send and Stop.

The panel is a composition root. Each part is a class with its own state and an explicit
constructor that receives only what it needs (the small protocols in ``ports``, the transcript,
the prompt box, a status callback), never the panel or its layout: the panel places every
widget, and a part that shows widgets either hands them over or fills a ``WidgetSlot``; a
widget the first paint does not show (the edit banner, the context bar) is made by its first use
(``on_demand.OnDemand``), in the place the panel gives (``on_demand.place_by``).

- ``run_events.RunEvents``: each agent event to the parts that show it (one exhaustive
  ``match`` over the ``AgentEvent`` union); ``run_notes``: error cards, the round-cap card and
  the grey notes a run leaves.
- ``session_holder.SessionHolder``: the conversation's agent session.
- ``run_task.RunTask``: the run on the event loop (one at a time).
- ``answer_stream.AnswerStream``: the streamed answer and its thinking.
- ``tool_cards.ToolCards``: the tool cards by call id and the run footers.
- ``undo_actions.UndoActions``: undo and redo of the agent's file changes.
- ``conversations.Conversations``: the picker, the list, opening and starting conversations
  (a long one a page at a time: ``conversation_pager``).
- ``conversation_actions.ConversationActions``: edit and resend, regenerate, copy.
- ``compaction.ContextCompaction``: the context bar and compaction.
- ``mode_choice.ModeChoice``, ``service_notices.ServiceNotices``, ``flow_controls.FlowControls``,
  ``usage_line.UsageLine``: the header's first-run mode choice, notices, flow chip and usage.
- ``mcp_prompts.McpPrompts``: MCP prompts and resources.
- ``instructions_line.InstructionsLine``: the instructions files the model is given (AGENTS.md
  and the like), with their sizes, and Open.

The widgets only the panel shows live here too: the find bar (``find_bar``, made by the panel on
Edit → Find), the context bar, the flow chip, the first-run mode panel and the notice bars.

Nothing is imported here: the window shell loads before any of it (app.main.show_window).
"""
