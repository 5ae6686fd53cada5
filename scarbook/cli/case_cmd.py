"""`scarbook case ...`: delete (to the trash), restore, rename and duplicate case folders."""

from __future__ import annotations

import click

from scarbook.cases.admin import duplicate_case, rename_case, trash_dir
from scarbook.cases.trash import list_trash, purge_trash, restore_case, to_purge, trash_case
from scarbook.cli.common import examples, friendly_errors, get_project, safe_text, say
from scarbook.session.plan import case_id_of_arg


@click.group("case", epilog=examples(
    "scarbook case rm write-one-line",
    "scarbook case restore write-one-line",
    "scarbook case mv write-one-line first-line-only"))
def case_group() -> None:
    """Delete, restore, rename or duplicate a case folder in cases/; empty the trash.

    A deleted case goes to workspaces/.trash/ (never run, listed or linted there) and can be restored.
    Runs stay recorded under the id a case ran as: a renamed case starts with no runs, and its earlier
    runs stay readable under its old id (`scarbook show OLD`).
    """


@case_group.command("rm", epilog=examples("scarbook case rm write-one-line"))
@click.argument("case_id")
@click.pass_context
@friendly_errors
def rm_command(ctx: click.Context, case_id: str) -> None:
    """Move CASE_ID's folder to the trash (restore it with `scarbook case restore CASE_ID`)."""
    project = get_project(ctx)
    case_id = case_id_of_arg(project, case_id)
    entry = trash_case(project, case_id)
    say(f"moved {entry.origin} to the trash ({entry.path}); "
               f"`scarbook case restore {case_id}` puts it back")


@case_group.command("restore", epilog=examples("scarbook case restore write-one-line"))
@click.argument("ref", metavar="CASE_ID")
@click.pass_context
@friendly_errors
def restore_command(ctx: click.Context, ref: str) -> None:
    """Put CASE_ID back from the trash (its latest deletion; or give a trash folder's name from
    `scarbook case trash`). Refused while another case has that id."""
    project = get_project(ctx)
    entry = restore_case(project, case_id_of_arg(project, ref))
    say(f"restored {entry.case_id} to {project.cases_dir / entry.case_id}")


@case_group.command("mv", epilog=examples("scarbook case mv write-one-line first-line-only"))
@click.argument("old")
@click.argument("new")
@click.pass_context
@friendly_errors
def mv_command(ctx: click.Context, old: str, new: str) -> None:
    """Rename case OLD to NEW: its folder and the id in its case.yaml. Runs recorded under OLD stay
    there (`scarbook show OLD`); NEW starts with none. Its scar verification moves with it."""
    project = get_project(ctx)
    old, new = case_id_of_arg(project, old), case_id_of_arg(project, new)
    rename_case(project, old, new)
    say(f"renamed {old} to {new} ({project.cases_dir / new}); its earlier runs stay recorded under {old}")


@case_group.command("cp", epilog=examples(
    "scarbook case cp write-one-line",
    "scarbook case cp write-one-line write-two-lines"))
@click.argument("case_id")
@click.argument("new", required=False)
@click.pass_context
@friendly_errors
def cp_command(ctx: click.Context, case_id: str, new: str | None) -> None:
    """Copy CASE_ID to NEW (default: CASE_ID-copy, -copy-2, ...): case.yaml, seed/, scar/ and every
    other file; symlinks are copied as links, never followed. The title is marked "(copy)"."""
    project = get_project(ctx)
    case_id = case_id_of_arg(project, case_id)
    case = duplicate_case(project, case_id, new and case_id_of_arg(project, new))
    say(f"copied {case_id} to {case.id} ({case.root})")


@case_group.command("trash", epilog=examples("scarbook case trash"))
@click.pass_context
@friendly_errors
def trash_command(ctx: click.Context) -> None:
    """List the deleted cases that can be restored, newest first."""
    project = get_project(ctx)
    entries = list_trash(project)
    if not entries:
        say(f"the trash is empty ({trash_dir(project)})")
        return
    say(f"{'case':<24} {'deleted (UTC)':<17} {'trash folder':<40} title")
    for e in entries:
        when = e.trashed_at[:16].replace("T", " ")
        say(f"{e.case_id[:24]:<24} {when:<17} {e.name:<40} {e.title}")
    for e in entries:
        if e.problem:
            say(f"refused: {e.problem}", err=True)


@case_group.command("purge", epilog=examples("scarbook case purge write-one-line", "scarbook case purge --all --yes"))
@click.argument("ref", metavar="[CASE_ID]", required=False)
@click.option("--all", "purge_all", is_flag=True, help="Delete everything in the trash for good.")
@click.option("--yes", is_flag=True, help="Do not ask (for scripts).")
@click.pass_context
@friendly_errors
def purge_command(ctx: click.Context, ref: str | None, purge_all: bool, yes: bool) -> None:
    """Delete trashed cases for good: every deletion of CASE_ID (or one trash folder named as
    `scarbook case trash` shows it), or --all. Asks first unless --yes. Runs recorded under the id stay
    in history. A symlink in the trash is removed itself, never what it points to."""
    if (ref is None) == (not purge_all):
        raise click.UsageError("name a case id or trash folder (see `scarbook case trash`), or pass --all — not both")
    project = get_project(ctx)
    entries = to_purge(project, ref and case_id_of_arg(project, ref))
    if not entries:
        say(f"the trash is empty ({trash_dir(project)})")
        return
    names = ", ".join(e.name for e in entries)
    if not yes and not click.confirm(safe_text(f"delete {len(entries)} trashed case folder(s) for good ({names})? "
                                               "This cannot be undone"), default=False):
        say("nothing deleted")
        ctx.exit(1)
    done = purge_trash(project, entries)
    say(f"deleted for good: {', '.join(e.name for e in done)}")


COMMANDS = [case_group]
