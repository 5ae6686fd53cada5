"""proc — running a program to completion: one contract (`run_program`), a Linux fast path (epoll and
pidfds) and a portable one (asyncio transports), process-group and leftover cleanup.

May use: fs, models, errors, text. Used by agents (the agent's process) and checks (`command` checks)."""
