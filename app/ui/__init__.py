"""Qt widgets: thin views over app.core.

Importing this package loads PySide6 and switches its ``__feature__`` import hook off, see
``pyside_imports``.
"""

from app.ui.pyside_imports import restore_plain_imports

restore_plain_imports()
