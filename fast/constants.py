"""The constants both twins share (defined once in ``twinrank.reference.constants``)."""
from twinrank.reference.constants import (BIN_DTYPE, COUNT, G, GRADIENT_DTYPE, H, LEAF, MISSING_BIN,
                                          N_SLOTS, NODE_DTYPE, OFFSET_DTYPE, SCORE_DTYPE, X_DTYPE)

__all__ = ["MISSING_BIN", "N_SLOTS", "G", "H", "COUNT", "LEAF", "X_DTYPE", "BIN_DTYPE",
           "GRADIENT_DTYPE", "SCORE_DTYPE", "NODE_DTYPE", "OFFSET_DTYPE"]
