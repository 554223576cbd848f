"""``twinrank`` commands that evaluate: evaluate, compare, diagnose, cost, combine."""
