"""`scarbook import-cases`: a JSON case list into case folders under cases/."""

from __future__ import annotations

import json
from pathlib import Path

import click

from scarbook.cases.folder_save import new_case_folder
from scarbook.cases.io import save_case, validate_case_data
from scarbook.cli.common import examples, friendly_errors, get_project, say
from scarbook.errors import CaseError, ScarbookError
from scarbook.fs.files import describe_os_error, read_regular_bytes, unwritable_why
from scarbook.models import Case
from scarbook.text import plural


def convert_json_case(entry: object, source: Path, index: int) -> Case:
    """One entry of the JSON case list (`id`, `task`, `checks`; paths prefixed `workspace/`)."""
    if not isinstance(entry, dict):
        raise CaseError(source, f"entry {index} is not an object", fix="each entry is {\"id\":..., \"task\":..., \"checks\": [...]}")
    checks = []
    for check in entry.get("checks", []) or []:
        if not isinstance(check, dict):
            raise CaseError(source, f"entry {index} ({entry.get('id')}): a check is not an object")
        check = dict(check)
        for key in ("path",):
            if isinstance(check.get(key), str) and check[key].startswith("workspace/"):
                check[key] = check[key][len("workspace/"):]
        checks.append(check)
    data = {k: v for k, v in entry.items() if k != "checks"}
    data["checks"] = checks
    try:
        return validate_case_data(data, source)
    except CaseError as exc:
        raise CaseError(source, f"entry {index} ({entry.get('id', '?')}): {exc.problem}", fix=exc.fix) from None


@click.command("import-cases", epilog=examples("scarbook import-cases evals/cases.json"))
@click.argument("json_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite case folders that already exist.")
@click.pass_context
@friendly_errors
def import_cases_command(ctx: click.Context, json_file: str, force: bool) -> None:
    """Convert a JSON case list (e.g. evals/cases.json) into case folders under cases/."""
    project = get_project(ctx)
    source = Path(json_file)
    try:  # (a FIFO is refused, not waited on)
        entries = json.loads(read_regular_bytes(source).decode("utf-8"))
    except UnicodeDecodeError:
        raise CaseError(source, "file is not UTF-8 text", fix="save it as UTF-8") from None
    except OSError as exc:
        raise CaseError(source, f"cannot read the file: {describe_os_error(exc)}",
                        fix="save the case list to a file and import that") from None
    except json.JSONDecodeError as exc:
        raise CaseError(source, f"not valid JSON: {exc.msg}", line=exc.lineno, fix="fix the JSON syntax") from None
    if not isinstance(entries, list):
        raise CaseError(source, "expected a JSON list of cases", fix="wrap the cases in [ ... ]")
    cases = [convert_json_case(e, source, i) for i, e in enumerate(entries)]
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise CaseError(source, f"duplicate case id {c.id!r}", fix="give each case its own id")
        seen.add(c.id)
    existing = [c.id for c in cases if (project.cases_dir / c.id).exists()]
    if existing and not force:
        raise ScarbookError(f"these cases already exist in {project.cases_dir}: {', '.join(existing)} — "
                            "use --force to overwrite them")
    why = unwritable_why(project.cases_dir)
    if why:
        raise ScarbookError(f"cannot write the cases: {why} — make {project.cases_dir} a writable folder, or point "
                            "cases_dir in scarbook.yaml at one; nothing was written")
    for i, c in enumerate(cases):
        try:
            if (project.cases_dir / c.id).exists():  # --force: case.yaml replaced atomically
                path = save_case(c, project.cases_dir)
            else:  # built in a hidden folder and renamed into place: never an empty folder in cases/
                with new_case_folder(project, c.id) as staging:
                    save_case(c, staging)
                path = project.cases_dir / c.id / "case.yaml"
        except OSError as exc:
            raise ScarbookError(f"could not write case {c.id} in {project.cases_dir}: {describe_os_error(exc)} — "
                                f"{plural(i, 'case')} of {len(cases)} written before it") from None
        say(f"wrote {path}")
    say(f"imported {plural(len(cases), 'case')}; cases that need files in the workspace need a seed/ folder")


COMMANDS = [import_cases_command]
