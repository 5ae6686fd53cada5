"""The offline demo agent: a stochastic stand-in for a real LLM agent, for the quickstart and tests.

It knows the bundled cases' tasks and, like the agent in the 7/2/1 story, is usually right, sometimes
verbose, and now and then confidently wrong. Each run draws its outcome on its own, at each case's
true rates (write-one-line: 70% clean, 20% verbose, 10% wrong), so ten runs give 10/10 one session
and 7/10 the next: the sampling noise a real agent shows (issue 22). The draw depends on the seed,
the case and the run number, so a seeded session is reproducible. `--draws deck` (or
$SCARBOOK_DEMO_DRAWS=deck) brings back the old shuffled blocks of ten (exactly 7/2/1 per ten runs),
which tests that pin exact outcomes use.
It reads the task on stdin, works in its cwd, and writes a transcript to $SCARBOOK_TRANSCRIPT and
token usage to $SCARBOOK_USAGE in scarbook's own transcript format.

    python -m scarbook.agents.demo [--seed S] [--profile default|regressed] [--draws independent|deck] < task
    python -I -S path/to/scarbook/agents/demo.py ...   (what scarbook runs: the standard library only)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Mapping
from pathlib import Path

# Per profile and behaviour: how many of each block of ten runs end each way.
MIXES = {
    "default": {
        "write-one-line": {"clean": 7, "verbose": 2, "dump_readme": 1},
        "fix-json-config": {"clean": 8, "trailing_comma": 1, "backup_file": 1},
        "review-api-claims": {"clean": 9, "rubber_stamp": 1},
        "rename-function": {"clean": 9, "half_rename": 1},
    },
    "regressed": {
        "write-one-line": {"clean": 3, "verbose": 1, "dump_readme": 6},
        "fix-json-config": {"clean": 8, "trailing_comma": 1, "backup_file": 1},
        "review-api-claims": {"clean": 9, "rubber_stamp": 1},
        "rename-function": {"clean": 9, "half_rename": 1},
    },
}
KEYWORDS = {"write-one-line": "first line", "fix-json-config": "config.json",
            "review-api-claims": "draft.md", "rename-function": "rename"}


class Session:
    """One run of the demo agent: acts on the workspace `cwd` and logs what it did; `env` names the
    transcript and usage files."""

    def __init__(self, task: str, cwd: Path, env: Mapping[str, str]) -> None:
        self.task = task
        self.cwd = cwd
        self.env = env
        self.output = ""
        self.lines: list[dict] = [{"type": "task", "text": task}]
        self.calls = 0
        self.out_tokens = 0

    def say(self, text: str) -> None:
        self.lines.append({"type": "assistant", "text": text})
        self.out_tokens += len(text.split()) * 2

    def tool(self, name: str, **inp):
        self.calls += 1
        call_id = f"call_{self.calls}"
        self.lines.append({"type": "tool_call", "id": call_id, "name": name, "input": inp})
        try:
            if name == "read_file":
                output = (self.cwd / inp["path"]).read_text(encoding="utf-8")
            elif name == "write_file":
                (self.cwd / inp["path"]).write_text(inp["content"], encoding="utf-8")
                output = f"wrote {len(inp['content'])} bytes to {inp['path']}"
            elif name == "list_dir":
                output = "\n".join(sorted(os.listdir(self.cwd / inp.get("path", "."))))
            else:
                raise ValueError(f"unknown tool {name}")
            self.lines.append({"type": "tool_result", "id": call_id, "output": output, "is_error": False})
            return output
        except OSError as exc:
            self.lines.append({"type": "tool_result", "id": call_id, "output": str(exc), "is_error": True})
            return ""

    def finish(self, text: str) -> None:
        self.lines.append({"type": "final", "text": text})
        self.output = text
        in_tokens = 400 + sum(len(json.dumps(line)) // 4 for line in self.lines)
        self.lines.append({"type": "usage", "model": "demo-agent-1", "input_tokens": in_tokens,
                           "output_tokens": self.out_tokens + len(text.split()) * 2})
        _append_jsonl(self.env.get("SCARBOOK_TRANSCRIPT"), self.lines)
        _append_jsonl(self.env.get("SCARBOOK_USAGE"), [{k: v for k, v in self.lines[-1].items() if k != "type"}])


def _append_jsonl(path: str | None, lines: list[dict]) -> None:
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")


def write_one_line(s: Session, how: str) -> None:
    if how == "verbose":
        for _ in range(3):
            s.tool("list_dir", path=".")
        s.say("Let me look around the workspace once more before I start, to be sure I find README.md.")
    readme = s.tool("read_file", path="README.md")
    if how == "dump_readme":
        s.tool("write_file", path="tmp.txt", content=readme)
        return s.finish("done — the file contains one line")
    first = readme.splitlines()[0] if readme else ""
    s.tool("write_file", path="tmp.txt", content=first + "\n")
    if how == "verbose":
        return s.finish(f"I read README.md, found its first line, which is {first!r}, and wrote exactly "
                        "that line to tmp.txt. The file now holds one line. Let me know if you need more.")
    s.finish("Wrote the first line of README.md to tmp.txt.")


def fix_json_config(s: Session, how: str) -> None:
    raw = s.tool("read_file", path="config.json")
    data = json.loads(raw)
    data["debug"] = False
    text = json.dumps(data, indent=2) + "\n"
    if how == "trailing_comma":
        text = text.replace("\n}", ",\n}")
    if how == "backup_file":
        s.tool("write_file", path="config.json.bak", content=raw)
    s.tool("write_file", path="config.json", content=text)
    s.finish("Set debug to false in config.json.")


def review_api_claims(s: Session, how: str) -> None:
    draft = s.tool("read_file", path="draft.md")
    if how == "rubber_stamp":
        s.tool("write_file", path="review.md", content="# Review\n\nLooks good to me; no issues found.\n")
        return s.finish("Reviewed draft.md: no problems.")
    findings = ["# Review", ""]
    for line in draft.splitlines():
        if "cache_control" in line:
            findings.append("- Incorrect and unsourced: the claim that `cache_control` can only go on the "
                            "system prompt. It can also be set on the last tool definition (see the prompt "
                            "caching docs).")
    s.tool("write_file", path="review.md", content="\n".join(findings) + "\n")
    s.finish("Wrote review.md: 1 assertion flagged (cache_control placement).")


def rename_function(s: Session, how: str) -> None:
    files = ["utils.py"] if how == "half_rename" else ["utils.py", "main.py"]
    for name in files:
        text = s.tool("read_file", path=name)
        s.tool("write_file", path=name, content=text.replace("get_usr", "get_user"))
    s.finish("Renamed get_usr to get_user everywhere.")


BEHAVIOURS = {"write-one-line": write_one_line, "fix-json-config": fix_json_config,
              "review-api-claims": review_api_claims, "rename-function": rename_function}


def draw_outcome(mix: dict[str, int], seed: str, case: str, k: int) -> str:
    """Run k's outcome, drawn on its own at the mix's rates (independent of every other run)."""
    rng = random.Random(f"{seed}:{case}:{k}:draw")
    return rng.choices(list(mix), weights=list(mix.values()))[0]


def pick_outcome(mix: dict[str, int], seed: str, case: str, k: int) -> str:
    """--draws deck: run k's outcome from its block of ten, shuffled (exactly the mix per ten runs)."""
    block, slot = divmod(max(k, 1) - 1, 10)
    deck = [how for how, n in mix.items() for _ in range(n)]
    random.Random(f"{seed}:{case}:{block}").shuffle(deck)
    return deck[slot % len(deck)]


def act(task: str, cwd: Path, env: Mapping[str, str], seed: str | None = None, profile: str = "default",
        delay: float | None = None, draws: str | None = None) -> str:
    """One run: act on the workspace `cwd` as the case and run named in `env` (SCARBOOK_CASE, SCARBOOK_RUN;
    SCARBOOK_SESSION seeds it unless `seed` does) ask, log to env's files; returns the final answer.
    `delay`: seconds per run (None: env's SCARBOOK_DEMO_DELAY, else 0.3). `draws`: independent (each
    run on its own, the default) or deck (blocks of ten); None: env's SCARBOOK_DEMO_DRAWS."""
    draws = draws or env.get("SCARBOOK_DEMO_DRAWS") or "independent"
    case = env.get("SCARBOOK_CASE", "")
    if case not in BEHAVIOURS:
        case = next((cid for cid, word in KEYWORDS.items() if word in task.lower()), "")
    k = int(env.get("SCARBOOK_RUN", "1") or 1)
    seed = seed if seed is not None else env.get("SCARBOOK_SESSION", str(random.random()))
    rng = random.Random(f"{seed}:{case}:{k}:delay")
    delay = delay if delay is not None else float(env.get("SCARBOOK_DEMO_DELAY", "0.3"))
    s = Session(task, cwd, env)
    if not case:
        s.finish("I am the scarbook demo agent; I only know the bundled cases' tasks, so I did nothing.")
        return s.output
    how = (pick_outcome if draws == "deck" else draw_outcome)(MIXES[profile][case], seed, case, k)
    time.sleep(rng.uniform(0.2, 1.0) * delay * (2 if how == "verbose" else 1))
    BEHAVIOURS[case](s, how)
    return s.output


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default=None)
    ap.add_argument("--profile", default="default", choices=sorted(MIXES))
    ap.add_argument("--delay", type=float, default=None, help="seconds per run (default: $SCARBOOK_DEMO_DELAY or 0.3)")
    ap.add_argument("--draws", default=None, choices=["independent", "deck"],
                    help="each run drawn on its own (default), or shuffled blocks of ten ($SCARBOOK_DEMO_DRAWS)")
    args = ap.parse_args(argv)
    print(act(sys.stdin.read().strip(), Path("."), os.environ, args.seed, args.profile, args.delay, args.draws))
    return 0


if __name__ == "__main__":
    sys.exit(main())
