"""A report file made read-only (`chmod a-w report.html`: a report kept as it was signed off) was replaced without a
word: the atomic write renames a new file over it, which its folder allows, root or not. It is kept now, and said:
`report` exits 2 naming it, `eval` refuses before any run, as for any report path it cannot write."""

from __future__ import annotations

from tests.cli.test_report_to_stdout import scarbook


def test_a_read_only_html_report_is_kept_and_said(project) -> None:
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    assert scarbook(project.root, "eval", "--runs", "1", "-q").returncode in (0, 1)
    kept = project.root / "report.html"
    kept.write_text("the signed-off report\n")
    kept.chmod(0o444)
    done = scarbook(project.root, "report", "--html", "report.html")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "scarbook: cannot write report.html: report.html is read-only (mode 0444): scarbook does not replace a file "
        "made read-only (`chmod u+w report.html` lets it) — choose a writable path")
    assert kept.read_text() == "the signed-off report\n"


def test_eval_refuses_a_read_only_report_before_any_run(project) -> None:
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    kept = project.root / "report.json"
    kept.write_text("{}\n")
    kept.chmod(0o444)
    done = scarbook(project.root, "eval", "--runs", "1", "-q", "--json", "report.json")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "scarbook: --json report.json cannot be written: report.json is read-only (mode 0444): scarbook does not "
        "replace a file made read-only (`chmod u+w report.json` lets it) — choose a writable path for --json")
    assert kept.read_text() == "{}\n"
    assert not (project.root / "workspaces" / "history").exists() or not any(
        (project.root / "workspaces" / "history").iterdir())
