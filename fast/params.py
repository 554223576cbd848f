"""Parameter objects (shared data model, defined once in ``twinrank.reference.params``)."""
from twinrank.reference.params import (AveragingParams, BoostParams, CostParams, DARTParams, FitParams,
                                       ForestParams, LambdaRankParams, McRankParams, TreeParams,
                                       from_names)

__all__ = ["TreeParams", "BoostParams", "ForestParams", "LambdaRankParams", "FitParams",
           "AveragingParams", "McRankParams", "CostParams", "DARTParams", "from_names"]
