"""`-` names standard output wherever a report is written (eval, report, rejudge, resume, merge: --json, --junit,
--html), as most tools take it, and as /dev/stdout already did: the report alone on stdout, the table and notes on
stderr. It was refused with "scarbook prints its table on standard output", untrue since /dev/stdout moved the table
to stderr. And a report file made read-only is kept, said, where it was replaced without a word (a new file renamed
over it). Real subprocesses: stdout is a pipe, as under `| jq .`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SCARBOOK = str(Path(sys.executable).parent / "scarbook")


def scarbook(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCARBOOK, "-C", str(root), *args], capture_output=True, text=True, timeout=120, cwd=root,
                          env={**os.environ, "SCARBOOK_DEMO_DELAY": "0"})


def test_eval_json_dash_writes_the_report_alone_on_stdout(project) -> None:
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    done = scarbook(project.root, "eval", "--runs", "2", "--json", "-")
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["session"]["runs_per_case"] == 2
    assert "case " in done.stderr and "gate:" in done.stderr  # the table went to stderr
    assert not (project.root / "-").exists()


@pytest.mark.parametrize(("option", "opening"), [("--html", "<!DOCTYPE html>"), ("--junit", "<?xml"),
                                                 ("--json", "{")])
def test_report_writes_each_kind_to_stdout_for_a_dash(project, option, opening) -> None:
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    assert scarbook(project.root, "eval", "--runs", "1", "-q").returncode in (0, 1)
    done = scarbook(project.root, "report", option, "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(opening)
    if option == "--junit":
        assert ET.fromstring(done.stdout).tag == "testsuite"
    if option == "--html":
        assert "html report: standard output\n" in done.stderr
    assert not (project.root / "-").exists()


def test_the_help_says_a_dash_is_standard_output(project) -> None:
    for command in ("eval", "report"):
        done = scarbook(project.root, command, "--help")
        assert "--json FILE" in done.stdout and "(- for standard output)" in " ".join(done.stdout.split())


BOTH = ("scarbook: --json and --junit both write to standard output: the reports would run together, one after the "
        "other — keep one there (--json -) and give the other a file (--junit report.xml)\n")


@pytest.mark.parametrize("command", [["eval", "--runs", "1"], ["rejudge", "latest"], ["resume", "latest"],
                                     ["report"], ["merge", "."]], ids=lambda c: c[0])
def test_two_reports_on_standard_output_are_refused_by_every_command_that_writes_both(project, command) -> None:
    """`--json - --junit -` printed the JSON, then the XML, one after the other on stdout (exit 0): neither a JSON
    nor a JUnit reader could read it. Refused before anything runs, naming both options and what to do."""
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    done = scarbook(project.root, *command, "--json", "-", "--junit", "-")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", BOTH)


def test_three_reports_on_standard_output_say_each_option(project) -> None:
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    assert scarbook(project.root, "eval", "--runs", "1", "-q").returncode in (0, 1)
    done = scarbook(project.root, "report", "--html", "-", "--json", "/dev/stdout", "--junit", "-")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("scarbook: --html, --json and --junit all write to standard output: the reports would run "
                           "together, one after the other — keep one there (--html -) and give the others files "
                           "(--json report.json, --junit report.xml)\n")
