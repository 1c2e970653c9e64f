"""What the sandbox tests share: the probe, the skip rule and folders the sandbox can see.

``requires_sandbox`` is a sandbox test module's ``pytestmark``; the ``visible`` and
``outside`` folders are fixtures in tests/conftest.py.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from app.core.sandbox import probe_sandbox

STATUS = probe_sandbox()
# Where `make` installs bubblewrap (root on Linux), a missing sandbox is a failure, not a skip.
_MUST_HAVE = bool(sys.platform.startswith("linux") and os.geteuid() == 0
                  and shutil.which("bwrap"))
requires_sandbox = pytest.mark.skipif(not STATUS.available and not _MUST_HAVE,
                                      reason=f"no sandbox on this machine: {STATUS.reason}")

PYTHON = os.path.realpath(sys.executable)


def py(code: str) -> str:
    """A shell_exec command line running ``code`` in this Python."""
    return f"{PYTHON} -c {json.dumps(code)}"

