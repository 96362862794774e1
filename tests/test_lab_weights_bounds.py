"""`lab … --load FILE.npz` bounds the work before anything big is read (issue 34 §4).

A 48 MB Transformer within every size limit (16 layers a side, d_model 128) took 30 s and
2 GB to score: the file size bounded the bytes, not the work. Now the record is read alone,
the model it describes is counted (``tutor.limits.MAX_PARAMETERS``) and every array's header
is held to the shape that model expects — all before one array is decompressed. The tests
watch which members are decompressed (``NpzFile.__getitem__``) to prove the order.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.fuzz_helpers import assert_clean, error_line, invoke
from tutor.errors import UserError
from tutor.lab import files
from tutor.limits import MAX_PARAMETERS


def _tiny_transformer(path: Path) -> dict:
    from engine.transformer import Transformer, TransformerConfig

    config = TransformerConfig(d_model=4, num_heads=2, d_ff=4, num_encoder_layers=1,
                               num_decoder_layers=1, max_len=8)
    files.save_model(path, Transformer.init(config), {"task": "reverse"}, files.TRANSFORMER_FORMAT)
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _write(path: Path, arrays: dict, **config_changes) -> Path:
    record = json.loads(str(arrays["__record__"]))
    record["config"].update(config_changes)
    np.savez(path, **{**arrays, "__record__": np.array(json.dumps(record))})
    return path


@pytest.fixture
def decompressed(monkeypatch) -> list[str]:
    """The names of the members np.load decompresses, in order (clear it before the call)."""
    seen: list[str] = []
    original = np.lib.npyio.NpzFile.__getitem__

    def watch(self, key):
        seen.append(key)
        return original(self, key)

    monkeypatch.setattr(np.lib.npyio.NpzFile, "__getitem__", watch)
    return seen


def _params(d: int, f: int, layers: int, vocab: int = 13) -> int:
    """Parameters of an encoder-decoder Transformer, counted by hand: per encoder layer a
    self-attention (4 d² + 4 d), a feed-forward (2 d f + d + f) and two norms (4 d); per
    decoder layer one more attention and norm; two embeddings, two final norms and the
    output projection (d V + V)."""
    attn, ff, norm = 4 * d * d + 4 * d, 2 * d * f + d + f, 2 * d
    encoder = attn + ff + 2 * norm
    decoder = 2 * attn + ff + 3 * norm
    return layers * (encoder + decoder) + 2 * vocab * d + 2 * norm + d * vocab + vocab


def test_the_hand_count_matches_the_config():
    from engine.transformer import TransformerConfig

    for d, f, layers in [(4, 4, 1), (128, 384, 16), (64, 64, 2)]:
        config = TransformerConfig(d_model=d, num_heads=2, d_ff=f, num_encoder_layers=layers,
                                   num_decoder_layers=layers, max_len=8)
        assert sum(math.prod(s) for s in config.shapes().values()) == _params(d, f, layers)


def test_a_model_over_the_parameter_limit_is_refused_from_its_record_alone(tmp_path, decompressed):
    # the audit's file: 16 layers a side at d_model 128, d_ff 384 — every size within its own
    # limit — claims 6.4 million parameters; here its record sits on tiny arrays
    assert _params(128, 384, 16) > MAX_PARAMETERS["Transformer"]
    path = _write(tmp_path / "big.npz", _tiny_transformer(tmp_path / "t.npz"), d_model=128,
                  num_heads=8, d_ff=384, num_encoder_layers=16, num_decoder_layers=16)
    decompressed.clear()
    with pytest.raises(UserError, match=f"{_params(128, 384, 16):,} parameters; this tutor runs "
                                        f"at most {MAX_PARAMETERS['Transformer']:,}"):
        files.load_transformer(path)
    assert decompressed == ["__record__"]


def test_the_lab_s_own_transformer_is_well_within_the_limit():
    from engine.lab.transformer import TransformerSettings

    config = TransformerSettings().model_config()
    assert _params(config.d_model, config.d_ff, config.num_encoder_layers,
                   config.vocab_size) * 5 < MAX_PARAMETERS["Transformer"]


def test_an_array_of_the_wrong_shape_is_refused_before_any_array_is_read(tmp_path, decompressed):
    arrays = _tiny_transformer(tmp_path / "t.npz")
    arrays["param/src_embed.weight"] = np.zeros((13, 5))
    path = _write(tmp_path / "bad.npz", arrays)
    decompressed.clear()
    with pytest.raises(UserError, match=r"src_embed.weight: expected shape \(13, 4\) for "
                                        r"d_model = 4, .*got shape \(13, 5\)"):
        files.load_transformer(path)
    assert decompressed == ["__record__"]


def test_an_array_the_model_does_not_have_is_refused_before_it_is_read(tmp_path, decompressed):
    arrays = _tiny_transformer(tmp_path / "t.npz")
    arrays["param/ballast"] = np.zeros(1000)
    path = _write(tmp_path / "bad.npz", arrays)
    decompressed.clear()
    with pytest.raises(UserError, match="holds an array 'param/ballast' that the recorded "
                                        "Transformer does not have"):
        files.load_transformer(path)
    assert decompressed == ["__record__"]


def test_a_record_that_is_not_short_text_is_refused_before_it_is_read(tmp_path, decompressed):
    arrays = _tiny_transformer(tmp_path / "t.npz")
    arrays["__record__"] = np.zeros((3, 3))
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    decompressed.clear()
    with pytest.raises(UserError, match="its record is not the short text attn-tutor writes"):
        files.load_transformer(path)
    assert decompressed == []


def test_a_good_file_reads_the_record_first_then_each_array_once(tmp_path, decompressed):
    arrays = _tiny_transformer(tmp_path / "t.npz")
    decompressed.clear()
    model, _ = files.load_transformer(tmp_path / "t.npz")
    assert decompressed[0] == "__record__"
    assert sorted(decompressed[1:]) == sorted(k for k in arrays if k.startswith("param/"))
    for name, arr in model.to_arrays().items():
        np.testing.assert_array_equal(arr, arrays[f"param/{name}"])


def test_the_cli_refuses_the_big_model_in_one_line(tmp_path):
    path = _write(tmp_path / "big.npz", _tiny_transformer(tmp_path / "t.npz"), d_model=128,
                  num_heads=8, d_ff=384, num_encoder_layers=16, num_decoder_layers=16)
    run = invoke(["lab", "transformer", "--load", str(path)])
    assert_clean(run)
    assert run.code == 2 and "parameters; this tutor runs at most" in error_line(run)
