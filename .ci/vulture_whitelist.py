"""Names vulture (the dead-code step of .ci/run; settings in pyproject.toml's [tool.vulture]) cannot see used,
each with why it is used. vulture only reads this file: `_` stands for any object. Add a name here only when it is
used from outside the Python vulture reads; a name nothing uses is removed instead."""

_ = None

# Every word of a state is declared, though the code names only some: the others are read by value (from
# history files, scarbook.yaml and JSON) and compared as the enum (scarbook/models/words.py).
_.INFRA, _.RAN, _.START, _.DIFF, _.WORKER_LOST, _.ABOVE, _.BELOW, _.UNDECIDED
_.GREEN, _.YELLOW, _.RED, _.MORE, _.SANDBOX, _.ALL, _.INTERRUPTED

# Attributes a library reads: click's Group.format_commands (the lazy command listing), ruamel.yaml's
# YAML.preserve_quotes, TinyDB's table_class, BaseHTTPRequestHandler.close_connection (tests' judge server),
# sys.dont_write_bytecode (tests/conftest.py), textual._wait.SLEEP_IDLE and a rich Console's _stack (tests).
_.format_commands, _.preserve_quotes, _.table_class, _.close_connection, _.dont_write_bytecode, _.SLEEP_IDLE
_._stack

# A parameter an override must accept (App.notify's markup), a Message's field (ItemList.Changed.item_list), and
# the reference that keeps the key queue's task from being collected (key_queue._task).
_.markup, _.item_list, _._task

# pytest fixtures asked for by name for what they do, not for a value.
_.fs_mode, _.slow_disk, _.python_on_path, _.skipped_judge, _.fast_demo, _.inprocess_demo

# Set for a library to read: shlex.shlex's whitespace_split (transcripts/shell.py), pytest-timeout's
# item.cancel_timeout (tests/helpers/dead_workers.py); a fixture asked for by name for its side effect
# (tests/agents/test_agent_rows.py's echo_type registers a type); compare_sim's FixedCell.case_better, the mirror
# of case_worse, computed in every cell for whoever reads the cells (the printed A/A table shows any wrong call).
_.whitespace_split, _.cancel_timeout, _.echo_type, _.case_better

# A field of session.json's batch record (models/session_parts.py BatchRecord) that scarbook writes by
# name through updated(submitted_at=...) and keeps in the file for a reader; no code reads it back.
_.submitted_at
