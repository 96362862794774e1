"""Class mode: an instructor runs a live quiz for a lecture room from one laptop.

Plain modules (no terminal): :mod:`.protocol` (the JSON messages, checked), :mod:`.questions`
(what can be pushed, per-student numbers), :mod:`.marking` (the one door to marking and
diagnosis), :mod:`.room` (students, votes, the histogram), :mod:`.server` (the WebSocket
server), :mod:`.client` (the student's connection), :mod:`.export` (CSV and JSON), and the
front ends: :mod:`.host` / :mod:`.host_app` (the instructor's screen) and :mod:`.join_plain` /
:mod:`.join_app` (the student's). ``docs/class-protocol.md`` describes the protocol.
"""
