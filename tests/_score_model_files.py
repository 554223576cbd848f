"""Score model files in both engines, in a process of its own (run by tests/io/test_model_files.py).

Usage: ``python _score_model_files.py CASES.json``, where the JSON holds ``features``
(a .npy path), ``verify_checksum`` and ``files``. Prints one JSON line per file:
``{"file", "reference": R, "fast": F}`` with R and F each ``{"refused": message}``
for a ModelFormatError on loading (or a twinrank error on scoring), or ``{"scores": [...]}``. Any other exception, a signal or a
hang ends this process abnormally, and the test fails on it.
"""
import json
import sys

import numpy as np

from twinrank.fast.rankers import classification as fast_classification
from twinrank.fast.trees import predict as fast_predict
from twinrank.reference.errors import ModelFormatError, TwinrankError
from twinrank.reference.io.model import McRankModel, load_model
from twinrank.reference.rankers import classification as reference_classification
from twinrank.reference.trees import predict as reference_predict

ENGINES = {"reference": (reference_predict, reference_classification), "fast": (fast_predict, fast_classification)}


def score(path, X, verify, engine) -> dict:
    predict, classification = ENGINES[engine]
    try:
        model = load_model(path, verify_checksum=verify)
    except ModelFormatError as e:
        return {"refused": str(e)}
    try:
        if isinstance(model, McRankModel):
            return {"scores": classification.expected_relevance(model, X).tolist()}
        return {"scores": predict.predict_ensemble(model, X).tolist()}
    except TwinrankError as e:  # a clear refusal at prediction (e.g. a width the data do not have)
        return {"refused": f"at prediction: {e}"}


def main(cases_path) -> None:
    with open(cases_path) as f:
        cases = json.load(f)
    X = np.load(cases["features"])
    for path in cases["files"]:
        print(json.dumps({"file": path, **{e: score(path, X, cases["verify_checksum"], e) for e in ENGINES}}),
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
