"""Random draws (shared, defined once in ``twinrank.reference.sampling``): same seed, same draws."""
from twinrank.reference.sampling import bootstrap, dropout_set, feature_masks, make_rng, subsample, subset_size

__all__ = ["make_rng", "subset_size", "feature_masks", "subsample", "bootstrap", "dropout_set"]
