"""One module per trace: the trace's arithmetic with each catalogued slip behind a switch.

See :mod:`engine.mistakes.registry` for what every module defines.
"""
