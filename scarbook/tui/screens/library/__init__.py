"""The library (home screen): the screen itself (screen.py) and the parts mixed into it — its trends
(trends.py) and its case management actions (case_actions.py)."""

from scarbook.tui.screens.library.screen import LibraryScreen, fit_columns, notes_text

__all__ = ["LibraryScreen", "fit_columns", "notes_text"]
