"""Regression trees: binning, the histogram grower (one tree at a time, best-first), missing values and
scoring rows with trees."""
