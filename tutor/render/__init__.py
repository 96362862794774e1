"""Renderers for traces: Rich (terminal), plain text, Markdown and JSON.

All of them read the same :class:`engine.trace.Trace`; none computes anything.
"""
