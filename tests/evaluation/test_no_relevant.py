"""A query without relevant documents: the table of docs/metrics.md is what both twins compute.

The page states one rule per convention (a metric measured against its best value scores
``no_relevant_value``, a sum scores 0) and a table, metric by metric, of the value under each
preset with the tool it comes from. This test reads that table, so the page cannot drift from
the code, and checks every cell on both twins, on a query of irrelevant documents and on an
empty query.
"""
import re
from pathlib import Path

import numpy as np
import pytest

from twinrank.fast.evaluation import metrics as fast
from twinrank.reference.evaluation import metrics as ref

PAGE = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
PRESETS = {"`lightgbm`, `xgboost`": ["lightgbm", "xgboost"], "`ranklib`": ["ranklib"], "`letor`": ["letor"],
           "`mslr`": ["mslr"], "`trec`": ["trec"], "`mohan`": ["mohan"]}

# a query of three irrelevant documents (tied and untied scores), an empty query, then a query
# with relevant documents (so the call has a positive largest label, as real data does)
Y = np.array([0, 0, 0, 2, 0, 1], dtype=float)
SCORES = np.array([0.3, 0.1, 0.1, 0.5, 0.7, 0.2])
OFFSETS = np.array([0, 3, 3, 6])
IDS = np.array(["a", "b", "c", "d", "e", "f"])


def documented():
    """``[(metric name, preset, value)]`` from the table under "A query without relevant documents"."""
    text = PAGE.read_text()
    section = text[text.index("## A query without relevant documents"):]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    cells = []
    for line in lines[2:]:
        row = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([^`]+)`", row[0]):
            for column, value in zip(header[1:], row[1:]):
                for preset in PRESETS.get(column, []):
                    cells.append((name, preset, float(value)))
    return cells


CELLS = documented()


def test_the_table_covers_every_metric_and_preset():
    names = {ref.parse_metric(name)[0] for name, _, _ in CELLS}
    assert names == {"ndcg", "average_precision", "mean_ndcg", "reciprocal_rank", "auc", "pauc", "dcg",
                     "precision", "err"}
    assert {preset for _, preset, _ in CELLS} == set(ref.CONVENTIONS)


@pytest.mark.parametrize("twin", [ref, fast], ids=["reference", "fast"])
@pytest.mark.parametrize("name, preset, value", CELLS)
def test_a_query_without_relevant_documents_scores_the_documented_value(twin, name, preset, value):
    got = twin.evaluate([name], Y, SCORES, OFFSETS, convention=preset, doc_ids=IDS, per_query=True)[name]
    assert got[0] == value, f"{name} under {preset}: a query of irrelevant documents"
    assert got[1] == value, f"{name} under {preset}: an empty query"


@pytest.mark.parametrize("twin", [ref, fast], ids=["reference", "fast"])
@pytest.mark.parametrize("preset", sorted(ref.CONVENTIONS))
def test_one_rule_within_a_convention(twin, preset):
    """Every metric measured against its best value agrees on such a query; every sum is 0."""
    normalised = ["ndcg@3", "ndcg", "meanndcg", "map", "map@3", "rr", "rr@3", "auc", "pauc"]
    sums = ["dcg@3", "p@3", "err@3"]
    got = twin.evaluate(normalised + sums, Y, SCORES, OFFSETS, convention=preset, doc_ids=IDS, per_query=True)
    assert {got[n][0] for n in normalised} == {ref.get_convention(preset).no_relevant_value}
    assert {got[n][0] for n in sums} == {0.0}


@pytest.mark.parametrize("twin", [ref, fast], ids=["reference", "fast"])
def test_rr_with_a_relevant_document_below_the_cutoff_is_zero(twin):
    """The rule is for queries without relevant documents: one ranked below k still scores 0 on rr@k."""
    y, scores = np.array([0, 0, 1.0]), np.array([3, 2, 1.0])
    assert twin.reciprocal_rank(y, scores, np.array([0, 3]), k=2)[0] == 0.0
    assert twin.reciprocal_rank(y, scores, np.array([0, 3]), k=3)[0] == pytest.approx(1 / 3)
