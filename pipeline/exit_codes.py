"""Every exit status of `python -m pipeline`, in one place, for cron jobs and CI to test.

argparse's and Click's usage errors exit with 2 as well: a command line, a definition or
an option value that cannot work is a refusal like any other.
"""

OK = 0  # done: a run pushed a model, a rollback was done (or had nothing to do)
FAILED = 1  # a component or a Model Registry call failed
REFUSED = 2  # bad options, a definition or input refused, a run or version that does not exist
NOT_PUSHED = 3  # a run completed without pushing a model (not blessed)
LOCKED = 4  # another run or rollback of the same pipeline holds its lock

# (status, meaning): `python -m pipeline --help` and the docs' tables (pipeline/docs.py).
MEANINGS = (
    (OK, "done: a model pushed (`run`), rolled back or listed"),
    (FAILED, "a component, or a Model Registry call, failed"),
    (REFUSED, "refused: bad options, definition or data; no such run or version"),
    (NOT_PUSHED, "`run` completed, no model pushed (not blessed)"),
    (LOCKED, "another run or rollback of the pipeline holds its lock (`--wait` waits instead)"),
)
