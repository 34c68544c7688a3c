"""The lab's name prefix: every namespace, container and overlay of one lab carries it.

``$AINET_LAB_PREFIX`` when set (a test run gives itself one), otherwise ``al`` plus a
short hash of this checkout's path, so two checkouts on one machine never share
(or tear down) each other's labs.
"""

from __future__ import annotations

import hashlib
import os
import re

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def prefix():
    value = os.environ.get("AINET_LAB_PREFIX")
    if value:
        if not re.match(r"^[a-z][a-z0-9]{1,11}$", value):
            raise SystemExit("AINET_LAB_PREFIX=%r: use 2-12 lower-case letters and digits, starting with a letter"
                             % value)
        return value
    return "al" + hashlib.sha1(CHECKOUT.encode()).hexdigest()[:6]
