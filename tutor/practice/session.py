"""A practice of one trace: the state machine both front ends drive (``trace --practice
--plain`` and the TUI's trace screen).

Driving it::

    session = PracticeSession.start("qkv", store, level=None, seed=None)
    while (task := session.task) is not None:
        show(session.display_trace(), task)          # blanks read "?" until they are done
        fb = session.submit(read())                  # or session.hint() / session.skip()
        if not fb.valid:                             # not a value of the right shape:
            show(fb.hint); continue                  #   one line, ask again
        show(fb)                                     # mark, diagnosis, or the prompt's reason
    summary = session.finish()                       # level, FSRS review (idempotent)

Each finished task is saved at once (a crash loses at most the one being typed). ``finish``
after the last task moves the trace's level (:mod:`tutor.practice.levels`) and reviews its
FSRS item; ``finish`` before it (``:quit``, end of input) keeps the answers saved so far and
changes neither. A failed write never loses the practice on screen: ``Summary.saved`` is
False with the error.
"""

from __future__ import annotations

import dataclasses
import random
import secrets
import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np

from engine.trace import Step, Trace, fmt
from engine.traces import input_specs
from tutor.content_schema import LESSON_IDS, ContentError
from tutor.practice import levels
from tutor.practice.answers import mark
from tutor.practice.content import PracticePlan, StepPlan, check_against, load_plan, localise
from tutor.practice.levels import HINT_RUNGS, MAX_ATTEMPTS, Outcome
from tutor.practice.tasks import (  # noqa: F401 - the front ends import the tasks from here too
    Blank,
    Feedback,
    PracticeStart,
    Prompt,
    Summary,
    Task,
    choice_index,
)
from tutor.store import Store, StoreError
from tutor.store import practice as stored

HIDDEN = "?"
"""How a blank value reads until it is done."""
HIDDEN_FORMULA = "? (the first hint shows it)"
HIDDEN_NUMBERS = "? (yours to work out)"
SEED_LIMIT = 1_000_000
"""Random seeds of fresh numbers are below this (short to retype with ``--seed``)."""
MAX_DRAWS = 50
"""Draws of fresh inputs tried for one with the shape a trace's practice plan needs."""


def first_practice(store: Store, name: str) -> bool:
    """No practice of trace ``name`` has finished yet (it then uses the notes' numbers)."""
    record = stored.level_of(store, name)
    return record is None or record.practices == 0


def fresh_numbers(name: str, plan: PracticePlan, seed: int
                  ) -> tuple[dict[str, Any], Trace, PracticePlan] | None:
    """Inputs drawn by the trace itself (:func:`engine.traces.draw_inputs`) with ``seed``, the
    trace built on them and the plan in that trace's names; the first of up to
    :data:`MAX_DRAWS` draws with the shape the plan practises (the same steps and values as on
    the notes' numbers), or None when none has it."""
    from engine.traces import build, draw_inputs  # looked up per call: tests replace it

    reference = build(name)
    rng = np.random.default_rng(seed)
    for _ in range(MAX_DRAWS):
        inputs = dict(draw_inputs(name, rng))
        trace = build(name, inputs)
        local = localise(plan, trace, reference)
        if local is not None:
            return inputs, trace, local
    return None


class PracticeSession:
    """See the module docstring."""

    def __init__(self, trace: Trace, plan: PracticePlan, level: int, *, store: Store,
                 overrides: Mapping[str, Any] | None = None, seed: int | None = None):
        self.trace = trace
        self.plan = plan
        self.level = levels.check_level(level, plan.top, trace.name)
        self.store = store
        self.overrides = None if overrides is None else dict(overrides)
        self.seed = seed
        self.session_id = uuid.uuid4().hex[:12]
        self.faded = {plan.steps[i].index for i in levels.faded(level, plan.top)}
        self.tasks: list[Task] = []
        for sp in plan.steps:
            if sp.index in self.faded:
                values = trace.steps[sp.index].values
                self.tasks += [Blank(sp, ask, ask.pick(values[ask.name])) for ask in sp.asks]
            if sp.index in self.faded or self.level == 0:
                order = list(range(len(sp.why.choices)))
                random.Random(f"{self.session_id}:{sp.step}").shuffle(order)
                self.tasks.append(Prompt(sp, tuple(order)))
        self._at = 0
        self._summary: Summary | None = None
        self._errors: list[str] = []

    @classmethod
    def start(cls, name: str, store: Store, *, level: int | None = None,
              seed: int | None = None) -> PracticeSession:
        """A practice of trace ``name`` at ``level`` (which is then stored) or the trace's
        stored level; on the notes' numbers the first time, else (or with ``seed``) on fresh
        numbers (:func:`fresh_numbers`; a random seed if None).

        Raises:
            ValueError: an unknown trace or a level out of range (one line).
            ContentError: the trace's practice plan is broken.
            StoreError: the level could not be saved.
        """
        from engine.traces import build  # looked up per call: tests replace it

        plan = load_plan(name)
        if level is None:
            record = stored.level_of(store, name)
            level = 0 if record is None else min(record.level, plan.top)
        else:
            levels.check_level(level, plan.top, name)
            stored.save_level(store, name, level)
        if seed is None and not first_practice(store, name):
            seed = secrets.randbelow(SEED_LIMIT)
        fresh = None if seed is None else fresh_numbers(name, plan, seed)
        if fresh is None:
            trace = build(name)
            problems = check_against(plan, trace)
            if problems:
                raise ContentError(f"lessons/practice/{name}.toml: {problems[0]}")
            return cls(trace, plan, level, store=store)
        overrides, trace, local = fresh
        return cls(trace, local, level, store=store, overrides=overrides, seed=seed)

    # ------------------------------------------------------------------ where we are

    @property
    def task(self) -> Task | None:
        """The task waiting for an answer; None when every task is done."""
        while self._at < len(self.tasks) and self.tasks[self._at].done:
            self._at += 1
        return self.tasks[self._at] if self._at < len(self.tasks) else None

    @property
    def position(self) -> tuple[int, int]:
        """(1-based number of the current task, tasks)."""
        return min(self._at + 1, len(self.tasks)), len(self.tasks)

    @property
    def stage(self) -> str:
        return levels.stage(self.level, self.plan.top)

    def step_done(self, index: int) -> bool:
        """Whether step ``index`` (0-based) shows its values: not blank, or every blank done."""
        return index not in self.faded or all(
            t.done for t in self.tasks if isinstance(t, Blank) and t.plan.index == index)

    def step_mark(self, index: int) -> str:
        """How a step list marks step ``index`` (0-based): ``?`` while it has open blanks,
        ``✓`` when all were solved, ``✗`` when one was not; ``""`` for a step shown."""
        blanks = [t for t in self.tasks if isinstance(t, Blank) and t.plan.index == index]
        if not blanks:
            return ""
        if not all(t.done for t in blanks):
            return "?"
        return "✓" if all(t.state == "solved" for t in blanks) else "✗"

    def display_trace(self) -> Trace:
        """The trace as the student sees it now: each blank step's values, numbers and note
        read ``?`` until its blanks are done; its formula until a hint shows it."""
        steps = list(self.trace.steps)
        for sp in self.plan.steps:
            if self.step_done(sp.index):
                continue
            step = steps[sp.index]
            hinted = any(t.hints for t in self.tasks if isinstance(t, Blank) and t.plan is sp)
            values = {k: (v if k in sp.given or self._revealed(sp, k) else HIDDEN)
                      for k, v in step.values.items()}
            steps[sp.index] = Step(step.title, step.formula if hinted else HIDDEN_FORMULA,
                                   HIDDEN_NUMBERS, values, "")
        return dataclasses.replace(self.trace, steps=steps)

    def _revealed(self, sp: StepPlan, name: str) -> bool:
        blanks = [t for t in self.tasks if isinstance(t, Blank) and t.plan is sp and t.ask.name == name]
        return bool(blanks) and all(t.done for t in blanks) and all(t.ask.index is None for t in blanks)

    # ------------------------------------------------------------------ answering

    def submit(self, text: str) -> Feedback:
        """Mark the answer to the current task (a value, or a prompt's choice)."""
        task = self.task
        if task is None:
            raise RuntimeError("no task is waiting for an answer")
        if isinstance(task, Prompt):
            return self._choose(task, text)
        result = mark(self.trace.name, self.overrides, task.ask, task.expected, text,
                      name=self.catalogue_name(task))
        if not result.valid:
            return Feedback(valid=False, hint=result.hint)
        task.attempts += 1
        task.answer = text.strip()
        for ident in result.diagnosis_ids:
            if ident not in task.diagnoses:
                task.diagnoses.append(ident)
        if result.correct:
            task.state = "solved"
            return self._saved(task, Feedback(done=True, mark=result, right=True))
        left = MAX_ATTEMPTS - task.attempts
        if left > 0:
            return Feedback(mark=result, right=False, attempts_left=left)
        task.state = "shown"
        return self._saved(task, Feedback(done=True, mark=result, right=False,
                                          shown=self.value_text(task)))

    def _choose(self, task: Prompt, text: str) -> Feedback:
        choice = choice_index(text, task.choices)
        if choice is None:
            return Feedback(valid=False, hint=task.instructions)
        task.choice = choice
        return self._saved(task, Feedback(done=True, right=task.right, reason=task.plan.why.reason,
                                          chosen=task.choices[choice]))

    def hint(self) -> Feedback:
        """The next rung of the current blank's hint ladder (a prompt has no hints): 1 the
        formula, 2 the intermediates it needs, 3 the value (the blank is then not solved)."""
        task = self.task
        if not isinstance(task, Blank):
            return Feedback(valid=False, hint="No hint for a why-question: pick the principle "
                                              "that explains the step.")
        task.hints = min(task.hints + 1, HINT_RUNGS)
        if task.hints == 1:
            return Feedback(hint="Formula: " + self.trace.steps[task.plan.index].formula)
        if task.hints == 2:
            return Feedback(hint=self.needs_text(task.plan))
        task.state = "shown"
        return self._saved(task, Feedback(done=True, right=False, shown=self.value_text(task)))

    def skip(self) -> Feedback:
        """Leave the current task: a blank's value is shown (not solved); a prompt counts wrong."""
        task = self.task
        if task is None:
            raise RuntimeError("no task is waiting")
        if isinstance(task, Prompt):
            task.choice = -1
            return self._saved(task, Feedback(done=True, right=False, reason=task.plan.why.reason))
        task.state = "shown"
        return self._saved(task, Feedback(done=True, right=False, shown=self.value_text(task)))

    def catalogue_name(self, task: Blank) -> str:
        """The blank's value as :func:`engine.mistakes.diagnose` names it (``NAME@STEP`` where
        several steps give the name different numbers)."""
        from engine.mistakes import value_key  # deferred: loads numba (start-up time)

        return value_key(self.trace.name, self.overrides, task.ask.name, task.plan.step) or task.ask.name

    def value_text(self, task: Blank) -> str:
        return f"{task.ask.label} = {fmt(task.expected)}"

    def needs_text(self, sp: StepPlan) -> str:
        """Hint 2: the intermediates the step needs, with their values here."""
        if not sp.needs:
            return "It needs nothing computed before it: start from the inputs."

        about = {spec.name: spec.description for spec in input_specs(self.trace.name)}
        parts = []
        for name in sp.needs:
            part = f"{name} = {fmt(self._lookup(sp, name))}"
            if not self._computed(sp, name) and name in about:  # an input: say what it holds
                part += f" ({about[name]})"
            parts.append(part)
        return "You need: " + "; ".join(parts)

    def _computed(self, sp: StepPlan, name: str) -> bool:
        return any(name in self.trace.steps[i].values for i in range(sp.index + 1))

    def _lookup(self, sp: StepPlan, name: str) -> Any:
        for index in range(sp.index, -1, -1):
            values = self.trace.steps[index].values
            if name in values:
                return values[name]
        return self.trace.inputs[name]

    # ------------------------------------------------------------------ saving

    def _saved(self, task: Task, fb: Feedback) -> Feedback:
        if isinstance(task, Blank):
            name, answer, correct = task.ask.label, task.answer, task.state == "solved"
            attempts, hints, diagnoses = task.attempts, task.hints, tuple(task.diagnoses)
        else:
            choice = task.choice
            answer = "" if choice is None or choice == -1 else task.choices[choice]
            name, correct, attempts, hints, diagnoses = "why", task.right, 1, 0, ()
        try:
            stored.record_step(self.store, session=self.session_id, trace=self.trace.name,
                               level=self.level, seed=self.seed, step=task.plan.step, name=name,
                               answer=answer, correct=correct, attempts=attempts, hints=hints,
                               diagnoses=diagnoses)
        except StoreError as exc:
            self._errors.append(str(exc))
            return dataclasses.replace(fb, saved=False, error=str(exc))
        return fb

    def outcome(self) -> Outcome:
        blanks = [t for t in self.tasks if isinstance(t, Blank)]
        prompts = [t for t in self.tasks if isinstance(t, Prompt)]
        if any(t.state != "solved" for t in blanks):
            return Outcome.FAILED
        if all(t.first_try for t in blanks) and all(t.right for t in prompts):
            return Outcome.CLEAN
        return Outcome.PARTIAL

    def finish(self) -> Summary:
        """End the practice (idempotent). After the last task: move the level and review the
        FSRS item; before it: keep what was saved and move nothing."""
        if self._summary is not None:
            return self._summary
        from tutor.quiz import scheduler as sch  # deferred: loads fsrs (start-up time)

        blanks = [t for t in self.tasks if isinstance(t, Blank)]
        prompts = [t for t in self.tasks if isinstance(t, Prompt)]
        complete = self.task is None
        outcome = self.outcome() if complete else None
        new_level = self.level if outcome is None else levels.next_level(self.level, self.plan.top, outcome)
        due = None
        if outcome is not None:  # complete
            name = self.trace.name
            try:
                self.store.record_answer(
                    stored.item_id(name), LESSON_IDS[self.trace.section - 1],
                    correct=outcome is not Outcome.FAILED, rating=outcome.rating,
                    response=f"level {self.level}: {outcome.value}", mode=stored.MODE,
                    variant=None if self.seed is None else str(self.seed),
                    session=self.session_id,
                    update_card=sch.updater(stored.item_id(name), outcome.rating, sch.make_scheduler()))
                stored.save_level(self.store, name, new_level, finished=True,
                                  clean=outcome is Outcome.CLEAN)
                card = self.store.card(stored.item_id(name))
                due = card.due if card else None
            except StoreError as exc:
                self._errors.append(str(exc))
        self._summary = Summary(
            self.trace.name, self.level, self.plan.top, complete, outcome, new_level,
            sum(t.state == "solved" for t in blanks), len(blanks), sum(t.right for t in prompts),
            len(prompts), saved=not self._errors, error=self._errors[-1] if self._errors else None,
            due=due, helped=any(t.state == "solved" and not t.first_try for t in blanks))
        return self._summary
