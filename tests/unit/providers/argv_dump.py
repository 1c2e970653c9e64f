"""Test helper: prints its argv (without the program), cwd and environment names as JSON.

Custom-tool tests run it to see exactly which argv items a rendered template produced.
"""

import json
import os
import sys

print(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "env": sorted(os.environ)}))
