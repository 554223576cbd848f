"""scikit-learn: the estimator protocol (without importing scikit-learn), a ranking scorer and
query-aware cross-validation splitters."""
