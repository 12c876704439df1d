"""Data-flow questions for the cuda and numerics families: the model's
``nkilint.model.dataflow`` and ``nkilint.model.dtypes`` under the names the
rules use (an adapter kept while the rules move to the model API)."""

from __future__ import annotations

from nkilint.model.dataflow import *  # noqa: F401,F403 - re-exported
from nkilint.model.dtypes import FINITE_MAX, FP8_MAX, INTEGER, LOW_PRECISION, ROUNDS_TO_INF  # noqa: F401
from nkilint.model.values import int_bounds  # noqa: F401
