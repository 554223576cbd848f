"""Feature attribution: each feature's share of a model's score of a row (path-dependent TreeSHAP)."""
