"""scarbook/judge: the LLM judge against the loopback Messages API (tests/helpers/judge_server.py)."""
