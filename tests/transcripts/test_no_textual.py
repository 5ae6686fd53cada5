"""The transcript package is core: it must import without Textual."""

import subprocess
import sys


def test_transcripts_import_without_textual():
    code = ("import sys, scarbook.transcripts, scarbook.cases.transcript_draft; "
            "print('textual' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
