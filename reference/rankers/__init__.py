"""The papers' rankers as estimators: GBRT, LambdaMART, DART, random forests and IGBRT, McRank,
BL-MART and transfer across markets."""
