"""One module per subcommand. Each defines NAME, HELP and ``command`` (a Typer function).

Modules import only typer at the top; the engine, numba and textual are imported inside the
command body so ``attn-tutor --help`` stays fast.
"""
