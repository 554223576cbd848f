"""Combining rankers: the exact optimal linear combination of two rankers, and tree weights by exact line
search."""
