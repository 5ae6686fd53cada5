"""One screen per module: library, editor, launch, live, review, sessions."""
