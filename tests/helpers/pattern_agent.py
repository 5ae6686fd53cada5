"""A python agent whose passes and fails are set in advance, for --runs auto sessions that stop where a test
needs them to: write it into a project as `pattern_agent.py` (agent `{type: python, function:
pattern_agent:run}`, `concurrency: 1`) and give a case the pattern as its task, one letter a run ("ppppfffp…":
run k passes when the k-th letter is p). A python agent is imported once per process: every test that writes a
`pattern_agent.py` writes this one."""

PATTERN_AGENT = """
async def run(task, cwd):
    # run k's workspace is named k; its out.txt (what the case checks) only where the task's k-th letter is p
    pattern = task.strip()
    if pattern[(int(cwd.name) - 1) % len(pattern)] == "p":
        (cwd / "out.txt").write_text("ok")
    return "done"
"""
