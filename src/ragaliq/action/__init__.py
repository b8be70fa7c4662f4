"""The GitHub Action: the gate on a pull request, or recording the baseline on main.

- :mod:`~ragaliq.action.main`: the edge (``main()`` builds the real collaborators from the
  environment a Docker action gets) and the gate on each pull request;
- :mod:`~ragaliq.action.recording`: ``update-baseline`` and ``store-baseline``, on a push;
- :mod:`~ragaliq.action.answers`: the signed judge answers a run reuses and leaves behind;
- :mod:`~ragaliq.action.outputs`: the files a run leaves in the workspace for later steps.
"""

from __future__ import annotations

from ragaliq.action.main import action, main
from ragaliq.action.outputs import DECISION_PATH, REPORT_PATH

__all__ = ["DECISION_PATH", "REPORT_PATH", "action", "main"]
