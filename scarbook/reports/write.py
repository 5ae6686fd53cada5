"""Write a session's report files in one call: --json, --junit, --html and the GitHub step summary.

`scarbook eval`, `scarbook merge` and `scarbook report` all call `write_reports`; the caller prints
what it returns. Nothing here raises for a file that cannot be written: the session is recorded
before any report is written, so a bad path costs that one file, said once, naming it — the other
files are still written and the session stays in history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.fs.files import describe_os_error, write_named_file
from scarbook.history.baseline import BaselineComparison
from scarbook.reports.github import append_step_summary
from scarbook.reports.html import render_html
from scarbook.reports.junit import write_junit
from scarbook.reports.table import SessionReport, write_json


@dataclass(frozen=True)
class ReportPaths:
    """Where to write each report (None: not asked for)."""

    json: Path | None = None
    junit: Path | None = None
    html: Path | None = None

    @classmethod
    def given(cls, *, json: str | Path | None = None, junit: str | Path | None = None,
              html: str | Path | None = None) -> ReportPaths:
        """From command-line options: each a path, or None (or empty) when not given."""
        return cls(*(Path(p) if p else None for p in (json, junit, html)))


@dataclass
class WrittenReports:
    written: list[tuple[str, Path]] = field(default_factory=list)  # (kind, path) of each file written
    problems: list[str] = field(default_factory=list)  # a report file that could not be written, named
    warnings: list[str] = field(default_factory=list)  # the step summary could not be appended

    @property
    def ok(self) -> bool:
        return not self.problems


def write_reports(rep: SessionReport, against: BaselineComparison | None, paths: ReportPaths,
                  summary_env: Mapping[str, str] | None = None) -> WrittenReports:
    """Write the report files `paths` asks for (HTML, JUnit, JSON, in that order; each is tried), and
    with `summary_env` (the gate's environment: `eval` passes os.environ) append the Markdown step
    summary to its $GITHUB_STEP_SUMMARY when that is set."""
    out = WrittenReports()
    jobs = [("html", paths.html, lambda p: write_named_file(p, render_html(rep, against))),
            ("junit", paths.junit, lambda p: write_junit(rep, p, against)),
            ("json", paths.json, lambda p: write_json(rep, p))]
    for kind, path, write in jobs:
        if path is None:
            continue
        try:
            write(Path(path))
        except OSError as exc:
            out.problems.append(f"cannot write {path}: {describe_os_error(exc)} — choose a writable path")
        else:
            out.written.append((kind, Path(path)))
    if summary_env is None:
        return out
    try:
        append_step_summary(rep, against, summary_env)
    except OSError as exc:  # the gate's verdict still stands; say why the summary is missing
        out.warnings.append(f"could not append the GitHub step summary to {summary_env.get('GITHUB_STEP_SUMMARY')}: "
                            f"{exc.strerror or exc}")
    return out
