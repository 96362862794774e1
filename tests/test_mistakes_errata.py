"""Numeric errata of the notes against the mistake catalogue.

Every erratum that prints a wrong (or rounded) number and names a catalogued mistake must be
reproduced by running that mistake on the notes' own inputs; the others must not be
explained by any mistake on the value they name. The count goes in the report.
"""

from __future__ import annotations

from engine.mistakes import MISTAKES, diagnose
from tutor.errata import load_errata
from tutor.typed import parse_check

NUMERIC = ("arithmetic", "miscount", "rounding")


def test_every_erratum_naming_a_mistake_is_reproduced_by_it():
    named = [e for e in load_errata() if e.mistake]
    assert {e.id for e in named} >= {"qkv-weights", "qkv-output"}  # the notes' two arithmetic slips
    for e in named:
        assert e.kind in NUMERIC and e.mistake in MISTAKES
        trace, spec = e.mistake_check.split(" ", 1)
        assert trace in e.traces
        value, numbers, decimals = parse_check(spec)
        check = diagnose(trace, None, value, numbers, decimals=decimals)
        assert not check.correct and not check.imprecise, e.id
        assert [d.ids for d in check.diagnoses] == [(e.mistake,)], e.id
        assert MISTAKES[e.mistake].title in e.summary  # the why-text names the slip


def test_the_arithmetic_errata_are_all_explained():
    arithmetic = [e for e in load_errata() if e.kind == "arithmetic"]
    assert arithmetic and all(e.mistake for e in arithmetic)
