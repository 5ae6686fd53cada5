"""scarbook/tools: verify, rerun, rejudge, merge — the tools built on the runner."""
