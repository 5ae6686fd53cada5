"""What the tests share: the loopback Messages API, TUI fixtures, process and Ray helpers.

Imported one way: `from tests.helpers.judge_server import ...`."""
