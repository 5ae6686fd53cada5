"""Issue 35.3: a rubric item's stable id. Written beside the item (`{id, text}`) when it is first judged;
until then the id of its words, so judgements before and after the write share it; kept through a reorder
and a rewording that keeps it; a bad id is a message naming the file, line and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from scarbook.cases.io import load_case, save_case
from scarbook.cases.item_ids import write_item_ids
from scarbook.errors import CaseError
from scarbook.models.rubric import implicit_item_id

CASE = """\
id: c1
task: write tmp.txt
checks:
  # the judge reads tmp.txt
  - type: llm_judge
    artifact: tmp.txt
    rubric:
      - tmp.txt holds one line   # the scar's point
      - {id: kept-1, text: the answer names tmp.txt}
      - tmp.txt holds one line
"""


def case_file(tmp_path: Path, text: str = CASE) -> Path:
    folder = tmp_path / "cases" / "c1"
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(text)
    return folder


def test_an_item_without_an_id_has_its_words_id_and_a_written_one_is_kept(tmp_path) -> None:
    check = load_case(case_file(tmp_path)).judge_checks[0]
    words = implicit_item_id("tmp.txt holds one line")
    assert check.rubric == ["tmp.txt holds one line", "the answer names tmp.txt", "tmp.txt holds one line"]
    assert check.rubric_ids == [words, "kept-1", f"{words}-2"]  # a repeated text: its own id
    assert implicit_item_id("  tmp.txt   holds one line ") == words  # whitespace is not a rewording
    # only the written id is written back
    assert check.to_dict()["rubric"] == ["tmp.txt holds one line", {"id": "kept-1", "text": "the answer names tmp.txt"},
                                         "tmp.txt holds one line"]


def test_first_judged_the_ids_are_written_with_the_files_comments_kept(tmp_path) -> None:
    folder = case_file(tmp_path)
    case = load_case(folder)
    ids = case.judge_checks[0].rubric_ids
    assert write_item_ids([case]) == []
    text = (folder / "case.yaml").read_text()
    assert "# the judge reads tmp.txt" in text and "# the scar's point" in text
    again = load_case(folder).judge_checks[0]
    assert again.rubric_ids == ids and again.written_ids == frozenset(ids)
    assert write_item_ids([load_case(folder)]) == []  # nothing left to write: the file is not touched
    assert (folder / "case.yaml").read_text() == text


def test_ids_stay_through_a_reorder_and_a_marked_rewording_and_not_through_an_unmarked_one(tmp_path) -> None:
    folder = case_file(tmp_path)
    write_item_ids([load_case(folder)])
    case = load_case(folder)
    check = case.judge_checks[0]
    first, kept, third = check.rubric_ids
    # reorder, and reword the first item keeping its id (the user marks it as the same item)
    check.params["rubric"] = ["the answer names tmp.txt", "tmp.txt holds exactly one line", "tmp.txt holds one line"]
    check.item_ids = [kept, first, third]
    save_case(case, folder.parent)
    assert load_case(folder).judge_checks[0].rubric_ids == [kept, first, third]
    # a rewording without the id (written by hand, the id line dropped) is a new item: its words' id
    text = (folder / "case.yaml").read_text()
    written = f"{{id: {kept}, text: the answer names tmp.txt}}"
    assert written in text
    (folder / "case.yaml").write_text(text.replace(written, "the final answer names tmp.txt"))
    assert load_case(folder).judge_checks[0].rubric_ids == [implicit_item_id("the final answer names tmp.txt"),
                                                            first, third]


@pytest.mark.parametrize(("item", "message"), [
    ("{id: Bad Id, text: x}", "rubric item 1: id 'Bad Id' is not an item id — an item id is lowercase letters, digits "
                              "and '-', at most 32, starting with a letter or digit; or leave id out and scarbook "
                              "writes one"),
    ("{id: a1}", "rubric item 1 has no text — write the item as {id: r3f2a9c, text: \"the answer names the file\"}, "
                 "or as the text alone"),
    ("{id: a1, text: x, weight: 2}", "unknown key 'weight' in rubric item 1 — write the item as {id: r3f2a9c, text: "
                                     "\"the answer names the file\"}, or as the text alone"),
])
def test_a_bad_item_names_the_file_line_and_fix(tmp_path, item: str, message: str) -> None:
    folder = case_file(tmp_path, f"id: c1\ntask: t\nchecks:\n  - type: llm_judge\n    rubric:\n      - {item}\n")
    with pytest.raises(CaseError) as err:
        load_case(folder)
    assert str(err.value) == f"{folder / 'case.yaml'}:6: {message}"


def test_a_rubric_entry_of_the_wrong_kind_says_which(tmp_path) -> None:
    folder = case_file(tmp_path, "id: c1\ntask: t\nchecks:\n  - type: llm_judge\n    rubric:\n      - ok\n      - [1, 2]\n")
    with pytest.raises(CaseError) as err:
        load_case(folder)
    assert str(err.value) == (f"{folder / 'case.yaml'}:5: llm_judge.rubric must be a list of items (a string, or {{id, "
                              "text}), got a list whose entry 2 is a list — write rubric as a list of items (a string, "
                              "or {id, text})")


def test_an_id_given_twice_is_refused(tmp_path) -> None:
    folder = case_file(tmp_path, "id: c1\ntask: t\nchecks:\n  - type: llm_judge\n    rubric:\n      - {id: a1, text: x}\n"
                                 "  - type: llm_judge\n    rubric:\n      - {id: a1, text: y}\n")
    with pytest.raises(CaseError) as err:
        load_case(folder)
    assert str(err.value) == (f"{folder / 'case.yaml'}:7: rubric item id 'a1' is given in check 1 and check 2 — give "
                              "each item its own id (a copied item: delete its id line)")


def test_an_unwritable_case_says_so_and_keeps_its_ids_implicit(tmp_path) -> None:
    folder = case_file(tmp_path)
    case = load_case(folder)
    (folder / "case.yaml").write_text("id: c1\n")  # changed on disk since it was loaded: now broken
    [problem] = write_item_ids([case])
    assert problem.startswith(f"rubric item ids of c1 not written to case.yaml: {folder / 'case.yaml'}:1: missing "
                              "required key 'task'")
    assert (folder / "case.yaml").read_text() == "id: c1\n"
