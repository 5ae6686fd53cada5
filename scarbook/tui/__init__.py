"""scarbook's Textual app. Only this package imports Textual; `make_app` lives in `app.py`.

May use: every core wing. Nothing else imports it but `scarbook.entry`."""
