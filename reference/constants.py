r"""The constants both twins share: bins, slots, the leaf marker, dtypes.

As scikit-learn's ``_hist_gradient_boosting/common.pxd``, one module holds every
dtype of the data model and the numbers whose meaning the kernels agree on.

**Why sums are float64.** Gradients and hessians are float64, and every sum of
them (histogram slots, node totals, leaf values, gains) is accumulated in float64:
a node of $n$ rows sums $n$ terms, and float32's 24-bit mantissa would lose the
last bits of $G = \sum_i g_i$ already at $n \approx 10^4$, changing split choices
between two summation orders. In float64 two orders (the reference's vectorised
sums, the fast twin's parallel blocks) agree to about $n \cdot 2^{-53}$ relative,
which the agreement tests' tolerances allow. Features are float32 (the LETOR files'
precision); thresholds between them are float64 midpoints, compared in float64.
"""
from __future__ import annotations

import numpy as np

MISSING_BIN = 255  # the uint8 bin of a missing (NaN) value; value bins are 0..254
N_SLOTS = MISSING_BIN + 1  # histogram slots per feature: value bins 0..254, then the missing bin
G, H, COUNT = 0, 1, 2  # the three statistics of a histogram slot
LEAF = -1  # a leaf's feature, left, right and missing child

X_DTYPE = np.float32  # features (NaN = missing)
BIN_DTYPE = np.uint8  # binned features
GRADIENT_DTYPE = np.float64  # gradients, hessians and every sum of them (see above)
SCORE_DTYPE = np.float64  # scores F(x)
NODE_DTYPE = np.int32  # node ids, features and bin thresholds of a Tree
OFFSET_DTYPE = np.int64  # query offsets, row indices

# The largest label of an exponential gain 2^l - 1 (NDCG, ERR, LambdaRank): XGBoost's bound
# (LightGBM's default label_gain table stops at 30). 2^1024 overflows float64, and far below
# that the low grades' gains vanish next to the top one's; 31 keeps them all exact.
MAX_LABEL = 31

# The widest model twinrank reads (a model file's n_features, a LightGBM model's max_feature_idx + 1,
# a costs file's feature ids): 2^24 features, a dense float32 row of 64 MiB. Checked before any
# per-feature array is made, so a forged width cannot exhaust memory. The LETOR reader's own
# default bound (max_features) is 65,536 and can be moved; a model wider than this cannot be loaded.
MAX_MODEL_FEATURES = 2**24
