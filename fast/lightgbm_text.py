"""LightGBM's text model format (model I/O shared once, in ``twinrank.reference.lightgbm_text``)."""
from twinrank.reference.lightgbm_text import from_lightgbm_text, load_lightgbm, save_lightgbm, to_lightgbm_text

__all__ = ["to_lightgbm_text", "save_lightgbm", "from_lightgbm_text", "load_lightgbm"]
