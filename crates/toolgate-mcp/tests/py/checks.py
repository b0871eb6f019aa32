"""What every Python test client here shares: failing with a message, checking
a condition, and the text of a tool result. Standard library only, so the
raw client can use it too; `crates/toolgate/tests/py/channels.py` imports it
from this directory as well.
"""

import sys


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")
