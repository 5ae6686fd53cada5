"""Saving a case keeps the user's YAML: comments, flow lists, bare dates and untouched lines keep their bytes
(issue 26.11: saving deleted comments, turned flow lists into block lists and quoted dates)."""

from __future__ import annotations

import textwrap

from scarbook.cases.io import load_case, save_case

CASE = textwrap.dedent("""\
    # The README incident of 2026-11-14: keep this note.
    id: write-one-line
    title: Wrote the whole README into tmp.txt
    task: Extract the first line of README.md and write it to tmp.txt
    tags: [files, claims]   # flow style on purpose
    threshold: 0.8
    checks:
      - {type: file_exists, path: tmp.txt}
      # the heart of the scar
      - {type: line_count, path: tmp.txt, equals: 1}
    scar:
      date: 2026-11-14
      what_went_wrong: wrote the entire README, then said "done"
    """)


def write(project) -> tuple:
    path = project.case("write-one-line", CASE)
    return path, load_case(path.parent)


def test_an_unchanged_case_is_saved_byte_for_byte(project):
    path, case = write(project)
    save_case(case, project.cases_dir)
    assert path.read_text() == CASE


def test_an_edit_changes_only_its_own_line(project):
    path, case = write(project)
    case.title = "Wrote all of README into tmp.txt"
    case.threshold = 0.9
    save_case(case, project.cases_dir)
    expected = (CASE.replace("title: Wrote the whole README into tmp.txt", "title: Wrote all of README into tmp.txt")
                .replace("threshold: 0.8", "threshold: 0.9"))
    assert path.read_text() == expected
    assert load_case(path.parent).title == "Wrote all of README into tmp.txt"


def test_a_new_tag_keeps_the_list_in_flow_style_and_the_comments(project):
    path, case = write(project)
    case.tags = ["files", "claims", "readme"]
    save_case(case, project.cases_dir)
    text = path.read_text()
    assert "tags: [files, claims, readme]" in text
    assert "# The README incident of 2026-11-14: keep this note." in text
    assert "# the heart of the scar" in text
    assert "date: 2026-11-14\n" in text  # bare, not quoted
    assert load_case(path.parent).tags == ["files", "claims", "readme"]


def test_a_removed_check_is_gone_and_the_rest_is_kept(project):
    path, case = write(project)
    case.checks = case.checks[1:]
    save_case(case, project.cases_dir)
    again = load_case(path.parent)
    assert [c.type for c in again.checks] == ["line_count"]
    assert path.read_text().startswith("# The README incident of 2026-11-14: keep this note.\nid: write-one-line\n")


def test_a_new_case_is_dumped_whole(project):
    _, case = write(project)
    case.id = "copy-of-it"
    path = save_case(case, project.cases_dir)
    assert path.read_text().startswith("id: copy-of-it\n")
    assert load_case(path.parent).title == case.title


LONG = textwrap.dedent("""\
    id: write-one-line
    title: Wrote the whole README into tmp.txt
    task: >-
      Extract the first line of README.md and write it to tmp.txt, then say in one sentence what you
      wrote and where.
    checks:
      - type: file_exists
        path: tmp.txt
    scar:
      date: 2026-11-14
      what_went_wrong: wrote the entire README into tmp.txt, then reported done with one line; the reviewer believed it all.
      family: a folded note written by hand over
        two lines
    """)


def test_values_left_alone_keep_their_lines_when_a_neighbour_changes(project):
    """Issue 37.10: the dump folds at 100 columns; an untouched long value or hand-folded one is not re-folded."""
    path = project.case("write-one-line", LONG)
    case = load_case(path.parent)
    case.scar.date = "2026-11-15"
    case.checks[0].params["path"] = "out.txt"
    save_case(case, project.cases_dir)
    assert path.read_text() == LONG.replace("date: 2026-11-14", "date: 2026-11-15").replace(
        "path: tmp.txt", "path: out.txt")
