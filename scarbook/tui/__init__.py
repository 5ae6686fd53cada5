"""scarbook's Textual app. Only this package imports Textual; `make_app` lives in `app.py`."""
