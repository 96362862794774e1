"""`attn-tutor quiz`: scripted --plain sessions through stdin, the stored history, the modes,
and the session state machine with an injected clock."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
from typer.testing import CliRunner

from tutor.cli import app
from tutor.quiz import bank as bank_mod
from tutor.quiz.bank import Question
from tutor.quiz.modes import Item, select
from tutor.quiz.session import QuizSession
from tutor.store import StoreError, open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)

BANK = [
    Question(id="t-mcq", kind="mcq", section="encoder-decoder", prompt="Which letter is b?",
             answer=1, explanation="b is the second letter.", difficulty=1,
             choices=("first", "second", "third"), exam_topics=("exam-encoder-decoder",),
             why_wrong=("[first] comes before b.", "", "c is the third letter.")),
    Question(id="t-tf", kind="true_false", section="qkv", prompt="W_Q changes per input.",
             answer=False, explanation="The projections are fixed after training.",
             difficulty=1, hint="Think about training vs inference."),
    Question(id="t-num", kind="fill", section="scoring", prompt="Scaled score of Q=[1,0,-1], K=[0,1,-1]?",
             answer=0.5774, tolerance=0.01, explanation="1/√3.", difficulty=2,
             trace="scoring-compare", exam_topics=("exam-scaled-dot",)),
    Question(id="t-free", kind="free", section="training", prompt="Why sum the loss?",
             answer="Longer sequences weigh more.", explanation="See §12.", difficulty=3,
             key_points=("sum over steps",)),
]


@pytest.fixture
def fixture_bank(monkeypatch):
    monkeypatch.setattr(bank_mod, "load_bank", lambda root=None: list(BANK))
    return BANK


def _quiz(args, stdin):
    return CliRunner().invoke(app, ["quiz", "--plain", *args], input=stdin)


def test_a_wrong_choice_is_told_why(fixture_bank):
    result = _quiz(["--mode", "review", "--no-generated", "--topic", "encoder-decoder"], "a\n")
    assert result.exit_code == 0, result.output
    assert "Wrong." in result.output and "You chose a; the answer is b) second." in result.output
    assert "Why not a: [first] comes before b." in result.output  # brackets shown as typed


def test_scripted_review_session_grades_and_saves(fixture_bank):
    stdin = "\n".join([
        "z", "b",                 # out of range → re-asked; then right
        "", "maybe", "t",         # empty, unreadable → re-asked; then wrong
        "abc", "0.585",           # a word for a number → re-asked; then right within ±0.01
        "my own answer", "9", "2",  # self-graded: a bad rating re-asked, then Hard
    ]) + "\n"
    result = _quiz(["--mode", "review", "--no-generated"], stdin)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Question 1/4 · encoder-decoder" in out and "  b) second" in out
    assert "Not an answer: Choose a–c (or 1–3)." in out
    assert "Not an answer: Type an answer first." in out
    assert "Not an answer: Answer true or false" in out
    assert "Not an answer: Type a number" in out
    assert out.count("Correct.") == 2 and out.count("Wrong.") == 1
    assert "Hint: Think about training vs inference." in out  # shown after the miss
    assert "See it step by step: attn-tutor trace scoring-compare" in out
    assert "Model answer: Longer sequences weigh more." in out and "  - sum over steps" in out
    assert "Not a rating: type 1, 2, 3 or 4" in out and "Rated Hard." in out
    assert "Session complete (review)." in out
    assert "Answered 4 of 4; correct 2 of 3 marked (67%)" in out

    with open_store() as s:
        rows = s.answers()
        assert [a.question_id for a in rows] == ["t-mcq", "t-tf", "t-num", "t-free"]
        assert [a.correct for a in rows] == [True, False, True, None]
        assert [a.rating for a in rows] == [3, 1, 3, 2]  # Good, Again, Good, Hard (self)
        assert [a.response for a in rows] == ["b", "t", "0.585", "my own answer"]
        assert {a.mode for a in rows} == {"review"} and len({a.session for a in rows}) == 1
        assert all(s.card(q.id).reps == 1 for q in BANK)


def test_end_of_input_mid_session_keeps_answers(fixture_bank):
    result = _quiz(["--mode", "review", "--no-generated"], "b\n")
    assert result.exit_code == 0
    assert "End of input." in result.output
    assert "Session stopped (review)." in result.output
    assert "Answered 1 of 4, skipped 1" in result.output
    with open_store() as s:
        assert [a.question_id for a in s.answers()] == ["t-mcq"]


def test_quit_and_skip_commands(fixture_bank):
    result = _quiz(["--mode", "review", "--no-generated"], ":hint\n:skip\n:hint\n:quit\n")
    assert result.exit_code == 0
    assert "No hint for this one." in result.output
    assert "Skipped (not saved)." in result.output
    assert "Hint: Think about training vs inference." in result.output
    assert "Session stopped" in result.output
    with open_store() as s:
        assert s.answers() == []


def test_ctrl_c_ends_with_summary_and_code_130(fixture_bank, monkeypatch):
    from tutor.quiz import plain

    lines = iter(["b"])

    def fake_readline(self, timeout=None):
        try:
            return next(lines)
        except StopIteration:
            raise KeyboardInterrupt from None

    monkeypatch.setattr(plain.LineReader, "readline", fake_readline)
    result = _quiz(["--mode", "review", "--no-generated"], "")
    assert result.exit_code == 130
    assert "Interrupted." in result.output and "Answered 1 of 4" in result.output
    with open_store() as s:
        assert len(s.answers()) == 1


def test_generated_problem_session(fixture_bank):
    with open_store() as s:
        items = select("practice", bank=[], store=s, topics={"pooling"}, seed=5).items
    [item] = items
    problem = item.problem
    answers = [f"{problem.parts[0].answer:g}", "abc", f"{problem.parts[1].answer + 1:.2f}",
               f"{problem.parts[2].answer:.3f}"]
    result = _quiz(["--topic", "pooling", "--seed", "5"], "\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Question 1/1 · pooling · generated" in out
    assert "(a) Max pooling?" in out and "(c) Attention pooling" in out
    assert out.count("Not an answer") == 1
    # marked part by part: two of three right is partly right, not "Wrong."
    assert "Partly right: 2 of 3 parts." in out and "Wrong." not in out
    assert "(a) ✓ Right:" in out and "(b) ✗ Not quite" in out and "(c) ✓ Right:" in out
    assert f"See it step by step: {problem.trace_command}" in out
    with open_store() as s:
        [a] = s.answers()
        # the schedule sees the partial credit: 2 of 3 parts is Hard, not Again
        assert a.question_id == "gen:pooling" and a.correct is False and a.rating == 2
        assert a.parts == (True, False, True) and a.score == 2 / 3
        assert a.variant == str(problem.seed)
        assert a.response == " | ".join([answers[0], answers[2], answers[3]])


def test_retry_brings_back_the_same_numbers(fixture_bank):
    with open_store() as s:
        first = select("practice", bank=[], store=s, topics={"pooling"}, seed=5).items[0]
    _quiz(["--topic", "pooling", "--seed", "5"], "0\n0\n0\n")  # wrong
    result = _quiz(["--mode", "retry"], "")
    assert first.problem.prompt in result.output
    with open_store() as s:
        again = select("retry", bank=list(BANK), store=s).items
        assert [i.question_id for i in again] == ["gen:pooling"]
        assert again[0].problem.prompt == first.problem.prompt


def test_mock_exam_saves_history_and_leaves_schedule(fixture_bank):
    # a review first, so there is a card whose state must survive the mock exam
    _quiz(["--mode", "review", "--no-generated", "--count", "1"], "b\n")
    with open_store() as s:
        card_before = s.card("t-mcq")
    with open_store() as s:
        first = select("mock", bank=BANK, store=s, generated=False, seed=2).items[0]
    answer = {"mcq": "a", "true_false": "true", "fill": "1"}[first.kind]
    result = _quiz(["--mode", "mock", "--no-generated", "--seed", "2"], answer + "\n")
    assert result.exit_code == 0, result.output
    assert "Recorded." in result.output and "Correct." not in result.output
    assert "Mock exam score:" in result.output
    with open_store() as s:
        assert s.card("t-mcq") == card_before  # same due, reps, state
        assert all(s.card(q) is None for q in ("t-tf", "t-num", "t-free"))
        [exam] = s.mock_exams()
        assert exam.n_questions == 3  # the self-graded item is left out of mock exams
        assert exam.answered == 1 and exam.status == "stopped"
        assert sum(v[1] for v in exam.per_topic.values()) == 3
        mock_answers = s.answers(mode="mock")
        assert len(mock_answers) == 1 and mock_answers[0].rating is None
        assert mock_answers[0].mock_id == exam.id


def test_bad_options_are_one_line_errors(fixture_bank):
    r = CliRunner().invoke(app, ["quiz", "--plain", "--topic", "attention-is-all"])
    assert r.exit_code == 2
    assert "--topic 'attention-is-all': not a lesson or exam topic" in r.output
    r = CliRunner().invoke(app, ["quiz", "--plain", "--mode", "cram"])
    assert r.exit_code == 2 and "no quiz mode 'cram'. Expected one of practice" in r.output
    r = CliRunner().invoke(app, ["quiz", "--plain", "--count", "0"])
    assert r.exit_code == 2 and "--count 0" in r.output


def test_empty_modes_explain_themselves(fixture_bank):
    r = _quiz(["--mode", "weak"], "")
    assert r.exit_code == 0 and "No history yet" in r.output
    r = _quiz(["--mode", "retry"], "")
    assert "Nothing to retry" in r.output


def test_topic_forms():
    from tutor.quiz.modes import resolve_topics

    assert resolve_topics(["8", "scoring", "exam-decoding", "cross-entropy"]) == {
        "scoring", "exam-decoding", "exam-cross-entropy"}


def test_quiz_and_stats_help_stay_light():
    code = (
        "import sys\nfrom tutor.cli import app\n"
        "for cmd in ('quiz', 'stats'):\n"
        "    try:\n        app([cmd, '--help'])\n    except SystemExit:\n        pass\n"
        "print('numba' in sys.modules, 'textual' in sys.modules, 'fsrs' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False False False"


# ----------------------------------------------------------------------------- the session


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _session(store, items, mode="practice", **kw):
    return QuizSession(items, store=store, mode=mode, now=lambda: T0, **kw)


def test_multi_part_reveals_nothing_until_saved(tmp_path):
    from tutor.quiz.generators import generate

    problem = generate("pooling", 1)
    with open_store(tmp_path / "p.sqlite3", now=lambda: T0) as store:
        s = _session(store, [Item(problem=problem)])
        s.next()
        fb = s.submit(str(problem.parts[0].answer))
        assert fb.valid and not fb.done and fb.correct is None and fb.verdicts == ()
        assert store.answers() == []
        s.submit(str(problem.parts[1].answer))
        fb = s.submit(str(problem.parts[2].answer))
        assert fb.done and fb.correct is True and len(fb.verdicts) == 3
        assert fb.due == T0 + timedelta(minutes=10)  # FSRS: Good on a new card → 2nd step
        assert len(store.answers()) == 1
        assert s.next() is None
        summary = s.finish()
        assert summary.status == "finished" and summary.correct == 1
        assert s.finish() is summary  # idempotent


def test_mock_exam_does_not_touch_cards_and_times_out(tmp_path):
    clock = Clock()
    items = [Item(question=q) for q in BANK[:3]]
    with open_store(tmp_path / "p.sqlite3", now=lambda: T0) as store:
        store.record_answer("t-mcq", "encoder-decoder", correct=True, rating=3, at=T0,
                            update_card=lambda old, at: {"due": (at + timedelta(days=3)).isoformat()})
        before = store.cards()
        s = _session(store, items, mode="mock", time_limit_s=60, clock=clock)
        s.next()
        fb = s.submit("a")  # wrong, but not revealed
        assert fb.done and fb.reveal is False and fb.due is None
        s.next()
        clock.t = 61.0
        fb = s.submit("false")
        assert fb.expired and not fb.valid
        assert s.next() is None
        summary = s.finish()
        assert summary.status == "timed-out"
        assert summary.exam_per_topic == {"encoder-decoder": [0, 1], "qkv": [0, 1], "scoring": [0, 1]}
        assert store.cards() == before
        [exam] = store.mock_exams()
        assert (exam.answered, exam.correct, exam.status) == (1, 0, "timed-out")


def test_unsaved_answer_is_reported(tmp_path, monkeypatch):
    with open_store(tmp_path / "p.sqlite3", now=lambda: T0) as store:
        s = _session(store, [Item(question=BANK[0])])
        s.next()

        def broken(*a, **k):
            raise StoreError("could not save progress: disk I/O error")

        monkeypatch.setattr(store, "record_answer", broken)
        fb = s.submit("b")
        assert fb.done and fb.correct is True and fb.saved is False and "disk I/O" in fb.error
        assert s.finish().unsaved == 1


def test_self_graded_needs_a_rating(tmp_path):
    with open_store(tmp_path / "p.sqlite3", now=lambda: T0) as store:
        s = _session(store, [Item(question=BANK[3])])
        s.next()
        fb = s.submit("because")
        assert fb.needs_rating and not fb.done and fb.expected == ("Longer sequences weigh more.",)
        with pytest.raises(RuntimeError):
            s.submit("again")
        with pytest.raises(ValueError):
            s.rate(7)
        fb = s.rate(4)
        assert fb.done and fb.correct is None and fb.rating == 4
        [a] = store.answers()
        assert a.correct is None and a.rating == 4 and a.response == "because"


def test_selection_modes(tmp_path):
    now = T0 + timedelta(days=10)
    with open_store(tmp_path / "p.sqlite3", now=lambda: now) as store:
        from tutor.quiz import scheduler as sch

        fuzzless = sch.make_scheduler(fuzzing=False)
        for q, ok, days in (("t-mcq", True, 9), ("t-tf", False, 1), ("t-num", True, 0.1)):
            at = now - timedelta(days=days)
            store.record_answer(q, "x", correct=ok, rating=int(sch.rating_for(ok)), at=at,
                                update_card=sch.updater(q, sch.rating_for(ok), fuzzless))
        review = select("review", bank=BANK, store=store, generated=False, now=now)
        due = [c.question_id for c in store.due_cards(now)]
        assert [i.question_id for i in review.items][:len(due)] == due
        assert review.items[-1].question_id == "t-free"  # never seen: after the due ones
        weak = select("weak", bank=BANK, store=store, generated=False, now=now,
                      scheduler=fuzzless)
        assert weak.items[0].question_id == "t-tf"  # the one answered wrong
        assert "t-free" not in [i.question_id for i in weak.items]
        retry = select("retry", bank=BANK, store=store, generated=False)
        assert [i.question_id for i in retry.items] == ["t-tf"]
        a = select("practice", bank=BANK, store=store, seed=3, count=3)
        b = select("practice", bank=BANK, store=store, seed=3, count=3)
        assert [i.question_id for i in a.items] == [i.question_id for i in b.items]
        assert len(a.items) == 3
        mock = select("mock", bank=BANK, store=store, generated=False, seed=1)
        assert "t-free" not in [i.question_id for i in mock.items]
        assert len({i.section for i in mock.items}) == len(mock.items)  # round robin
