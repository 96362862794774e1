"""Exam screen: a paper answered with follow-through and ticks, the sheet, the plan, Home."""

from __future__ import annotations

from datetime import date, timedelta

from tutor.app import StartAt, make_app
from tutor.exam.paper import ExamStart
from tutor.screens.exam import ExamScreen
from tutor.widgets.paper_panel import PaperPanel

from tui_text import widget_text


async def _type(pilot, text: str):
    await pilot.press(*[{" ": "space", ",": "comma", "/": "slash", ".": "full_stop"}.get(c, c)
                        for c in text])


async def test_paper_follow_through_ticks_and_saved_marks():
    app = make_app(StartAt("exam", exam=ExamStart(questions=("xq-qkv-notes-erratum",))))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ExamScreen)
        panel = app.screen.query_one(PaperPanel)
        panel.query_one("#paper-minutes").value = "0"
        await pilot.click("#paper-start")
        await pilot.pause()
        assert panel.state == "answer"
        await _type(pilot, "1/3, 0, 0")  # (a): divided by 3, not √3
        await pilot.press("enter")
        await pilot.pause()
        assert panel.state == "feedback" and "Not quite" in " ".join(widget_text(panel.query_one("#paper-feedback")).split())
        await pilot.click("#paper-next")
        await pilot.pause()
        await _type(pilot, "0.411, 0.2945, 0.2945")  # (b): softmax of the student's (a)
        await pilot.press("enter")
        await pilot.pause()
        shown = " ".join(widget_text(panel.query_one("#paper-feedback")).split())
        assert "(b) 3/3 — Follow-through" in shown and "[0.3333, 0, 0]" in shown
        await pilot.click("#paper-next")
        await pilot.pause()
        await _type(pilot, "abc")
        await pilot.press("enter")
        await pilot.pause()
        assert panel.state == "answer" and "'abc' is not a number" in str(panel.query_one("#paper-hint").render())
        panel.query_one("#paper-answer").value = "0.411, 0.2945"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.click("#paper-next")
        await pilot.pause()
        assert panel.state == "answer" and panel.query_one("#paper-text").display
        panel.query_one("#paper-text").text = "1.79/3.79 is 0.47, so 0.64 is a slip."
        await pilot.click("#paper-submit")
        await pilot.pause()
        assert panel.state == "tick"
        points = panel.query_one("#paper-points")
        points.select(0)
        points.select(1)
        await pilot.click("#paper-submit")
        await pilot.pause()
        assert "(d) 2/3" in " ".join(widget_text(panel.query_one("#paper-feedback")).split())
        await pilot.click("#paper-next")
        await pilot.pause()
        assert panel.state == "result"
        assert "Paper finished: 7/10 marks" in " ".join(widget_text(panel.query_one("#paper-result")).split())
        from tutor.store.papers import papers

        (rec,) = papers(app.store)
        assert (rec.earned, rec.marks, rec.status) == (7, 10, "finished")


async def test_sheet_and_plan_tabs_and_home_shows_today():
    app = make_app(StartAt("exam"))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.show_tab("exam-sheet")
        await pilot.pause()
        assert "Notation map" in str(screen.query_one("#sheet-body").render())
        screen.show_tab("exam-plan")
        await pilot.pause()
        screen.query_one("#plan-date").value = "next week"
        screen.query_one("#plan-make").press()
        await pilot.pause()
        assert "YYYY-MM-DD" in str(screen.query_one("#plan-error").render())
        exam = date.today() + timedelta(days=10)
        screen.query_one("#plan-date").value = exam.isoformat()
        screen.query_one("#plan-minutes").value = "40"
        screen.query_one("#plan-make").press()
        await pilot.pause()
        body = str(screen.query_one("#plan-body").render())
        assert body.startswith("Revision plan:") and "40 min/day" in body
        await pilot.press("0")  # Home
        await pilot.pause()
        home_plan = str(app.screen.query_one("#home-plan").render())
        assert home_plan.startswith(f"Exam {exam:%a %d %b}: 10 days left.")
        assert "Read lesson 1: encoder-decoder" in home_plan


async def test_palette_and_app_open_the_exam_tabs():
    from textual.widgets import TabbedContent

    from tutor.palette import TutorCommands

    app = make_app(StartAt("home"))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        titles = [t for t, _, _ in TutorCommands(app.screen)._commands()]
        assert {"Exam: timed paper", "Exam: formula sheet", "Exam: revision plan", "Go to Exam"} <= set(titles)
        app.open_exam("exam-sheet")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, ExamScreen)
        assert app.screen.query_one("#exam-tabs", TabbedContent).active == "exam-sheet"


async def test_submit_key_shows_only_while_a_part_is_open():
    """The footer offers ctrl+s Submit on a part being answered, not on the setup form."""
    app = make_app(StartAt("exam", exam=ExamStart(questions=("xq-qkv-notes-erratum",))))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = app.screen

        def keys() -> set[str]:
            return {key for key, active in screen.active_bindings.items() if active.enabled}

        assert "ctrl+s" not in keys()
        panel = screen.query_one(PaperPanel)
        panel.query_one("#paper-minutes").value = "0"
        await pilot.click("#paper-start")
        await pilot.pause()
        assert panel.state == "answer" and "ctrl+s" in keys()


async def test_f3_and_f4_leave_a_running_paper_and_f2_returns_to_its_answer_box():
    """The focused answer box used to pull its tab straight back, so f3/f4 did nothing mid-paper."""
    from textual.widgets import TabbedContent

    app = make_app(StartAt("exam", exam=ExamStart(questions=("xq-qkv-notes-erratum",))))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        tabs = screen.query_one("#exam-tabs", TabbedContent)
        panel = screen.query_one(PaperPanel)
        panel.query_one("#paper-minutes").value = "0"
        await pilot.click("#paper-start")
        await pilot.pause()
        assert panel.state == "answer" and app.focused is panel.query_one("#paper-answer")
        for key, tab in (("f3", "exam-sheet"), ("f4", "exam-plan"), ("f2", "exam-paper")):
            await pilot.press(key)
            await pilot.pause()
            await pilot.pause()
            assert tabs.active == tab, key
        assert app.focused is panel.query_one("#paper-answer")


async def test_the_status_line_names_the_part_on_screen():
    """After Next the status said the number of the part just marked, not the one shown."""
    app = make_app(StartAt("exam", exam=ExamStart(questions=("xq-qkv-notes-erratum",))))
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        panel = app.screen.query_one(PaperPanel)
        panel.query_one("#paper-minutes").value = "0"
        await pilot.click("#paper-start")
        await pilot.pause()
        assert str(panel.query_one("#paper-status").render()).startswith("Part 1 of 4")
        await pilot.press("enter")  # (a) left blank
        await pilot.pause()
        assert panel.state == "feedback" and str(panel.query_one("#paper-status").render()).startswith("Part 1 of 4")
        await pilot.click("#paper-next")
        await pilot.pause()
        assert panel.state == "answer" and str(panel.query_one("#paper-status").render()).startswith("Part 2 of 4")


def test_an_indented_feedback_line_keeps_its_indent_when_it_wraps():
    from rich.console import Console

    from tutor.widgets.paper_sitting import lines_text

    long = "  Mistake: " + "word " * 20                   # a diagnosis line under a verdict
    console = Console(width=30, record=True, color_system=None)
    console.print(lines_text(["(b) ✗ 0/2", long, "[not markup]"], bold_first=True))
    out = console.export_text().splitlines()
    assert out[0] == "(b) ✗ 0/2" and out[-1] == "[not markup]"
    wrapped = out[1:-1]
    assert len(wrapped) > 2 and all(line.startswith("  ") and line[2] != " " for line in wrapped)
