"""A plan made a ready session: the one way both faces start an eval session (`scarbook eval`, in
cli/eval_run.py, and the TUI's launch, in tui/app.py).

History's calibration of the judge is read here, once, and handed down: run/session.prepare_session
decides --runs auto on the true rate with it and sizes the plan's undecidable cases by it, without
reaching back into history for it."""

from __future__ import annotations

from scarbook.history.judge_truth import calibration_for
from scarbook.run.plan import SessionPlan, SessionSite
from scarbook.run.session import Preparation, prepare_session
from scarbook.stats.judge_error import JudgeError


def judge_error_for(site: SessionSite, plan: SessionPlan) -> JudgeError | None:
    """The judge's measured error over the plan's cases when a fresh calibration covers the judge in use;
    None when it is not usable, the judge is skipped or no case has an llm_judge check (nothing is read)."""
    if plan.skip_judge or not any(c.judge_checks for c in plan.cases):
        return None
    return calibration_for(site.history, site.workspaces_dir, site.config.judge,
                           {c.id: c for c in plan.cases}).usable_error


def prepare_eval(site: SessionSite, plan: SessionPlan) -> Preparation:
    """The plan's session built and preflighted at `site`, or every reason it cannot start."""
    judge_error = judge_error_for(site, plan)  # history read first, once; nothing below reads it again
    return prepare_session(site, plan, judge_error=judge_error)
