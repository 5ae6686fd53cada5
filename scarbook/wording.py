"""Small words that numbers and names need: "1 case" / "2 cases", a title cut at a word."""

from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """"1 case", "0 cases", "3 runs"; `many` for irregular nouns ("1 child", "2 children")."""
    return f"{n} {noun if n == 1 else (many or noun + 's')}"


def with_article(noun: str) -> str:
    """"a claude-code transcript", "an openai transcript": the article the spoken word takes (by its
    first letter, which is right for the names scarbook prints: formats, agent and executor kinds)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def cut_words(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut at a word boundary with "…" (never mid-word,
    unless a single word is longer than the width)."""
    if len(text) <= width:
        return text
    head = text[:width - 1]
    if text[width - 1] == " ":
        return head.rstrip(" ,;:—-") + "…"  # the cut falls between two words
    space = head.rfind(" ")
    return (head[:space] if space > width // 3 else head).rstrip(" ,;:—-") + "…"
