"""scarbook/run: plan, prepare, run a session, record; executors, workspaces and the tools built on them."""
