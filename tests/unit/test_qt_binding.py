"""The Qt binding must not corrupt the interpreter: PySide6 6.12.0 on Python 3.11 drops a
reference to None on every Qt call that returns nothing, and the process aborts
("none_dealloc") after a few thousand of them — a long conversation would crash the app."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import sys
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
label = QLabel()
label.setText("warm up")
before = sys.getrefcount(None)
for _ in range(2000):
    label.setText("x")
    label.setVisible(False)
print(before - sys.getrefcount(None))
"""


def test_qt_calls_returning_nothing_keep_none_alive():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr[-2000:]
    lost = int(result.stdout.strip().splitlines()[-1])
    assert lost < 100, f"{lost} references to None lost in 4,000 Qt calls: a binding bug"
