"""The AI panel's message shortcuts, declared once: (keys, what it does, the method of
app.ui.ai_panel.conversation_actions.ConversationActions). The panel binds them, the Edit
menu shows them, Help → Keyboard Shortcuts lists them. Imports nothing: the menus are built
before the panel's modules are loaded."""

MESSAGE_SHORTCUTS = (("Ctrl+Shift+E", "Edit Last Message", "edit_last"),
                     ("Ctrl+Shift+R", "Regenerate Answer", "regenerate"),
                     ("Ctrl+Shift+C", "Copy Last Answer", "copy_last_answer"))
