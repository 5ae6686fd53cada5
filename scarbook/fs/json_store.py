"""scarbook's own JSON files read and written safely: a TinyDB storage that writes atomically and
reads only regular files, and the one message a damaged file gets (history, calibration, verify)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

from scarbook.errors import HistoryError
from scarbook.fs.files import NotAFileError, atomic_write_text, describe_os_error, read_regular_bytes


def damaged_message(path: Path, why: str) -> str:
    return (f"history file {path} is damaged ({why}); the other sessions are unaffected — "
            f"move it aside to silence this: mv {path} {path}.damaged")


def history_folder_problem(folder: Path) -> str | None:
    """What to say when a file stands where the history folder `folder` (or a folder on its way) should be,
    or that folder is one this user cannot read; None when there is none. Every reader says this one
    message: the fix is to move that file or open that folder, not what the reader was after inside it."""
    probe = folder
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if probe.is_dir():
        if os.access(probe, os.R_OK | os.X_OK):
            return None
        where = "that folder" if probe == folder else f"{folder}, inside it"
        return (f"{probe} is a folder this user cannot read: scarbook keeps the run history in {where} — let "
                f"yourself read it (chmod u+rx {probe}), or run scarbook as its owner")
    return (f"{probe} is a file, not a folder: scarbook keeps the run history in that folder — move the file aside "
            f"(mv {probe} {probe}.damaged); the next `scarbook eval` starts a new history there")


def read_history_file(path: Path) -> bytes | None:
    """The bytes of a history file, None when there is none; anything else that stops it being read
    (a FIFO or a folder in its place, no permission) is a HistoryError naming the file and the fix."""
    try:
        return read_regular_bytes(path)
    except FileNotFoundError:
        return None
    except NotAFileError as exc:
        raise HistoryError(damaged_message(path, f"it is {exc.kind}, not a file")) from None
    except PermissionError as exc:
        folder = history_folder_problem(path.parent)  # the folder closed, not the file
        if folder:
            raise HistoryError(folder) from None
        raise HistoryError(f"history file {path} cannot be read ({exc.strerror}); the other sessions are "
                           f"unaffected — let yourself read it (chmod u+r {path}) or move it aside: "
                           f"mv {path} {path}.damaged") from None
    except NotADirectoryError:
        raise HistoryError(history_folder_problem(path.parent) or damaged_message(path, "a file stands where a folder "
                                                                                         "on its way should be")) from None
    except OSError as exc:
        raise HistoryError(damaged_message(path, f"it cannot be read: {describe_os_error(exc)}")) from None


class AtomicJSONStorage(Storage):
    """TinyDB storage that never leaves a half-written file behind, and reads only regular files."""

    def __init__(self, path: str, **_: Any) -> None:
        # No mkdir here: atomic_write_text makes the folder on the first write, and opening a file
        # to read it (every session.json, for `scarbook list`) must cost no extra system calls.
        self.path = Path(path)

    def read(self) -> dict[str, Any] | None:
        data = read_history_file(self.path)
        if data is None:
            return None
        if not data.strip():
            raise HistoryError(damaged_message(self.path, "the file is empty"))
        try:
            doc = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise HistoryError(damaged_message(self.path, f"not UTF-8 text: byte {data[exc.start]:#04x} at "
                                                          f"offset {exc.start}")) from None
        except json.JSONDecodeError as exc:
            raise HistoryError(damaged_message(self.path, f"{exc.msg}: line {exc.lineno} column {exc.colno}")) from None
        if not isinstance(doc, dict) or not all(isinstance(t, dict) and all(isinstance(d, dict) for d in t.values())
                                                for t in doc.values()):
            raise HistoryError(damaged_message(self.path, "it is not a TinyDB file of tables of records"))
        return doc

    def write(self, data: dict[str, Any]) -> None:
        atomic_write_text(self.path, json.dumps(data, separators=(",", ":")), durable=False)

    def close(self) -> None:
        pass
