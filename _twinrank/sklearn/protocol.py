"""The scikit-learn estimator protocol, without importing scikit-learn.

scikit-learn stays optional: the core imports only NumPy (and numba in the fast
twin). A meta-estimator (``GridSearchCV``, ``cross_validate``, ``clone``) finds an
estimator through a few methods, not a base class, so :class:`ScikitLearnProtocol`
writes them out: ``_get_param_names``, ``__sklearn_clone__``, ``__sklearn_tags__``,
``__sklearn_is_fitted__``, and metadata routing (``set_fit_request``,
``set_score_request``, ``get_metadata_routing``). Only the methods scikit-learn
itself calls import scikit-learn, inside the method: they run only when it is there.

Metadata routing (scikit-learn >= 1.4, ``sklearn.set_config(enable_metadata_routing=True)``):
``qid`` is requested by ``fit`` and ``score`` by default, since a ranker cannot fit
or be scored without its queries; ``sample_weight`` (one weight per row: scikit-learn slices it
with the rows), ``eval_set``, ``eval_names``, ``init_score`` and ``callback`` are routed only when
asked for with ``set_fit_request``, as scikit-learn's own estimators ask for ``sample_weight``.
``group`` (query sizes) is not routed: a split cuts rows, not sizes; route ``qid``.
"""
from __future__ import annotations

import copy

# {method: {parameter: request}}; request True (routed), False (not), None (error if passed)
DEFAULT_REQUESTS = {"fit": {"qid": True, "sample_weight": None, "eval_set": None, "eval_names": None,
                            "init_score": None, "callback": None},
                    "score": {"qid": True}}


class ScikitLearnProtocol:
    """What scikit-learn's meta-estimators call on an estimator (see the module docstring)."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return sorted(cls._param_names())

    def __sklearn_clone__(self):
        """An unfitted copy with the same parameters and the same metadata requests."""
        from sklearn.base import clone
        new = type(self)(**{k: clone(v, safe=False) for k, v in self.get_params().items()})
        if "_routing_requests" in vars(self):
            new._routing_requests = copy.deepcopy(self._routing_requests)
        return new

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "model_")

    def __sklearn_tags__(self):
        """A ranker: no estimator type scikit-learn knows (neither classifier nor regressor),
        labels required, NaN allowed in ``X`` (missing values)."""
        from sklearn.utils import InputTags, Tags, TargetTags
        return Tags(estimator_type=None, target_tags=TargetTags(required=True, one_d_labels=True),
                    input_tags=InputTags(allow_nan=True))

    def set_fit_request(self, **requests):
        """Route ``qid`` / ``sample_weight`` / ``eval_set`` / ``eval_names`` / ``init_score`` / ``callback`` to
        ``fit`` (True), or not.

        Each value is True (routed), False (not routed), None (an error if passed) or
        a string (the name the meta-estimator receives it under). Returns ``self``.
        """
        return self._set_requests("fit", requests)

    def set_score_request(self, *, qid=True):
        """Route ``qid`` to :meth:`score` (True, the default), or not. Returns ``self``."""
        return self._set_requests("score", {"qid": qid})

    def get_metadata_routing(self):
        """The ``sklearn.utils.metadata_routing.MetadataRequest`` of this estimator."""
        from sklearn.utils.metadata_routing import MetadataRequest
        request = MetadataRequest(owner=self)
        for method, params in self._requests().items():
            for param, alias in params.items():
                getattr(request, method).add_request(param=param, alias=alias)
        return request

    def _requests(self) -> dict:
        return vars(self).get("_routing_requests", DEFAULT_REQUESTS)

    def _set_requests(self, method: str, requests: dict):
        unknown = sorted(set(requests) - set(DEFAULT_REQUESTS[method]))
        if unknown:
            raise TypeError(f"{type(self).__name__}.set_{method}_request got unknown "
                            f"parameters {unknown}; it routes {sorted(DEFAULT_REQUESTS[method])}")
        self._routing_requests = copy.deepcopy(self._requests())
        self._routing_requests[method].update(requests)
        return self
