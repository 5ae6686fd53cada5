"""`scarbook eval --shard I/N --session-id ID` and `scarbook merge DIR...`: N machines, one session.

Each shard runs in its own copy of the project (its own workspaces/, as on its own CI machine);
merging their history folders must give the table, exit code, JSON and JUnit of one machine."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from scarbook.run.shard import Shard, all_jobs

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

CASES = ["fix-json-config", "rename-function", "review-api-claims", "write-one-line"]


# -- the split ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_shards_split_every_job_exactly_once_and_evenly(n):
    runs = 5
    parts = [Shard(i, n, "s").jobs(CASES, runs) for i in range(1, n + 1)]
    got = sorted((cid, k) for part in parts for cid, ks in part.items() for k in ks)
    assert got == sorted(all_jobs(CASES, runs))
    sizes = [sum(map(len, part.values())) for part in parts]
    assert max(sizes) - min(sizes) <= 1


def test_the_split_does_not_depend_on_the_order_cases_were_named_in():
    assert Shard(2, 3, "s").jobs(CASES, 4) == Shard(2, 3, "s").jobs(list(reversed(CASES)), 4)


def test_each_shard_gets_a_share_of_every_case():
    for i in (1, 2, 3):
        assert all(Shard(i, 3, "s").jobs(CASES, 10)[cid] for cid in CASES)


def test_two_cases_on_two_shards_each_shard_runs_half_of_each_case():
    # issue 25 (8): with k first, shard 1 ran every run of one case and shard 2 every run of the other
    assert Shard(1, 2, "s").jobs(["b", "a"], 4) == {"a": [1, 3], "b": [1, 3]}
    assert Shard(2, 2, "s").jobs(["b", "a"], 4) == {"a": [2, 4], "b": [2, 4]}


@pytest.mark.parametrize("args, message", [
    (["--shard", "0/4", "--session-id", "ci-1"], "--shard takes I/N with 1 <= I <= N (e.g. --shard 2/4), got '0/4'"),
    (["--shard", "5/4", "--session-id", "ci-1"], "--shard takes I/N with 1 <= I <= N (e.g. --shard 2/4), got '5/4'"),
    (["--shard", "a/b", "--session-id", "ci-1"], "--shard takes I/N with 1 <= I <= N (e.g. --shard 2/4), got 'a/b'"),
    (["--shard", "1/2"], "--shard needs --session-id: the name every shard of the session shares "
                         "(e.g. --session-id \"$CI_PIPELINE_ID\"), so `scarbook merge` can join them"),
    (["--shard", "1/2", "--session-id", "../x"], "--session-id must be 1-64 letters, digits, '.', '_' or '-' "
                                                 "(starting with a letter or digit), got '../x'"),
    # a merged session so named was hidden from every listing, as history moved aside is ('no sessions yet')
    (["--shard", "1/2", "--session-id", "ci-1.damaged"], "--session-id 'ci-1.damaged' ends in '.damaged', the mark "
                                                         "of history moved aside: scarbook would never list it — "
                                                         "choose another"),
    (["--shard", "1/2", "--session-id", "latest"], "--session-id 'latest' is a word scarbook reads as the newest "
                                                   "sessions (latest, previous) — choose another"),
    (["--session-id", "ci-1"], "--session-id names a sharded session: give --shard I/N too"),
    (["--shard", "1/2", "--session-id", "ci-1", "--runs", "auto"],
     "--shard needs a fixed number of runs: --runs auto decides each case from all of its runs, which no "
     "single shard sees"),
])
def test_bad_shard_options_are_usage_errors(project, args, message):
    project.bundled()
    result = project.cli("eval", *args)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == f"scarbook: {message}"
    assert not (project.workspaces / "history").exists() or not list((project.workspaces / "history").iterdir())


# -- end to end ----------------------------------------------------------------------------------
def _copy(project, name: str) -> Path:
    dest = project.root.parent / name
    shutil.copytree(project.root, dest, ignore=shutil.ignore_patterns("workspaces"))
    return dest


def _cli(root: Path, *args: str):
    from click.testing import CliRunner

    from scarbook.cli import main

    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def ran_shards(tmp_path_factory) -> dict:
    """The 3 shards as the first test of this module (on this worker) ran them, kept for the tests after it."""
    return {"folder": tmp_path_factory.mktemp("shards-ran")}


@pytest.fixture
def shards(project, ran_shards):
    """The bundled cases, 10 runs each: once on one machine, and as 3 shards on 3 machines.

    The seeded shards come out the same in every test: the first test of the module runs them (3 evals of 40
    runs, each with its `python3 main.py` checks), and the tests after it get a copy of what they left — each
    test its own machines, the history's paths made theirs, as if the shards had run there."""
    project.bundled()
    (project.root / "scarbook.yaml").write_text((project.root / "scarbook.yaml").read_text().replace(
        "type: demo", "type: demo\n  seed: 7"))
    machines = [_copy(project, f"machine-{i}") for i in (1, 2, 3)]
    if "outs" not in ran_shards:
        outs = [_cli(m, "eval", "--runs", "10", "--shard", f"{i}/3", "--session-id", "ci-42", "-q")
                for i, m in enumerate(machines, 1)]
        for m in machines:
            shutil.copytree(m / "workspaces", ran_shards["folder"] / m.name, symlinks=True)
        ran_shards.update(outs=outs, where=[str(m) for m in machines])
        return project, machines, outs
    for m, where in zip(machines, ran_shards["where"], strict=True):
        shutil.copytree(ran_shards["folder"] / m.name, m / "workspaces", symlinks=True)
        for path in (m / "workspaces").rglob("*"):
            if path.is_file() and not path.is_symlink() and where.encode() in (data := path.read_bytes()):
                path.write_bytes(data.replace(where.encode(), str(m).encode()))
    return project, machines, ran_shards["outs"]


def _normal_json(path: Path) -> dict:
    data = json.loads(path.read_text())
    for key in ("id", "started_at", "finished_at", "shard", "note"):
        data["session"].pop(key)
    for run in data["runs"]:
        for key in ("session_id", "started_at", "duration_s", "workspace", "transcript_path", "stderr_path"):
            run.pop(key)
        for check in run["checks"]:
            check.pop("duration_s")
    return data


def _normal_junit(path: Path) -> str:
    suite = ET.parse(path).getroot()
    for attr in ("name", "time", "timestamp"):  # differ between two sessions of the same runs
        suite.set(attr, "-")
    for prop in suite.find("properties"):
        if prop.get("name") == "session":
            prop.set("value", "-")
    for tc in suite.iter("testcase"):
        tc.set("time", "-")
    return ET.tostring(suite, encoding="unicode")


def _table(stdout: str) -> list[str]:
    return stdout.split("\n\n")[0].splitlines()


def test_merged_shards_give_the_table_exit_code_json_and_junit_of_one_machine(shards, tmp_path):
    project, machines, outs = shards
    for i, out in enumerate(outs, 1):
        assert out.exit_code == 0, out.output
        assert out.stdout.splitlines()[-1] == (f"shard {i}/3 of session ci-42: the gate is decided by "
                                               "`scarbook merge` over all 3 shards")
    one = project.cli("eval", "--runs", "10", "-q", "--json", str(tmp_path / "one.json"),
                      "--junit", str(tmp_path / "one.xml"))
    merged = project.cli("merge", *[str(m / "workspaces" / "history") for m in machines],
                         "--json", str(tmp_path / "merged.json"), "--junit", str(tmp_path / "merged.xml"))
    assert merged.exit_code == one.exit_code == 0, merged.output
    assert _table(merged.stdout) == _table(one.stdout)
    assert any(line.startswith("session ci-42: finished; 40 runs — ") for line in merged.stdout.splitlines())
    assert merged.stdout.splitlines()[-1] == (f"merged 3 shards into session ci-42 in "
                                              f"{project.workspaces / 'history' / 'ci-42'}")
    assert _normal_json(tmp_path / "merged.json") == _normal_json(tmp_path / "one.json")
    assert _normal_junit(tmp_path / "merged.xml") == _normal_junit(tmp_path / "one.xml")
    # the merged session is an ordinary session of this project: show, sessions and diff read it
    shown = project.cli("show", "write-one-line", "--session", "ci-42")
    assert shown.exit_code == 0 and "write-one-line in session ci-42" in shown.stdout


def test_a_missing_shard_is_an_error_naming_it(shards):
    project, machines, _ = shards
    result = project.cli("merge", str(machines[0] / "workspaces"), str(machines[2] / "workspaces"))
    assert result.exit_code == 2
    assert result.stderr.strip() == ("scarbook: shard 2/3 of session ci-42 is missing (found 1/3, 3/3) — add the "
                                     "history folder of the job that ran --shard 2/3")
    assert not (project.workspaces / "history" / "ci-42").exists()


@pytest.mark.parametrize("what, kind", [("fifo", "a FIFO"), ("folder", "a directory")])
@pytest.mark.parametrize("given", ["workspaces", "the shard's folder"])
def test_a_shards_session_json_that_is_not_a_file_is_named_not_called_missing(shards, what, kind, given):
    """A FIFO (or a folder) where shard 2/3's session.json should be: merge said 'shard 2/3 ... is missing',
    and given the shard's folder itself, 'no shards found in ...'."""
    project, machines, _ = shards
    folder = machines[1] / "workspaces" / "history" / "ci-42.shard-2-of-3"
    (folder / "session.json").unlink()
    os.mkfifo(folder / "session.json") if what == "fifo" else (folder / "session.json").mkdir()
    second = machines[1] / "workspaces" if given == "workspaces" else folder
    result = project.cli("merge", str(machines[0] / "workspaces"), str(second), str(machines[2] / "workspaces"))
    assert (result.exit_code, result.stderr.strip()) == (
        2, f"scarbook: {folder / 'session.json'} is {kind}, not a regular file: shard 2/3 of session ci-42 cannot "
           "be read — put back the session.json the shard's job wrote, or run that shard again")
    assert not (project.workspaces / "history" / "ci-42").exists()


@pytest.mark.parametrize("what", ["an empty folder", "a history of no shard"])
def test_a_folder_holding_no_shard_beside_folders_that_complete_the_set_is_refused_by_name(shards, what):
    """merge m1 EMPTY m2 m3 merged the three shards and said nothing of EMPTY: a wrong path (the job whose
    history it was meant to be may have run nothing) passed unseen."""
    project, machines, _ = shards
    extra = project.root.parent / "extra"
    extra.mkdir()
    if what != "an empty folder":  # a session folder that is no shard's (its header has no shard: part)
        folder = extra / "history" / "20261201-000000-000aa"
        shutil.copytree(machines[0] / "workspaces" / "history" / "ci-42.shard-1-of-3", folder)
        _rewrite_session(folder, id=folder.name, shard=None)
    result = project.cli("merge", str(machines[0] / "workspaces"), str(extra),
                         *[str(m / "workspaces") for m in machines[1:]])
    assert (result.exit_code, result.stderr.strip()) == (
        2, f"scarbook: {extra} holds no shard (no session recorded by `scarbook eval --shard I/N --session-id ID`) "
           f"— give the history folder (workspaces/history) the shard's job left, or leave {extra} out")
    assert not (project.workspaces / "history" / "ci-42").exists()


def test_a_duplicated_shard_is_an_error_naming_both_folders(shards):
    project, machines, _ = shards
    copy = project.root.parent / "copy-of-2"
    shutil.copytree(machines[1] / "workspaces" / "history", copy)
    result = project.cli("merge", *[str(m / "workspaces") for m in machines], str(copy))
    assert result.exit_code == 2
    first = machines[1] / "workspaces" / "history" / "ci-42.shard-2-of-3"
    assert result.stderr.strip() == (f"scarbook: shard 2/3 of session ci-42 is given twice: {first} and "
                                     f"{copy / 'ci-42.shard-2-of-3'} — give each shard's history once")


def test_shards_that_ran_different_cases_do_not_merge(shards):
    project, machines, _ = shards
    path = machines[2] / "cases" / "write-one-line" / "case.yaml"
    path.write_text(path.read_text().replace("equals: 1", "equals: 2"))
    shutil.rmtree(machines[2] / "workspaces")
    assert _cli(machines[2], "eval", "--runs", "10", "--shard", "3/3", "--session-id", "ci-42", "-q").exit_code == 0
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 2
    assert result.stderr.startswith("scarbook: shard 3/3 of session ci-42 ran with a different case checks than "
                                    "shard 1/3 (")


def test_a_shard_that_did_not_finish_makes_the_merge_exit_3(shards):
    project, machines, _ = shards
    folder = machines[1] / "workspaces" / "history" / "ci-42.shard-2-of-3"
    session = json.loads((folder / "session.json").read_text())
    (doc,) = session["session"].values()
    doc["state"] = "cancelled"
    doc["recorded"]["write-one-line"] = 1  # what a shard cancelled after one run of it records
    (folder / "session.json").write_text(json.dumps(session))
    runs = folder / "runs-write-one-line.jsonl"
    runs.write_text("".join(runs.read_text().splitlines(keepends=True)[:1]))
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 3
    summary = result.stdout.splitlines()
    assert any(line.startswith("session ci-42: cancelled; 38 runs") for line in summary), result.stdout
    assert "shard 2/3 cancelled: 11 of 13 runs" in result.stdout


def test_merging_twice_is_refused(shards):
    project, machines, _ = shards
    dirs = [str(m / "workspaces") for m in machines]
    assert project.cli("merge", *dirs).exit_code == 0
    again = project.cli("merge", *dirs)
    assert again.exit_code == 2
    assert again.stderr.strip() == (f"scarbook: session ci-42 is already in {project.workspaces / 'history'} "
                                    f"(merged before?) — delete {project.workspaces / 'history' / 'ci-42'} to "
                                    "merge it again")


def test_a_shard_records_once_per_machine(shards):
    _, machines, _ = shards
    again = _cli(machines[0], "eval", "--runs", "10", "--shard", "1/3", "--session-id", "ci-42", "-q")
    assert again.exit_code == 2
    assert again.stderr.strip().splitlines()[-1] == (
        f"scarbook: session ci-42.shard-1-of-3 is already recorded in {machines[0] / 'workspaces' / 'history'} — "
        "each shard of a session runs once; give a new --session-id to run the session again")


def test_merge_without_shards_says_how_they_are_made(project, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = project.cli("merge", str(empty))
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"scarbook: no shards found in {empty} — shards are recorded by "
                                     "`scarbook eval --shard I/N --session-id ID` in workspaces/history")


def test_shards_of_two_sessions_need_session_id(project):
    project.bundled()
    for sid in ("ci-1", "ci-2"):
        assert project.cli("eval", "write-one-line", "--runs", "1", "--shard", "1/1", "--session-id", sid,
                           "-q").exit_code == 0
    history = project.workspaces / "history"
    result = project.cli("merge", str(history))
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"scarbook: {history} hold shards of more than one session: ci-1 (shards 1/1); "
                                     "ci-2 (shards 1/1) — pick one with --session-id")
    merged = project.cli("merge", str(history), "--session-id", "ci-2")
    assert merged.exit_code == 0 and "merged 1 shard into session ci-2" in merged.stdout  # its 1 run passed


# -- merge verifies what the shards recorded (issue 25, 6): an agent in a shard's job can write its history --
def _rewrite_session(folder: Path, **changes) -> None:
    session = json.loads((folder / "session.json").read_text())
    (doc,) = session["session"].values()
    doc.update(changes)
    (folder / "session.json").write_text(json.dumps(session))


def test_a_record_marked_pass_with_a_failed_check_is_rejected_by_name(shards):
    project, machines, _ = shards
    folder = machines[1] / "workspaces" / "history" / "ci-42.shard-2-of-3"
    forged = None
    for path in sorted(folder.glob("runs-*.jsonl")):
        lines = path.read_text().splitlines(keepends=True)
        for i, line in enumerate(lines):
            doc = json.loads(line)
            if doc["status"] == "fail" and any(c["status"] == "fail" for c in doc["checks"]):
                doc["status"], doc["reason"] = "pass", "all checks passed"
                lines[i] = json.dumps(doc) + "\n"
                path.write_text("".join(lines))
                forged = doc
                break
        if forged:
            break
    assert forged, "the seeded demo agent failed no run in shard 2"
    failed = next(c for c in forged["checks"] if c["status"] == "fail")
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 2, result.output
    # history's own record check names the line (issue 33.14: merge's check, on every read)
    runs_file = folder / f"runs-{forged['case_id']}.jsonl"
    line = next(n for n, text in enumerate(runs_file.read_text().splitlines(), 1) if '"status": "pass"' in text
                and f'"k": {forged["k"]},' in text)
    assert result.stderr.strip() == (
        f"scarbook: shard 2/3 in {folder}: history file {runs_file} line {line} is not counted: it is marked pass, "
        f"but check {failed['index'] + 1} ({failed['type']}) is fail — the runner never writes that (forged or "
        f"damaged); delete it to silence this: sed -i '{line}d' {runs_file}")
    assert not (project.workspaces / "history" / "ci-42").exists()


def test_a_shard_header_copied_from_another_shard_is_rejected(shards):
    project, machines, _ = shards
    one = machines[0] / "workspaces" / "history" / "ci-42.shard-1-of-3"
    two = machines[1] / "workspaces" / "history" / "ci-42.shard-2-of-3"
    # shard 1's header, made to say shard 2 (its id and index), in place of shard 2's own
    session = json.loads((one / "session.json").read_text())
    (doc,) = session["session"].values()
    doc["id"], doc["shard"]["index"] = "ci-42.shard-2-of-3", 2
    (two / "session.json").write_text(json.dumps(session))
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (f"scarbook: shard 2/3 ({two}) is rejected: its header is a copy of shard 1/3 "
                                     f"({one})'s — the shard's history was altered; run that shard again")


def test_a_shard_header_that_disagrees_with_its_id_is_rejected(shards):
    project, machines, _ = shards
    two = machines[1] / "workspaces" / "history" / "ci-42.shard-2-of-3"
    _rewrite_session(two, shard={"session": "ci-42", "index": 2, "count": 3})  # no nonce: the others have one
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"scarbook: shard 2/3 ({two}) is rejected: its header has no nonce, which the "
                                     "other shards' have — the shard's history was altered; run that shard again")


def test_merge_into_a_history_that_cannot_be_written_is_one_message_and_records_nothing(shards):
    # issue 25 (9): an unwritable history was a traceback
    project, machines, _ = shards
    history = project.workspaces / "history"
    project.workspaces.mkdir(exist_ok=True)
    history.write_text("a file, not a folder")
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"scarbook: the session history cannot be written: {history} is a file, not "
                                     f"a folder — make {history} a writable folder, or point workspaces_dir in "
                                     "scarbook.yaml at one")


def test_merge_writes_the_step_summary_copies_kept_workspaces_and_says_where_runs_executed(shards, tmp_path,
                                                                                          monkeypatch):
    # issue 26.16: merge wrote no $GITHUB_STEP_SUMMARY and left the shards' kept workspaces behind; the JSON
    # report did not say where the runs executed
    project, machines, _ = shards
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "one.md"))
    one = project.cli("eval", "--runs", "10", "-q", "--json", str(tmp_path / "one.json"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "merged.md"))
    merged = project.cli("merge", *[str(m / "workspaces" / "history") for m in machines],
                         "--json", str(tmp_path / "merged.json"))
    assert merged.exit_code == one.exit_code == 0, merged.output
    one_id = json.loads((tmp_path / "one.json").read_text())["session"]["id"]
    escaped = one_id.replace("-", "\\-")  # the heading escapes Markdown
    assert (tmp_path / "merged.md").read_text() == (
        (tmp_path / "one.md").read_text().replace(escaped, "ci\\-42").replace(one_id, "ci-42"))
    report = json.loads((tmp_path / "merged.json").read_text())
    assert report["executor"] == report["session"]["executor"] == {"type": "local"}
    assert json.loads((tmp_path / "one.json").read_text())["executor"] == {"type": "local"}
    assert report["isolation"] == json.loads((tmp_path / "one.json").read_text())["isolation"]  # issue 25.1
    assert all(run["node"] == {} for run in report["runs"])  # a local run names no Ray node
    kept = {(r["case_id"], r["k"]) for r in report["runs"] if r["workspace_kept"]}
    assert kept  # the demo agent's failed runs keep their workspaces
    copied = {(p.parent.name, int(p.name)) for p in (project.workspaces / "ci-42").glob("*/*") if p.is_dir()}
    assert copied == kept
    for r in report["runs"]:
        if r["workspace_kept"]:
            here = project.workspaces / "ci-42" / r["case_id"] / str(r["k"])
            assert r["workspace"] == str(here)
            there = next(m / "workspaces" for m in machines
                         if any((m / "workspaces").glob(f"ci-42*/{r['case_id']}/{r['k']}")))
            source = next(there.glob(f"ci-42*/{r['case_id']}/{r['k']}"))
            assert sorted(p.relative_to(here).as_posix() for p in here.rglob("*")) == \
                   sorted(p.relative_to(source).as_posix() for p in source.rglob("*"))
    assert merged.stderr == ""  # nothing left uncopied


def test_a_session_record_says_its_executor_and_an_older_one_without_it_still_reads(tmp_path):
    from scarbook.history.records import session_from_doc, session_problem
    from scarbook.models import SessionInfo
    from scarbook.models.session_parts import Confinement, RunPlace
    from scarbook.run.executor import LocalExecutor
    from scarbook.tools.merge import _merged_executor

    assert LocalExecutor(2).where().to_dict() == {"type": "local"}
    from scarbook.config import ExecutorSettings
    from scarbook.run.ray.executor import RayExecutor

    assert RayExecutor(ExecutorSettings(type="ray", address="ray://head:10001"), 2, agent_spec=None,
                       project_root=tmp_path, keep_all=False).where().to_dict() == {"type": "ray", "address": "ray://head:10001"}
    old = {"id": "20260101-000000-aaaa", "label": "", "state": "finished"}  # written before `executor`
    assert session_problem(old) is None and session_from_doc(old).executor is None and SessionInfo.from_dict(old).to_dict()["executor"] == {}
    ray = SessionInfo(id="s", executor=RunPlace.ray("ray://head:10001")).to_dict()
    assert ray["executor"] == {"type": "ray", "address": "ray://head:10001"}
    assert session_problem(ray) is None and session_from_doc(ray).executor == RunPlace.ray("ray://head:10001")
    assert SessionInfo(id="s", executor=RunPlace.ray(None)).to_dict()["executor"] == {"type": "ray", "address": None}
    assert session_problem({**old, "executor": "ray"}) == "field executor is a string, not an object with a string type"
    assert session_problem({**old, "executor": {"type": 3}}) == \
        "field executor is an object, not an object with a string type"
    assert _merged_executor([RunPlace.read({"type": "local"}), RunPlace()]).to_dict() == {"type": "local"}
    # issue 25.1: which isolation ran, recorded and merged the same way
    from scarbook.tools.merge import _merged_isolation

    assert session_from_doc(old).isolation is None and SessionInfo.from_dict(old).to_dict()["isolation"] == {}
    assert session_problem({**old, "isolation": "sandbox"}) == "field isolation is a string, not an object with a string `ran`"
    sandboxed = {"ran": "sandbox", "asked": "auto", "network": False}
    assert _merged_isolation([Confinement.read(sandboxed), Confinement.read(dict(sandboxed))]).to_dict() == sandboxed
    assert _merged_isolation([Confinement.read(sandboxed), Confinement.read({"ran": "none", "asked": "none"})]).to_dict() == {
        "ran": "mixed", "shards": [sandboxed, {"ran": "none", "asked": "none"}]}
    assert _merged_executor([RunPlace.read({"type": "local"}), RunPlace.read({"type": "ray", "address": "auto"})]).to_dict() == {
        "type": "mixed", "address": None, "shards": [{"type": "local"}, {"type": "ray", "address": "auto"}]}
    # a shard older than the executor and isolation records: {} among the shards, as before
    assert _merged_isolation([Confinement.read(sandboxed), None]).to_dict() == {"ran": "mixed", "shards": [sandboxed, {}]}
    assert _merged_executor([None, RunPlace()]).to_dict() == {"type": "mixed", "address": None,
                                                               "shards": [{}, {"type": "local"}]}


def test_merging_only_the_history_folders_says_once_per_shard_where_its_kept_workspaces_would_be(shards, tmp_path):
    from scarbook.history.store import History

    project, machines, _ = shards
    uploaded = []
    for i, m in enumerate(machines, 1):
        shutil.copytree(m / "workspaces" / "history", tmp_path / f"shard-{i}" / "history")
        uploaded.append(tmp_path / f"shard-{i}" / "history")
    merged = project.cli("merge", *map(str, uploaded), "--json", str(tmp_path / "merged.json"))
    assert merged.exit_code == 0, merged.output
    report = json.loads((tmp_path / "merged.json").read_text())
    per_shard = []
    for i, h in enumerate(uploaded, 1):
        folder = next(p for p in h.iterdir() if (p / "session.json").is_file())
        runs = History(h.parent).runs(folder.name)
        n = sum(1 for r in runs if r.workspace_kept)
        files = sum(1 for r in runs for p in (r.transcript_path, r.stderr_path) if p)  # (merge copies them too)
        what = ([f"{n} kept workspace{'s' if n > 1 else ''}"] if n else []) + \
            ([f"{files} run file{'s' if files > 1 else ''} (transcripts, stderr logs)"] if files else [])
        if what:
            per_shard.append(f"scarbook: shard files not copied: shard {i}/3: its {' and '.join(what)} would be in "
                             f"{h.parent / folder.name}, which is not there — upload the shard's whole workspaces/ "
                             "folder (not only workspaces/history) to have them")
    assert per_shard and merged.stderr.splitlines() == per_shard
    assert not (project.workspaces / "ci-42").exists()
    assert any(r["workspace_kept"] for r in report["runs"])  # still kept where the shard left them


def test_a_shard_with_a_deleted_run_line_is_rejected(shards):
    """Issue 33.14: merge accepted a shard whose runs file lost a line (a failed run gone)."""
    project, machines, _ = shards
    folder = machines[1] / "workspaces" / "history" / "ci-42.shard-2-of-3"
    path = sorted(folder.glob("runs-*.jsonl"))[0]
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[1:]))
    cid = path.name[len("runs-"):-len(".jsonl")]
    _merge_refused(project, machines, (
        f"scarbook: shard 2/3 in {folder}: history file {path} holds {len(lines) - 1} runs of case {cid}, but "
        f"session ci-42.shard-2-of-3 recorded {len(lines)} when it ended — 1 was deleted or left out (forged or "
        f"damaged): the session is damaged and case {cid} has no verdict in it"))


def _merge_refused(project, machines, said: str) -> None:
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == said
    assert not (project.workspaces / "history" / "ci-42").exists()


def test_shards_whose_runs_per_case_was_raised_alike_are_rejected(shards):
    """Issue 33.14: raising runs_per_case in every shard's header (they still agree) passed merge."""
    project, machines, _ = shards
    for i, m in enumerate(machines, 1):
        # by a multiple of the shard count: every run recorded is still one of its shard's jobs
        _rewrite_session(m / "workspaces" / "history" / f"ci-42.shard-{i}-of-3", runs_per_case=13)
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 2, result.output
    one = machines[0] / "workspaces" / "history" / "ci-42.shard-1-of-3"
    assert result.stderr.strip().startswith(
        f"scarbook: shard 1/3 ({one}) is rejected: it finished, but holds 14 of the 18 runs its plan has (4 cases x "
        "13 runs, split 3 ways): run "), result.stderr
    assert result.stderr.strip().endswith(" is missing — the shard's history was altered; run that shard again")


def test_shards_that_ran_with_different_calibrations_merge_with_the_projects(shards):
    """Each shard records the judge's calibration it ran with (run/gate.py); shards that agree give it to the
    merged session, whose reports decide with it. Shards that differ (their machines' histories held other labels)
    leave none: the merged report corrects with this project's, and the session's note says why."""
    project, machines, _ = shards
    folders = [m / "workspaces" / "history" / f"ci-42.shard-{i}-of-3" for i, m in enumerate(machines, 1)]
    ran = {"usable": False, "reason": "not calibrated: no human labels yet", "labels": 0, "calibrated_at": "",
           "notes": []}
    merged_folder = project.workspaces / "history" / "ci-42"

    def merge(second: dict) -> dict:
        for folder, calibration in zip(folders, (ran, second, ran), strict=True):
            doc = next(iter(json.loads((folder / "session.json").read_text())["session"].values()))
            _rewrite_session(folder, gate={**doc["gate"], "calibration": calibration})
        shutil.rmtree(merged_folder, ignore_errors=True)
        result = project.cli("merge", *[str(m / "workspaces") for m in machines])
        assert result.exit_code == 0, result.stdout + result.stderr
        return next(iter(json.loads((merged_folder / "session.json").read_text())["session"].values()))

    assert merge(ran)["gate"]["calibration"] == ran
    merged = merge({**ran, "labels": 3})
    assert merged["gate"]["calibration"] is None, merged["gate"]
    assert merged["note"] == ("its shards ran with different calibrations of the judge: its report corrects with "
                              "the calibration in this project's history"), merged["note"]


def _calibration_on(history: tuple[int, int]) -> dict:
    """The calibration record (session.json's gate.calibration) a shard's machine would write: the same 40 labels
    of case alpha (history/judge_truth.measure), its history holding `history` judged items (judge PASS, FAIL)."""
    from scarbook.history.judge_truth import measure
    from scarbook.history.judged_index import JudgedItem
    from scarbook.judge.calibrate import CalibrationLabel
    from scarbook.judge.settings import JudgeSettings

    s = JudgeSettings()

    def label(i: int, judge: str, human: str) -> CalibrationLabel:
        return CalibrationLabel("alpha", "item", f"d{i}", human, judge, judge_model=s.model,
                                judge_prompt_digest=s.prompt_digest, labeled_at="2026-12-01")

    labels = ([label(i, "PASS", "PASS" if i < 17 else "FAIL") for i in range(20)]
              + [label(i, "FAIL", "PASS" if i < 25 else "FAIL") for i in range(20, 40)])
    passed, failed = history
    judged = [JudgedItem("alpha", "item", f"h{i}", "PASS" if i < passed else "FAIL", s.model, s.prompt_digest, "")
              for i in range(passed + failed)]
    return measure(labels, judged, s).to_record(["alpha"])


def test_shards_with_the_same_labels_on_different_histories_keep_a_calibration(shards):
    """Machines whose histories hold other judged runs but the same labels: the records differ in the strata's sizes
    (W) only. Before, merge compared the whole records: no calibration, and the note said the shards ran with
    different calibrations. The labels and their verdicts agree (label_digest), so the merged session keeps one —
    the record of the shard whose history held the most judged items — and its note says which."""
    project, machines, _ = shards
    folders = [m / "workspaces" / "history" / f"ci-42.shard-{i}-of-3" for i, m in enumerate(machines, 1)]
    small, large = _calibration_on((60, 40)), _calibration_on((200, 100))
    assert small["label_digest"] == large["label_digest"] and small != large
    for folder, calibration in zip(folders, (small, large, small), strict=True):
        doc = next(iter(json.loads((folder / "session.json").read_text())["session"].values()))
        _rewrite_session(folder, gate={**doc["gate"], "calibration": calibration})
    result = project.cli("merge", *[str(m / "workspaces") for m in machines])
    assert result.exit_code == 0, result.stdout + result.stderr
    merged = next(iter(json.loads((project.workspaces / "history" / "ci-42" / "session.json").read_text())
                       ["session"].values()))
    assert merged["gate"]["calibration"] == large, merged["gate"]
    assert merged["note"] == ("its shards' calibrations of the judge count the same 40 labels with the same verdicts, "
                              "on different histories: it keeps shard 2/3's, whose history held the most judged "
                              "items (300)"), merged["note"]


# `scarbook merge`, killed with -9 as it records its 5th run (a real SIGKILL of the process, at that moment)
KILLED_MERGE = """\
import os, signal, sys
from scarbook.history.store import History
record, n = History.record_run, []
def killed_at_the_fifth(self, run):
    n.append(run)
    if len(n) == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return record(self, run)
History.record_run = killed_at_the_fifth
from scarbook.cli import main
main(sys.argv[1:])
"""


@pytest.mark.needs_proc
def test_a_merge_killed_while_recording_leaves_an_interrupted_session_not_a_finished_one(shards):
    """Before: the merged session was written `finished` before its runs, so a merge killed midway left a
    finished session of 4 of its 40 runs, which list, report and the gate's readers took as whole (seen failing)."""
    import subprocess
    import sys

    project, machines, _ = shards
    dirs = [str(m / "workspaces") for m in machines]
    killed = subprocess.run([sys.executable, "-c", KILLED_MERGE, "-C", str(project.root), "merge", *dirs],
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    sessions = project.cli("sessions")
    row = next(line for line in sessions.stdout.splitlines() if line.startswith("ci-42"))
    assert row.split()[1:3] == ["interrupted", "4"], row
    report = project.cli("report", "ci-42")
    assert "session ci-42: interrupted; 4 runs" in report.stdout
    again = project.cli("merge", *dirs)
    assert again.exit_code == 2 and "delete" in again.stderr  # says what to do to merge it again
