"""The Plan tab takes the keyboard: its date field is focused when the tab opens, so a date
typed at once goes into it (issue 34 §5: the digits switched areas instead)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from textual.widgets import Input

from tutor.app import StartAt, make_app
from tutor.screens.exam import ExamScreen


@pytest.mark.parametrize("how", ["f4", "palette", "start", "click"])
async def test_typing_a_date_on_the_plan_tab_goes_into_the_date_field(how):
    from tutor.exam.paper import ExamStart

    start = StartAt("exam", exam=ExamStart(tab="exam-plan")) if how == "start" else StartAt("home")
    app = make_app(start, warm_up=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        if how in ("f4", "click"):
            await pilot.press("7")  # the Exam area, on its Paper tab
            await pilot.pause()
            await pilot.press("f4") if how == "f4" else await pilot.click("#exam-tabs Tab#--content-tab-exam-plan")
        elif how == "palette":
            app.open_exam("exam-plan")
        for _ in range(3):
            await pilot.pause()
        screen = app.screen
        field = screen.query_one("#plan-date", Input)
        assert app.focused is field, app.focused
        exam = date.today() + timedelta(days=30)
        await pilot.press(*exam.isoformat(), "enter")  # digits: areas 2, 0, 7... before
        await pilot.pause()
        assert isinstance(app.screen, ExamScreen) and field.value == exam.isoformat()
        assert str(screen.query_one("#plan-body").render()).startswith("Revision plan:")
        await pilot.press("0")  # planned: the keys are the areas' again
        await pilot.pause()
        assert not isinstance(app.screen, ExamScreen)
