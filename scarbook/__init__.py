"""scarbook: a scar collection for LLM agents.

The core (everything but ``scarbook.tui``) never imports Textual.
"""

__version__ = "0.1.0"
