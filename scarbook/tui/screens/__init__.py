"""One screen per module (the library, with its mixins, is a package): library, editor, launch, live,
review, sessions, flakes, calibrate, import_scar, help. A screen imports no other screen and not the
App: it asks the App to open another one with a message (tui/messages.py). It may use the dialogs
(tui/dialogs/) and the widgets (tui/widgets/)."""
