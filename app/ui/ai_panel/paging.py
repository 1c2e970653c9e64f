"""How much of a stored conversation is built at a time (app.ui.ai_panel.conversation_pager):
apart from the pager, so that opening a conversation can name them without loading it."""

WINDOW_MESSAGES = 40  # shown on opening (the runs holding the last 40 stored messages)
PAGE_MESSAGES = 40  # added above by each "Show earlier messages"
BATCH_MS = 8.0  # building per turn of the event loop (an item costs 1-3 ms), at least a run
