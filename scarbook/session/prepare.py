"""A plan made a ready session: the one way both faces start an eval session (`scarbook eval`, in
cli/eval_run.py, and the TUI's launch, in tui/app.py).

History's calibration of the judge is read here, once per session, and handed on: down to
run/session.prepare_session as the judge's measured error (--runs auto decides on the true rate with
it and the plan's undecidable cases are sized by it), and up to the face on the Preparation, whose
report (session/report.py) and live screen correct the rates with that same calibration — nothing
reads it a second time."""

from __future__ import annotations

from collections.abc import Iterable

from scarbook.history.judge_truth import Calibration, calibration_for
from scarbook.models import Case
from scarbook.run.plan import SessionPlan, SessionSite
from scarbook.run.session import Preparation, prepare_session


def read_calibration(site: SessionSite, cases: Iterable[Case]) -> Calibration:
    """The Calibration of the judge in use over `cases` (history/judge_truth.calibration_for: nothing is
    read when none of them has an llm_judge check). `resume` reads it so; `eval` through prepare_eval."""
    return calibration_for(site.history, site.workspaces_dir, site.config.judge, {c.id: c for c in cases})


def prepare_eval(site: SessionSite, plan: SessionPlan) -> Preparation:
    """The plan's session built and preflighted at `site`, or every reason it cannot start; with the
    judge's calibration it was prepared with (Preparation.calibration), for the report and the live screen."""
    calibration = read_calibration(site, plan.cases)  # history read first, once; nothing below reads it again
    judge_error = None if plan.skip_judge else calibration.usable_error
    prep = prepare_session(site, plan, judge_error=judge_error)
    prep.calibration = calibration
    if prep.session is not None:  # recorded in its gate: a later report decides with it, as the runner did
        prep.session.calibration = calibration
    return prep
