"""What is secret (docs/math.md §16): the shared "What is secret" section, its settings and the redaction view."""
