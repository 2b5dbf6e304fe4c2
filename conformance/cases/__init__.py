"""One case file per agent. Each module has CASES (functions taking a lib.World) and
prepare(world, agent_bin), which writes the agent's scratch config."""


def registry():
    """A CASES list and the decorator that fills it: @case(id, title, xfail=None)."""
    cases = []

    def case(id, title, xfail=None):
        def deco(fn):
            fn.id, fn.title, fn.xfail = id, title, xfail
            cases.append(fn)
            return fn
        return deco

    return cases, case
