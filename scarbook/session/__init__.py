"""The use cases both faces call: the CLI's commands and the TUI's screens only parse what the user
asked and render what these return.

    plan.py      what the user asked (options, or the launch screen's fields) -> a SessionPlan
    estimate.py  what a plan will cost the judge, from history's tokens per call
    prepare.py   a plan made a ready session (the judge's calibration read once, handed down)
    report.py    a finished session -> its report (the gate: run/gate.py) and baseline comparison
    certify.py   does a case catch its scar: verify a case, certify a draft just imported

Preparing a plan is prepare.py (over run/session.prepare_session), running it run/runner.run_session; a
face drives the events (the CLI's progress lines and signals, the TUI's worker and live screen).

May use: views, reports, run and every wing below them. Never the faces (cli, tui).
"""
