"""Stats screen: shows the store's numbers and refreshes after a quiz."""

from __future__ import annotations

from datetime import datetime, timezone

from tutor.app import make_app
from tutor.quiz.bank import load_bank
from tutor.screens.stats import StatsScreen


async def test_stats_reflect_stored_answers():
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StatsScreen)
        assert screen.data["due"]["seen"] == 0
        at = datetime.now(timezone.utc)
        qid = next(q.id for q in load_bank() if q.section == "qkv")
        app.store.record_answer(qid, "qkv", correct=True, rating=3, response="b",
                                mode="practice", at=at)
        await pilot.press("r")
        qkv = next(t for t in screen.data["topics"] if t["id"] == "qkv")
        assert (qkv["graded"], qkv["correct"]) == (1, 1)
        assert screen.data["due"]["seen"] == 1
