"""Tile-size calibration: the engine picks the fastest measured pair; the tutor caches it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import engine.flash as flash
from tutor import calibration


@pytest.fixture(autouse=True)
def _restore_blocks():
    before = flash._tiles
    yield
    flash._tiles = before


def test_calibrate_picks_the_pair_the_clock_says_is_fastest():
    cands = ((8, 16), (16, 8), (4, 4))
    cost = {(8, 16): 3.0, (16, 8): 1.0, (4, 4): 2.0}
    now = [0.0]
    calls = []
    real = flash.flash_attention

    def fake_attention(Q, K, V, *, block_q, block_k):    # advances the fake clock per call
        calls.append((block_q, block_k))
        now[0] += cost[(block_q, block_k)]
        return real(Q, K, V, block_q=block_q, block_k=block_k)

    def clock():
        return now[0]

    before = flash.get_blocks()
    orig = flash.flash_attention
    flash.flash_attention = fake_attention
    try:
        res = flash.calibrate_blocks(n=32, d=4, candidates=cands, repeat=2, clock=clock)
    finally:
        flash.flash_attention = orig
    assert res["best"] == (16, 8)
    assert res["seconds"] == {"8x16": 3.0, "16x8": 1.0, "4x4": 2.0}
    assert len(calls) == 3 * (1 + 2)                        # one warm-up plus repeat rounds each
    assert flash.get_blocks() == before                     # measuring sets nothing


def test_quadruples_set_the_blas_pieces_too():
    res = flash.calibrate_blocks(n=40, d=4, candidates=((8, 16, 3, 5), (16, 16, 16, 16)), repeat=1)
    assert res["best"] in ((8, 16, 3, 5), (16, 16, 16, 16))
    assert set(res["seconds"]) == {"8x16/3x5", "16x16/16x16"}
    flash.set_blocks(*res["best"])
    assert flash.get_pieces() == res["best"][2:]


def test_set_blocks_changes_the_default_and_results_do_not():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((40, 4)) for _ in range(3))
    want = flash.flash_attention(Q, K, V)
    pieces = flash.get_pieces()
    flash.set_blocks(7, 9)
    assert flash.get_blocks() == (7, 9) and flash.get_pieces() == pieces  # pieces kept
    np.testing.assert_allclose(flash.flash_attention(Q, K, V), want, rtol=0, atol=1e-13)
    flash.set_blocks(16, 32, 5, 3)                          # pieces smaller than a tile, odd
    assert flash.get_pieces() == (5, 3)
    np.testing.assert_allclose(flash.flash_attention(Q, K, V, causal=True),
                               flash.flash_attention(Q, K, V, causal=True, block_q=128,
                                                     block_k=512, piece_rows=64, piece_keys=128),
                               rtol=0, atol=1e-13)
    with pytest.raises(ValueError, match="^block_q"):
        flash.set_blocks(0, 9)
    flash.reset_blocks()
    assert flash.get_blocks() + flash.get_pieces() == flash.default_tiles()


@pytest.mark.parametrize("core, want", [
    ("SkylakeX", flash.SMALL_PIECE_TILES), ("COOPERLAKE", flash.SMALL_PIECE_TILES),
    ("SapphireRapids", flash.SMALL_PIECE_TILES), ("Haswell", flash.WHOLE_TILE_TILES),
    ("Zen", flash.WHOLE_TILE_TILES), ("Sandybridge", flash.WHOLE_TILE_TILES)])
def test_default_tiles_follow_the_blas_kernels(core, want):
    assert flash.default_tiles(core) == want


def test_no_named_openblas_keeps_the_small_pieces(monkeypatch):
    monkeypatch.setattr(flash.single_threaded_blas, "architecture", lambda: None)
    assert flash.default_tiles() == flash.SMALL_PIECE_TILES
    monkeypatch.setattr(flash.single_threaded_blas, "architecture", lambda: "Zen")
    flash.reset_blocks()
    assert flash.get_blocks() == (256, 512) and flash.get_pieces() == (256, 512)


def test_architecture_is_scipys_openblas(monkeypatch):
    from types import SimpleNamespace

    from engine._blas import SingleThreadedBlas

    guard = SingleThreadedBlas()
    libs = [SimpleNamespace(internal_api="openblas", architecture="Prescott",
                            filepath="/v/site-packages/numpy.libs/libscipy_openblas64_-a.so"),
            SimpleNamespace(internal_api="mkl", architecture=None, filepath="/v/libmkl_rt.so"),
            SimpleNamespace(internal_api="openblas", architecture="Zen",
                            filepath="/v/site-packages/scipy.libs/libscipy_openblas-b.so")]
    guard._controller = SimpleNamespace(lib_controllers=libs)
    assert guard.architecture() == "Zen"
    guard._controller = SimpleNamespace(lib_controllers=libs[:2])
    assert guard.architecture() == "Prescott"               # only numpy's: still an OpenBLAS
    guard._controller = SimpleNamespace(lib_controllers=libs[1:2])
    assert guard.architecture() is None


def test_both_default_tilings_match_the_reference():
    from tests import reference as ref

    rng = np.random.default_rng(5)
    L, S, d = 300, 1100, 8                                  # several 256 x 512 tiles, ragged ends
    Q, K, V = (rng.standard_normal((n, d)) for n in (L, S, S))
    pad = rng.random(S) > 0.2
    mask = ref.causal_mask(L, S) & pad[None, :]
    want, _ = ref.attention_2d(Q, K, V, mask)
    for tiles in (flash.SMALL_PIECE_TILES, flash.WHOLE_TILE_TILES):
        bq, bk, pr, pk = tiles
        got = flash.flash_attention(Q, K, V, causal=True, key_padding=pad, block_q=bq,
                                    block_k=bk, piece_rows=pr, piece_keys=pk)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_tutor_saves_once_then_reuses(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path))
    runs = []

    def fake_calibrate():
        runs.append(1)
        return {"best": (64, 256), "seconds": {"64x256": 0.01}, "n": 2048, "d": 64,
                "dtype": "float32", "threads": 1}

    monkeypatch.setattr(flash, "calibrate_blocks", fake_calibrate)
    first = calibration.use_calibrated_blocks()
    assert first["calibrated"] is True and flash.get_blocks() == (64, 256)
    saved = json.loads(calibration.cache_path().read_text())
    assert saved[calibration.machine_key()]["best"] == [64, 256]
    flash.set_blocks(128, 512)
    second = calibration.use_calibrated_blocks()
    assert second["calibrated"] is False and runs == [1] and flash.get_blocks() == (64, 256)


def test_damaged_or_foreign_cache_is_recalibrated(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path))
    monkeypatch.setattr(flash, "calibrate_blocks", lambda: {"best": (32, 64), "seconds": {}})
    path = calibration.cache_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert calibration.use_calibrated_blocks(calibrate=False) is None
    path.write_text(json.dumps({calibration.machine_key(): {"best": [0, "x"]}}))
    assert calibration.use_calibrated_blocks()["best"] == [32, 64]
    assert flash.get_blocks() == (32, 64)
