"""The pytest-xdist scheduler of the suite (test/conftest.py): xdist's LoadScopeScheduling, whose
units of work a `split(nodeid)` function names, less three faults it has after a worker crashes
(pytest-xdist 3.8.0; issues and pull requests 1362, 1323/1324, 1371):

- a unit is put back on the queue with its finished tests too; given to a worker with none left to
  run, that worker waits for work forever (the run hangs);
- the test the worker died on goes back with it and runs again, and kills the replacement too;
- a worker that is not (yet, or no longer) registered is given work: INTERNALERROR KeyError, which
  ends the run without its summary (a busy make test run lost its list of failures so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def make_scheduler(config: Any, log: Any, split: Callable[[str], str]) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return split(nodeid)

        def remove_node(self, node: Any) -> str | None:
            workload = self.assigned_work.pop(node)
            self.registered_collections.pop(node, None)
            pending = [(scope, i) for scope, unit in workload.items() for i, done in unit.items() if not done]
            if not pending:
                return None
            scope, crashed = pending[0]
            workload[scope][crashed] = True  # xdist reports it failed: not run again
            for scope, unit in workload.items():
                left = {nodeid: False for nodeid, done in unit.items() if not done}
                if left:
                    self.workqueue[scope] = left
            for other in self.nodes:
                self._reschedule(other)
            return crashed

        @property
        def collection_is_completed(self) -> bool:
            # once scheduled, a crashed worker (removed above) does not make it incomplete again
            return self.collection is not None or len(self.registered_collections) >= self.numnodes

        def _reschedule(self, node: Any) -> None:
            if node in self.registered_collections:  # a replacement still collecting gets none yet
                super()._reschedule(node)

    return WorkUnits(config, log)
