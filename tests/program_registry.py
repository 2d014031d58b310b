"""A fidelity family's register of programs (tests/*_programs.py), imported under the kit
and under the TF 2.15 venv alike: nothing here imports beyond the standard library."""


def registry():
    """({name: program}, the decorator that adds a function to it under its own name)."""
    programs = {}

    def program(run):
        programs[run.__name__] = run
        return run

    return programs, program
