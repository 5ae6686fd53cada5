"""fs — scarbook's own file handling: the atomic writer and careful reader (files), race-free reads
inside an agent's workspace (safefs), bounded YAML with line numbers (yamlio), paths kept inside a
workspace (paths) and the TinyDB storage for its JSON records (json_store).

May use: models, errors, text. Used by every wing above."""
