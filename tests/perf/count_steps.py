"""ansible-playbook with the linear strategy's steps over the hosts counted and timed (not a test: prints numbers).

Usage: .venv/bin/python tests/perf/count_steps.py -i INVENTORY PLAYBOOK [ansible-playbook options]

Runs ansible-playbook in this process with four of ansible-core's own functions wrapped, and prints on stderr one
``STEP`` line per step of the linear strategy (its CPU seconds, how many hosts got a task out of how many were asked,
the task) and at the end one ``TOTAL`` line per function (calls, CPU seconds):

* ``StrategyModule._get_next_task_lockstep``: before each task, every host of the play is asked for its next task -
  the cost of a task over the node group that does not depend on what the task does (docs/performance.md, "The
  rules");
* ``StrategyBase.run``: the pass over every host that ends a play;
* ``PlayIterator.__init__``: a play's start;
* ``StrategyBase._process_pending_results``: the results read back from the workers (waiting included).

The CPU seconds are this process's (``time.process_time``), not the workers'.
"""

from __future__ import annotations

import atexit
import collections
import sys
import time

from ansible.executor import play_iterator
from ansible.plugins.strategy import StrategyBase, linear

TOTALS = collections.defaultdict(lambda: [0, 0.0])


def timed(cls, name, label, step=False):
    """Wrap ``cls.name`` to add its calls and CPU seconds to TOTALS[label] (and print a STEP line when ``step``)."""
    original = getattr(cls, name)

    def wrapper(self, *args, **kwargs):
        start = time.process_time()
        out = original(self, *args, **kwargs)
        seconds = time.process_time() - start
        TOTALS[label][0] += 1
        TOTALS[label][1] += seconds
        if step:
            hosts = args[0]
            task = out[0][1].get_name() if out else "(no task left)"
            sys.stderr.write("STEP %6.2f s  %5d of %5d hosts  %s\n" % (seconds, len(out), len(hosts), task))
        return out

    setattr(cls, name, wrapper)


@atexit.register
def report():
    for label, (calls, seconds) in TOTALS.items():
        sys.stderr.write("TOTAL %-28s %6d calls %8.2f s\n" % (label, calls, seconds))


def main():
    timed(linear.StrategyModule, "_get_next_task_lockstep", "step over the hosts", step=True)
    timed(StrategyBase, "run", "end of play over the hosts")
    timed(play_iterator.PlayIterator, "__init__", "start of play")
    timed(StrategyBase, "_process_pending_results", "results read back")
    from ansible.cli.playbook import main as playbook  # pylint: disable=import-outside-toplevel

    sys.argv[0] = "ansible-playbook"
    return playbook()


if __name__ == "__main__":
    sys.exit(main())
