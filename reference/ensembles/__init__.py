"""The loops that build ensembles: the boosting loop of the papers' algorithm boxes, DART's dropout loop,
and the loop of a random forest."""
