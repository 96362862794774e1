"""attn-tutor's math engine: numba kernels behind validated public functions.

Nothing here imports the UI (textual, rich, typer) or does I/O. Submodules are imported on
first use so ``import engine`` stays cheap; import from the concept module directly
(``from engine.softmax import softmax``) or use the names re-exported here lazily
(``from engine import softmax, attention`` gives the *functions*).

Two exports share their name with the module that defines them (``softmax``,
``attention``). Importing a submodule normally binds it as an attribute of its package,
which would hide the function from ``from engine import softmax`` once anything had imported
``engine.softmax``. The package's module class therefore declines to bind a submodule under
an exported name: ``engine.softmax`` is always the function, and the module stays reachable
as ``sys.modules["engine.softmax"]``, ``importlib.import_module("engine.softmax")`` or
``from engine.softmax import …``.
"""

from __future__ import annotations

import importlib
import sys
import types

# public name -> defining module; filled in as modules land
_EXPORTS: dict[str, str] = {
    "softmax": "engine.softmax",
    "log_softmax": "engine.softmax",
    "masked_softmax": "engine.softmax",
    "softmax_jacobian": "engine.softmax_backward",
    "softmax_backward": "engine.softmax_backward",
    "padding_mask": "engine.masks",
    "causal_mask": "engine.masks",
    "dot_scores": "engine.scoring",
    "scaled_dot_scores": "engine.scoring",
    "general_scores": "engine.scoring",
    "distance_scores": "engine.scoring",
    "additive_scores": "engine.scoring",
    "dot_product_variance": "engine.scoring",
    "attention": "engine.attention",
    "self_attention": "engine.attention",
    "cross_attention": "engine.attention",
    "multi_head_attention": "engine.attention",
    "attention_backward": "engine.attention_backward",
    "multi_head_attention_backward": "engine.attention_backward",
    "additive_attention": "engine.additive_attention",
    "additive_attention_backward": "engine.additive_attention",
    "flash_attention": "engine.flash",
    "flash_attention_backward": "engine.flash_backward",
    "multi_head_cost": "engine.costs",
    "layer_costs": "engine.costs",
    "sinusoidal_encoding": "engine.positional",
    "max_pool": "engine.pooling",
    "mean_pool": "engine.pooling",
    "attention_pool": "engine.pooling",
    "attention_pool_query": "engine.pooling",
    "rnn_encoder": "engine.rnn",
    "decoder_step": "engine.rnn",
    "bahdanau_step": "engine.rnn",
    "gru_cell": "engine.rnn",
    "lstm_cell": "engine.rnn",
    "cross_entropy": "engine.loss",
    "cross_entropy_grad": "engine.loss",
    "greedy_decode": "engine.decoding",
    "beam_search": "engine.decoding",
    "top_candidates": "engine.decoding",
    "top_k_filter": "engine.decoding",
    "top_p_filter": "engine.decoding",
    "apply_temperature": "engine.decoding",
    "filtered_probs": "engine.decoding",
    "sample_token": "engine.decoding",
    "sample_decode": "engine.decoding",
    "TableModel": "engine.decoding",
    "FunctionModel": "engine.decoding",
    "lecture_beam_example": "engine.traces.lecture_beam",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = sorted(_EXPORTS)


class _Engine(types.ModuleType):
    """``engine``'s module type: an exported name always means the export (see above)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return  # the import system binding engine.softmax (the module): keep the function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Engine
