"""Evaluating rankings: the metrics under each tool's conventions, metric names, staged evaluation and
paired significance tests."""
