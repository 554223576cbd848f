"""Feature costs: the cost of scoring with a model, and early exits."""
