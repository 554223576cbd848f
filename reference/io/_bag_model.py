"""The bag of BL-MART: its member ensembles and the rule that combines their scores per query.

A bag is not an additive ensemble: its score of a document depends on the other
documents of the query (min-max and Borda count work within each query), so scoring
needs the query structure. On disk it is one JSON document of the model format with
``algorithm = "bl-mart"``, ``combine``, ``n_features``, ``params``, and ``members``,
each a complete model document (:class:`Ensemble`), checked like any other.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from twinrank.reference._algorithm_params import BAG_RULES as RULES
from twinrank.reference.errors import ModelFormatError
from twinrank.reference.io._ensemble import Ensemble
from twinrank.reference.io._model_fields import join, refuse_unknown, require, typed, width
from twinrank.reference.io._model_json import FORMAT, VERSION, ModelFile, check_header

BAG_ALGORITHM = "bl-mart"  # the algorithm of a bag's model document
BAG_FIELDS = ("format", "version", "checksum", "algorithm", "n_features", "combine", "params", "members")


@dataclass
class BagModel(ModelFile):
    """A fitted BL-MART: ``members`` (Ensembles of ``n_features`` features) and the ``combine`` rule."""

    members: list
    combine: str
    n_features: int
    params: dict = field(default_factory=dict)

    algorithm = BAG_ALGORITHM  # class constants, not fields: what the CLI reports of any model
    best_iteration = None

    def __post_init__(self):
        if not self.members:
            raise ModelFormatError("members: a bag needs at least one member")
        if self.combine not in RULES:
            raise ModelFormatError(f"combine: {self.combine!r} is not one of {', '.join(RULES)}")
        for m, member in enumerate(self.members):
            if member.n_features != self.n_features:
                raise ModelFormatError(f"members[{m}]: takes {member.n_features} features, the bag "
                                       f"{self.n_features}")

    @property
    def n_trees(self) -> int:
        return sum(member.n_trees for member in self.members)

    def to_dict(self) -> dict:
        """The bag as one JSON-ready document: the rule and every member."""
        return {"format": FORMAT, "version": VERSION, "algorithm": BAG_ALGORITHM,
                "n_features": int(self.n_features),
                "combine": self.combine, "params": self.params, "members": [m.to_dict() for m in self.members]}

    @classmethod
    def from_dict(cls, d: dict, path: str = "") -> "BagModel":
        """The bag of :meth:`to_dict`; ModelFormatError naming the field (``members[2].trees[3]...``)."""
        check_header(d, path)
        if d.get("algorithm") != BAG_ALGORITHM:
            raise ModelFormatError(f"a {d.get('algorithm')!r} model is not a BL-MART bag")
        refuse_unknown(d, BAG_FIELDS, path)
        members = typed(require(d, "members", path), list, join(path, "members"))
        return cls(members=[Ensemble.from_dict(m, join(path, f"members[{i}]")) for i, m in enumerate(members)],
                   combine=typed(require(d, "combine", path), str, join(path, "combine")),
                   n_features=width(require(d, "n_features", path), join(path, "n_features")),
                   params=typed(d.get("params", {}), dict, join(path, "params")))
