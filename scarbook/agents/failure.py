"""Why an agent failed, in one line picked from its stderr.

The last stderr line is often a runtime's sign-off rather than the reason: Node prints the error,
its stack and then "Node.js v20.20.2"; Python prints the traceback with the exception last; Rust
prints "note: run with `RUST_BACKTRACE=1`...". The most informative line is the error line
itself: the last line that names an error or exception, else the last line that is not noise.
The full log is always kept beside the run; this is only the one-line reason.
"""

from __future__ import annotations

import re

# "Error: ...", "TypeError [ERR_X]: ...", "ValueError: ...", "anthropic.AuthenticationError: ...",
# "error: ...", "fatal: ...", "panic: ...", "thread 'main' panicked at ..."
_ERROR = re.compile(
    r"^\s*(?:Uncaught\s+)?(?:[\w$.]*(?:Error|Exception|Exit|Interrupt)(?:\s*\[[^\]]*\])?:"
    r"|(?:error|fatal|panic|FATAL|ERROR|Error)(?:\[[^\]]*\])?:"
    r"|thread '[^']*' panicked)"
)
# Lines that close a crash report without saying what went wrong.
_NOISE = re.compile(
    r"^\s*(?:Node\.js v\d[\w.\-]*"
    r"|at\s.*"                                       # JS stack frames
    r"|\^+\s*"                                       # the caret under a source line
    r"|Traceback \(most recent call last\):"
    r"|File \".*\", line \d+.*"                      # Python frames
    r"|note: run with `RUST_BACKTRACE=.*"
    r"|\{|\}|\[|\]|\}\)?;?"                          # the braces around an error's fields
    r"|[\w$]+: ['\"\d\[{-].*"                          # an error object's fields (code: 'ERR_X', errno: -2)
    r")$"
)
MAX_REASON = 200


def failure_line(stderr_text: str) -> str:
    """The most informative line of an agent's stderr (stripped, at most MAX_REASON characters),
    or "" when it printed nothing."""
    lines = [ln.strip() for ln in stderr_text.splitlines() if ln.strip()]
    if not lines:
        return ""
    for line in reversed(lines):
        if _ERROR.match(line):
            return line[:MAX_REASON]
    for line in reversed(lines):
        if not _NOISE.match(line):
            return line[:MAX_REASON]
    return lines[-1][:MAX_REASON]
