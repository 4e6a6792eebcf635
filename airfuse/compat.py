"""What differs between the torch releases airfuse supports (2.10 to 2.14), each difference in one
place with the release that made it. Nothing else in airfuse branches on versions.

Every function here gives the newest releases' behaviour and, where an older release differs,
what makes airfuse behave the same there.
"""

import torch

TORCH = tuple(int(part) for part in torch.__version__.split("+", 1)[0].split(".")[:2])


def pattern_arguments(search, trace_fn):
    """(``trace_fn`` to register ``search`` with, ``arguments(match)``: ``search``'s arguments by name
    in a match ``extra_check`` receives).

    Since torch 2.13 the pattern matcher gives ``extra_check`` every argument of the search
    function. Up to 2.12 it retraces the search function with the matched values before the check,
    so a ``scalar_workaround`` argument (a norm's epsilon) is a constant of that pattern unless it
    happens to equal the placeholder value, and is missing from the check's ``match.kwargs``. The
    retrace goes through ``trace_fn`` just before the check, so there the values it was given are
    the ones missing."""
    names = search.__code__.co_varnames[: search.__code__.co_argcount]
    if TORCH >= (2, 13):
        return trace_fn, lambda match: [match.kwargs[name] for name in names]
    traced = {}

    def tracing(fn, args, *rest, **options):
        traced.update(zip(names, args[len(args) - len(names):]))  # symbolic sizes come first, if any
        return trace_fn(fn, args, *rest, **options)

    return tracing, lambda match: [match.kwargs[name] if name in match.kwargs else traced[name] for name in names]
