"""A report named by a path that is scarbook's own standard output — `--json /dev/stdout`, `/dev/fd/1`, or the
file stdout is redirected to — is what a user pipes: `scarbook eval --json /dev/stdout | jq .`. The table and
the summary were printed on stdout too, so jq read a table followed by JSON and failed. Now, when a report
goes to stdout, every line the command prints goes to stderr and stdout carries the report alone; the exit
code is the one it would have been. Real subprocesses, real pipes."""

from __future__ import annotations

import json
import subprocess
import sys
from xml.etree import ElementTree as ET

import pytest

pytestmark = pytest.mark.needs_proc
SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]
PASSES = "open('tmp.txt', 'w').write('x')"


@pytest.fixture
def collection(project):
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, '-c', PASSES])}}}\n"
                   "isolation: none\n")
    project.case("c", "id: c\ntask: write tmp.txt\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    return project


def piped(project, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """`scarbook ARGS | READER`: stdout a pipe this test reads (or the file `stdout`), stderr apart."""
    return subprocess.run([*SCARBOOK, "-C", str(project.root), *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120)


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1"])
def test_eval_json_to_stdout_is_the_json_alone_and_the_table_goes_to_stderr(collection, name) -> None:
    proc = piped(collection, "eval", "--runs", "3", "--json", name)
    assert proc.returncode == 0, proc.stderr  # 3/3 at 80%: undecided, which passes (as without --json)
    report = json.loads(proc.stdout)  # what `| jq .` reads: nothing but the report
    assert report["exit_code"] == 0 and report["cases"][0]["case_id"] == "c"
    assert "pass@k" in proc.stderr and "session " in proc.stderr  # the table and the summary, on stderr


def test_eval_junit_to_stdout_parses_as_xml_and_a_failing_gate_keeps_its_exit_code(collection) -> None:
    collection.case("bad", "id: bad\ntask: t\nthreshold: 0.9\nchecks: [{type: file_exists, path: never.txt}]\n")
    without = piped(collection, "eval", "--runs", "5", "-q")
    proc = piped(collection, "eval", "--runs", "5", "-q", "--junit", "/dev/stdout")
    assert without.returncode == proc.returncode == 1, proc.stderr
    assert ET.fromstring(proc.stdout).get("tests") == "2"
    assert "bad" in proc.stderr and "pass@k" in proc.stderr


def test_report_html_to_stdout_is_the_page_alone(collection) -> None:
    assert piped(collection, "eval", "--runs", "3", "-q").returncode == 0
    proc = piped(collection, "report", "--html", "/dev/stdout")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.lstrip().lower().startswith("<!doctype html>") and proc.stdout.rstrip().endswith("</html>")
    assert "pass@k" in proc.stderr


def test_the_file_stdout_is_redirected_to_gets_the_report_appended_not_replaced(collection, tmp_path) -> None:
    out = tmp_path / "out.txt"  # `scarbook eval --json out.txt >> out.txt`: the same file as stdout, opened to append
    out.write_text("earlier line\n")
    with open(out, "a") as stdout:
        proc = piped(collection, "eval", "--runs", "3", "-q", "--json", str(out), stdout=stdout)
    assert proc.returncode == 0, proc.stderr
    first, rest = out.read_text().split("\n", 1)
    assert first == "earlier line" and json.loads(rest)["exit_code"] == 0
    assert "pass@k" in proc.stderr


def test_a_report_to_another_file_leaves_the_table_on_stdout(collection, tmp_path) -> None:
    proc = piped(collection, "eval", "--runs", "3", "--json", str(tmp_path / "r.json"))
    assert "pass@k" in proc.stdout and "pass@k" not in proc.stderr
    null = piped(collection, "eval", "--runs", "3", "--json", "/dev/null", stdout=subprocess.DEVNULL)
    assert "pass@k" not in null.stderr  # `--json /dev/null >/dev/null` asked for silence, not the table on stderr
