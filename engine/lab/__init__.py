"""The lab: toy tasks and the experiments behind ``attn-tutor lab`` (lecture §2–4, §8, §11–12).

Claims of the notes, tested on the student's machine with the numba seq2seq of
:mod:`engine.seq2seq` and the attention kernels:

- ``bottleneck``: a fixed context vector fails on long inputs while attention does not
  (Bahdanau et al. 2014, Fig. 2). Both models are trained identically on the same task and
  scored per length bucket with free-running greedy decoding on held-out sequences.
- ``teacher_forcing``: the same model trained with teacher-forcing ratio 1.0 and 0.0.
- ``alignment``: the learned attention weights of a trained model on a test sequence;
  for reversal the mass lies on the anti-diagonal.
- ``train``: one model, any task, sizes, cell, decoder and ratio.
- ``scaling`` / ``saturation`` (:mod:`engine.lab.scaling`): how attention's time and memory
  grow with n, and why scores are divided by √d_k.

Experiments are pure functions: they take settings, ``on_progress(ProgressEvent)`` and
``should_stop() -> bool`` callbacks (both optional; ``on_progress`` may be called from a
worker thread; see :mod:`engine.lab.progress`), and return result dataclasses. A stop
request ends the run early; the result then says so (``interrupted=True`` on training
results, ``stopped=True`` on measurements) and holds what was done so far. Nothing here
prints.
"""

from engine.lab.experiments import (
                                    AlignmentResult,
                                    AlignmentSettings,
                                    BottleneckResult,
                                    BottleneckSettings,
                                    TeacherForcingResult,
                                    TeacherForcingSettings,
                                    alignment,
                                    alignment_of,
                                    bottleneck,
                                    ratio_label,
                                    teacher_forcing,
)
from engine.lab.progress import ProgressEvent, ProgressFn, StopFn
from engine.lab.scaling import (
                                    SaturationResult,
                                    SaturationSettings,
                                    ScalingResult,
                                    ScalingSettings,
                                    saturation,
                                    scaling,
)
from engine.lab.tasks import (
                                    BOS,
                                    DIGIT0,
                                    EOS,
                                    PAD,
                                    TASK_HELP,
                                    TASKS,
                                    TOKENS,
                                    VOCAB_SIZE,
                                    TestSet,
                                    bucketed_lengths,
                                    expected_alignment,
                                    length_buckets,
                                    make_batch,
                                    make_test_set,
                                    token_labels,
)
from engine.lab.training import (
                                    BucketAccuracy,
                                    LossCurve,
                                    TrainResult,
                                    TrainSettings,
                                    evaluate,
                                    learning_rate,
                                    train,
                                    train_model,
                                    warm_up,
)

__all__ = [
    "BOS", "DIGIT0", "EOS", "PAD", "TASKS", "TASK_HELP", "TOKENS", "VOCAB_SIZE",
    "AlignmentResult", "AlignmentSettings", "BottleneckResult", "BottleneckSettings",
    "BucketAccuracy", "LossCurve", "ProgressEvent", "ProgressFn", "StopFn",
    "TeacherForcingResult", "TeacherForcingSettings", "TestSet", "TrainResult", "TrainSettings",
    "alignment", "alignment_of", "bottleneck", "bucketed_lengths", "evaluate",
    "expected_alignment", "learning_rate", "length_buckets", "make_batch", "make_test_set",
    "ratio_label", "teacher_forcing", "token_labels", "train", "train_model", "warm_up",
    "SaturationResult", "SaturationSettings", "ScalingResult", "ScalingSettings", "saturation",
    "scaling",
]
