"""scarbook's command line. `scarbook` with no arguments opens the TUI.

May use: every core wing (views, reports, run and below). Never the TUI: `scarbook.entry` hands the CLI
the way to open it."""

from __future__ import annotations

import importlib

import click

from scarbook import __version__
from scarbook.cli.common import examples, friendly_errors, get_project, say

# Each command's module (`scarbook X` is scarbook/cli/X_cmd.py, one command a module) and the first sentence
# of its help: `scarbook --help` lists the commands from here and `scarbook CMD` imports only CMD's module,
# so neither pays for every command's imports (tests/cli/test_startup.py checks this table against the
# commands themselves).
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "eval": ("eval_cmd", "Run the selected cases (default: all) N times and print the case x pass-rate table."),
    "init": ("init_cmd", "Start a scar collection here: a commented scarbook.yaml, cases/, and workspaces/ in .gitignore."),
    "list": ("list_cmd", "The cases with their latest pass rate, as the TUI library shows them; notes say when that "
                          "session was cancelled, partial, interrupted or stale, and \"regressed since S\" when `scarbook "
                          "diff S` against it calls the case regressed."),
    "show": ("show_cmd", "The runs of CASE in its latest session, with every check's detail and judge verdicts."),
    "import-cases": ("import_cases_cmd", "Convert a JSON case list (e.g. evals/cases.json) into case folders under cases/."),
    "case": ("case_cmd", "Delete, restore, rename or duplicate a case folder in cases/; empty the trash."),
    "sessions": ("sessions_cmd", "Past sessions, newest first: label, state, runs, config fingerprint and git revision."),
    "import": ("import_cmd", "Turn an agent transcript (Claude Code log, Codex, Messages API JSON, OpenAI, OTel, an Inspect "
                           "eval log's sample, text) into a draft case."),
    "verify": ("verify_cmd", "Certify each case's scar: (a) the failed artifact must FAIL the checks, (b) the good one PASS, "
                           "both judged --judged times so an unstable judge shows; with --reproduce N, (c) how often the "
                           "agent reproduces the incident."),
    "diff": ("diff_cmd", "Compare two sessions per case (ids, labels, `latest`, `previous`): difference with a 95% "
                            "Newcombe interval, Fisher's exact p, and improved / regressed / no detectable change."),
    "lint": ("lint_cmd", "Advice on rubrics: vague items, joined criteria, items a rule check decides for free, "
                            "duplicates, judge-only cases, regex patterns with nested quantifiers (they can backtrack "
                            "past the check's time limit); with history, items that are dead, always fail, redundant, "
                            "unstable or that the judge gets wrong (`scarbook rubric stats`)."),
    "baseline": ("baseline_cmd", "The blessed session CI gates against: scarbook-baseline.json at the project root."),
    "report": ("report_cmd", "The report of a past SESSION (id, label, `latest`; default latest): the case table, and the "
                         "files --html, --junit, --json."),
    "merge": ("merge_cmd", "Merge the shards of a session into one session, as if it had run on one machine."),
    "trends": ("trends_cmd", "Each case's pass rate in the last N sessions that ran it, flakiest first (most crossings "
                             "of its threshold, then the widest spread)."),
    "calibrate": ("calibrate_cmd", "Grade judged rubric items yourself (the judge's verdict hidden), then see agreement, "
                                   "Cohen's kappa and the judge's error rates."),
    "noise": ("noise_cmd", "Measure the noise floor: run the same configuration twice (two sessions labelled as an A/A "
                           "pair) and report, per case and overall, whether the two disagree (the Holm-corrected test of "
                           "`scarbook diff`) and the spread between them."),
    "export": ("export_cmd", "Write SESSION (id, label, `latest`; default latest) in another tool's format: --format "
                             "inspect writes an Inspect AI eval log (docs/inspect.md has the mapping)."),
    "rejudge": ("rejudge_cmd", "Grade the artifacts SESSION's judge saw (id, label, `latest`) again under today's rubrics "
                               "and judge settings, with no agent runs, as a new session linked to it (`scarbook diff "
                               "SESSION latest` then shows what the rubric or judge change did)."),
    "rubric": ("rubric_cmd", "Draft a case's rubric from its incident (draft), and see what each item does across "
                             "history: figures and flags per item (stats)."),
    "resume": ("resume_cmd", "Finish a session (id, label, `latest`) that stopped short, under its own id."),
}


# a command a newcomer looks for by another tool's word: where scarbook does it (click's own hint matches spelling)
ELSEWHERE = {
    "compare": "two sessions are compared with `scarbook diff A B`, two agents in one session with `scarbook eval "
               "--agents A,B`",
    "run": "cases are run with `scarbook eval`",
}


class _LazyCommands(click.Group):
    """A group whose commands are imported when one is asked for by name (LAZY_COMMANDS)."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple:
        name = args[0] if args else ""
        if name in ELSEWHERE and self.get_command(ctx, name) is None:
            ctx.fail(f"No such command '{name}': {ELSEWHERE[name]}.")
        return super().resolve_command(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            load_commands(LAZY_COMMANDS[cmd_name][0])
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing, from the table: the help of a command not loaded is its first sentence, all that
        click's short help reads of it."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = [(name, (self.commands.get(name) or click.Command(name, help=LAZY_COMMANDS[name][1]))
                 .get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)



@click.group(cls=_LazyCommands, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=examples("scarbook", "scarbook init", "scarbook eval --runs 20", "scarbook list"))
@click.option("-C", "--project", "root", type=click.Path(file_okay=False), default=None,
              help="Project folder (default: the nearest folder with scarbook.yaml, else the current one).")
@click.version_option(__version__, prog_name="scarbook")
@click.pass_context
def main(ctx: click.Context, root: str | None) -> None:
    """scarbook: a scar collection for LLM agents.

    Every incident becomes a case in cases/; every case is run N times and gets a pass rate with a
    95% interval. Run with no command to open the TUI; use `scarbook eval` in CI.
    """
    ctx.ensure_object(dict)
    ctx.obj["root"] = root
    if "started" in ctx.obj:  # (scarbook.entry's: the command's modules are imported, and it is about to run)
        ctx.obj.pop("started")()
    if ctx.invoked_subcommand is None:
        open_tui(ctx)


@friendly_errors
def open_tui(ctx: click.Context) -> None:
    project = get_project(ctx)
    opener = ctx.obj.get("open_tui")  # handed in by scarbook.entry, which sits above the CLI and the TUI
    if opener is None:
        say(ctx.get_help())
        return
    opener(project.root)


def load_commands(module_name: str) -> list[click.Command]:
    """Import scarbook.cli.<module_name> and add its COMMANDS to `main`."""
    module = importlib.import_module(f"scarbook.cli.{module_name}")
    for command in module.COMMANDS:
        main.add_command(command)
    return list(module.COMMANDS)
