#!/usr/bin/env python3
"""Verify the format 2 events of a toolgate audit log without toolgate.

Written from docs/audit-log.md alone, with the standard library: RFC 8785
(JCS) for the JSON values a log holds, SHA-256, and a walk of the chain.

Usage: jcs_verify.py AUDIT_DB
Prints one JSON object: {"verified": N, "hashes": {"<seq>": "<hash>", ...}}
for the format 2 events, and exits 1 at the first event that does not match.
"""

import hashlib
import json
import math
import sqlite3
import sys

GENESIS = "0" * 64


def es_number(x):
    """A double as ECMAScript's Number.prototype.toString writes it."""
    if isinstance(x, int) and not isinstance(x, bool):
        if abs(x) < 2**53:
            return str(x)
        x = float(x)
    if math.isnan(x) or math.isinf(x):
        raise ValueError("NaN and infinities are not JSON")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr is the shortest text that reads back as the same double.
    mantissa, _, exponent = repr(abs(x)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = str(int(whole + fraction))
    stripped = digits.rstrip("0")
    scale = int(exponent or 0) - len(fraction) + (len(digits) - len(stripped))
    digits = stripped
    k = len(digits)
    n = k + scale  # value = 0.<digits> * 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mark = "+" if e > 0 else "-"
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = head + "e" + mark + str(abs(e))
    return sign + text


def jcs(value):
    """RFC 8785 canonical JSON of a value read by json.loads."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return es_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(jcs(k) + ":" + jcs(value[k]) for k in keys) + "}"
    raise TypeError(type(value))


def format_of(runs, seq):
    current = 1
    for first_seq, fmt in runs:
        if first_seq <= seq:
            current = fmt
    return current


def main(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    runs = []
    if "log_formats" in tables:
        runs = list(db.execute("SELECT first_seq, format FROM log_formats ORDER BY first_seq"))
    prev = GENESIS
    hashes = {}
    rows = db.execute(
        "SELECT seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash FROM events ORDER BY seq"
    )
    for seq, ts_ms, kind, session_id, call_id, payload, prev_hash, stored in rows:
        if format_of(runs, seq) != 2:
            prev = stored  # format 1 is not this script's business
            continue
        envelope = {
            "call_id": call_id,
            "format": 2,
            "kind": kind,
            "payload": json.loads(payload),
            "prev_hash": prev,
            "seq": seq,
            "session_id": session_id,
            "ts_ms": ts_ms,
        }
        digest = hashlib.sha256(jcs(envelope).encode("utf-8")).hexdigest()
        if prev_hash != prev or digest != stored:
            print(json.dumps({"broken": seq}))
            return 1
        hashes[str(seq)] = digest
        prev = digest
    print(json.dumps({"verified": len(hashes), "hashes": hashes}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
