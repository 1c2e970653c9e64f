"""Qt widgets: thin views over app.core."""
