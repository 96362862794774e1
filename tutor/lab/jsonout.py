"""The pieces of the lab's ``--json`` output (schema: ``tutor/schemas/lab-json.md``).

Each experiment's ``to_json(result)`` builds its object from these, so every training run,
accuracy bucket and number is written the same way.
"""

from __future__ import annotations

import math
from typing import Any

JSON_VERSION = 2


def rounded(x: float | None, nd: int = 6) -> float | None:
    """``x`` rounded to ``nd`` places; None for a missing or non-finite value."""
    return None if x is None or not math.isfinite(x) else round(x, nd)


def accuracy(a: Any) -> dict[str, Any]:
    """One :class:`engine.lab.BucketAccuracy`."""
    return {"lengths": [a.lo, a.hi], "n": a.n, "token_accuracy": round(a.token_accuracy, 6),
            "sequence_accuracy": round(a.sequence_accuracy, 6)}


def training_run(res: Any, curve_points: int = 200) -> dict[str, Any]:
    """One :class:`engine.lab.TrainResult`: steps, time, the loss curve (thinned), accuracy."""
    losses = list(res.curve.losses)
    stride = max(1, math.ceil(len(losses) / curve_points))
    return {
        "steps": res.steps, "seconds": round(res.seconds, 3),
        "steps_per_second": round(res.steps_per_second, 3) if res.steps else None,
        "interrupted": res.interrupted,
        "final_loss": round(float(sum(losses[-25:]) / len(losses[-25:])), 6) if losses else None,
        "loss_curve": {"stride": stride,
                       "loss_per_token": [round(x, 5) for x in res.curve.smoothed()[stride - 1::stride]]},
        "accuracy": [accuracy(a) for a in res.accuracy],
    }


def header(experiment: str, **fields: Any) -> dict[str, Any]:
    """``{"schema": 2, "experiment": NAME, ...fields}``: how every lab object starts."""
    return {"schema": JSON_VERSION, "experiment": experiment, **fields}


def dumps(obj: dict[str, Any]) -> str:
    """The object as indented JSON, every control character escaped (a loaded record's fields
    are the user's)."""
    from tutor.render.safe import json_dumps  # deferred: loads rich (start-up time)

    return json_dumps(obj, indent=2)
