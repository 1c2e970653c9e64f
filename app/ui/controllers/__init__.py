"""Controllers: what a dialog does (load, validate, save, apply), kept apart from its widgets."""
