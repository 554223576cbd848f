"""Analysing rankers: bias and variance, feature importances and tree dumps, model pools, BL-MART's grid
search, and many independent trainings (configurations x folds x seeds)."""
