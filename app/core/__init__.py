"""Everything that is not UI. Nothing under this package may import Qt (PySide6, qasync)."""
