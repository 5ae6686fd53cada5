"""What a shell command an agent ran did to files, as far as its text says: `cat FILE` read it whole,
`cat > FILE <<'EOF' … EOF` wrote it, `sed -i`, `>`, `>>` and `tee` changed it in a way that cannot be
replayed; SWE-agent's own commands (`open FILE`, `create FILE`, `edit SEARCH REPLACE`, `edit N:M …
end_of_edit`) act on the file it has open. Anything else is not guessed at.
"""

from __future__ import annotations

import re
import shlex

from scarbook.transcripts.model import FileOp

SHELL_TOOLS = {"bash", "shell", "sh", "run_shell_command", "execute_command", "exec_command", "local_shell",
               "run_command", "terminal", "execute_bash", "bash_command"}
_HEREDOC = re.compile(r"\Acat\s+(?:>\s*(?P<p1>[^\s<>]+)\s*<<(?P<dash1>-?)\s*(?P<q1>['\"]?)(?P<t1>\w+)(?P=q1)"
                      r"|<<(?P<dash2>-?)\s*(?P<q2>['\"]?)(?P<t2>\w+)(?P=q2)\s*>\s*(?P<p2>[^\s<>]+))[ \t]*\Z")
# (?>\s*\n): the blanks after `edit N:M` taken up to their last newline once (see swe_agent._BASH: `\s*\n` tried
# each blank line of a long run against the rest of the command, quadratic: 2.5 s at 8,000 blank lines)
_SWE_RANGE = re.compile(r"\Aedit\s+(\d+):(\d+)(?>\s*\n)(.*?)\n?end_of_edit\s*\Z", re.S)
_CHAIN = re.compile(r"&&|\|\||;|\|")
_MAY_TOUCH = re.compile(r">|\b(?:sed|perl|tee|cat)\b|\A(?:open|create|edit)\b")
_PLAIN_CAT = re.compile(r"cat[ \t]+([^\s'\"\\|&;<>()$`*?{}\[\]-][^\s'\"\\|&;<>()$`*?{}\[\]]*)")


def shell_ops(command: str, open_file: str | None = None, *, swe_agent: bool = False) -> list[FileOp]:
    """The file operations a command line shows. `swe_agent`: SWE-agent's commands are known too (`open`,
    `create`, `edit`), its `edit` acting on `open_file`. [] when the command touches no file it names,
    or does it in a way not read here."""
    text = command.strip()
    if not _MAY_TOUCH.search(text):
        return []  # most commands (tests, greps, builds) name no file they change or show whole
    m = _PLAIN_CAT.fullmatch(text)
    if m:
        return [FileOp("read", m.group(1), view="verbatim")]
    written = _heredoc(text)
    if written is not None:
        return [written]
    inner = _wrapped(text)
    if inner is not None:
        return shell_ops(inner, open_file, swe_agent=swe_agent)
    m = _SWE_RANGE.match(text) if swe_agent else None
    if m:
        if open_file is None:
            return []
        body = m.group(3)
        return [FileOp("lines", open_file, content=body + "\n" if body else "", insert_line=int(m.group(1)),
                       end_line=int(m.group(2)))]
    if "\n" in text:
        return _unknown_changes(text)
    try:  # no quoting to undo: split on blanks (shlex is slow, and most commands need none of it)
        words = shlex.split(text) if "'" in text or '"' in text or "\\" in text else text.split()
    except ValueError:
        return _unknown_changes(text)
    if not words:
        return []
    head, args = words[0], words[1:]
    if head == "cat" and len(args) == 1 and not _CHAIN.search(text) and ">" not in text and "<" not in text \
            and not args[0].startswith("-"):
        return [FileOp("read", args[0], view="verbatim")]
    if not swe_agent:
        return _unknown_changes(text)
    if head == "open" and 1 <= len(args) <= 2:
        return [FileOp("read", args[0], view="window")]
    if head == "create" and len(args) == 1:
        return [FileOp("write", args[0], content="")]
    if head == "edit" and 2 <= len(args) <= 3 and open_file is not None:
        return [FileOp("edit", open_file, edits=[(args[0], args[1], len(args) == 3 and args[2] == "True")])]
    return _unknown_changes(text)


_SHELLS = ("bash -", "sh -", "zsh -", "/bin/bash -", "/bin/sh -", "/bin/zsh -", "/usr/bin/bash -")


def _wrapped(text: str) -> str | None:
    """The command a `bash -lc '…'` line runs (Codex's `exec --json` streams write every command so, as its
    session logs write ["bash", "-lc", "…"]), else None."""
    if not text.startswith(_SHELLS):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return words[2] if len(words) == 3 and words[1] in ("-c", "-lc") else None


def _heredoc(text: str) -> FileOp | None:
    """`cat > FILE <<'EOF'` (or `cat <<EOF > FILE`), the lines up to EOF: the file's whole new content."""
    first, _, rest = text.partition("\n")
    m = _HEREDOC.match(first.strip())
    if m is None:
        return None
    tag, dash = m.group("t1") or m.group("t2"), m.group("dash1") or m.group("dash2")
    body: list[str] = []
    for line in rest.split("\n"):
        if (line.lstrip("\t") if dash else line).rstrip() == tag:
            return FileOp("write", _unquote(m.group("p1") or m.group("p2")), content="".join(f"{b}\n" for b in body))
        body.append(line.lstrip("\t") if dash else line)
    return None  # no terminator: the command was cut, its content is not known whole


def _unquote(path: str) -> str:
    return path.strip("'\"")


_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}
_IN_PLACE = re.compile(r"\A(?:-[A-Za-z]*i\S*|--in-place\S*)\Z")


def _unknown_changes(text: str) -> list[FileOp]:
    """Files a command changes in a way the log does not show the result of: a redirection (`> f`,
    `>> f`), `tee f`, `sed -i … f` / `perl -i … f`. Quoted text is never taken for either."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    out: list[FileOp] = []
    command: list[str] = []
    for k, tok in enumerate(tokens):
        if tok in (">", ">>", ">|") and k + 1 < len(tokens) and tokens[k + 1] not in _SEPARATORS:
            path = tokens[k + 1]
            if not path.startswith(("/dev/", "&")):
                out.append(FileOp("changed", path, partial=tok == ">>"))  # appended to: it was there before
        if tok in _SEPARATORS or k == len(tokens) - 1:
            out += _command_changes(command + ([tok] if tok not in _SEPARATORS else []))
            command = []
        else:
            command.append(tok)
    return out


def _command_changes(words: list[str]) -> list[FileOp]:
    """The files one simple command changes in place: `sed -i SCRIPT FILE…`, `perl -pi -e … FILE…`, `tee FILE…`."""
    plain = [w for k, w in enumerate(words) if w not in (">", ">>", ">|") and (k == 0 or words[k - 1] not in
                                                                          (">", ">>", ">|"))]
    if not plain:
        return []
    head, args = plain[0], plain[1:]
    if head == "tee":
        appends = "-a" in args or "--append" in args
        return [FileOp("changed", a, partial=appends) for a in args if not a.startswith("-")]
    if head in ("sed", "perl") and any(_IN_PLACE.match(a) for a in args):
        scripted = any(a in ("-e", "--expression") or a.startswith(("-e", "-pe", "-pie")) for a in args)
        rest, skip = [], False
        for a in args:
            if skip:
                skip = False
            elif a in ("-e", "--expression", "-f"):
                skip = True
            elif not a.startswith("-"):
                rest.append(a)
        return [FileOp("changed", a, partial=True) for a in (rest if scripted else rest[1:])]  # edited in place
    return []


def whole_output(text: str) -> bool:
    """A command's output that the harness did not cut (no "lines truncated", no elided characters)."""
    # substring tests, one after another (a regex per output cost more, and so did a generator of them); each
    # long search only once a short one says it can be there: "truncated" and "Truncated" both hold "runcated",
    # and a test for one character ("<", "[") costs a twentieth of a test for a word
    return not ("runcated" in text and ("truncated" in text or "Truncated" in text) or "TRUNCATED" in text
                or "<" in text and ("<elided_chars>" in text or "<output_head>" in text)
                or "[" in text and "[..." in text)


_WINDOW_HEADER = re.compile(r"\A\[File: (?P<path>[^\]\n]*?) \((?P<total>\d+) lines total\)\]\n")
_NUMBERED = re.compile(r"^(\d+):(.*)$")


def window_content(text: str) -> str | None:
    """The whole file SWE-agent's `open` showed ("[File: a.py (10 lines total)]", then "1:line"), or None
    when it showed only a window of it ("(12 more lines below)")."""
    text = _lf(text)
    m = _WINDOW_HEADER.match(text)
    if m is None:
        return None
    lines = text[m.end():].split("\n")
    shown: list[str] = []
    for line in lines:
        n = _NUMBERED.match(line)
        if n is None:
            if line.strip() == "":
                continue
            return None  # "(12 more lines above)": a window
        if int(n.group(1)) != len(shown) + 1:
            return None
        shown.append(n.group(2))
    if len(shown) != int(m.group("total")):
        return None
    return "\n".join(shown)


def window_path(text: str) -> str | None:
    """The path in the header of SWE-agent's `open` output."""
    m = _WINDOW_HEADER.match(_lf(text))
    return m.group("path") if m else None


def _lf(text: str) -> str:
    """`text` with LF line ends (replace() looks for CRLF at a tenth of the speed at which `in` finds no CR)."""
    return text.replace("\r\n", "\n") if "\r" in text else text
