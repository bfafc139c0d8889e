"""verl's plugin entry point (`[project.entry-points."verl.plugins"]`): `import verl` imports this module in
every process (the driver, each Ray worker), before any of verl's trainers is imported.

It registers the estimators of `estimators` by name, and puts `masked_share` and `survivor_share` into verl's
`compute_data_metrics`. verl's trainer modules import that function by name, so it is replaced in
`metric_utils` (what they import from next) and in any verl module that already holds it (this module
imported late, e.g. under `VERL_USE_EXTERNAL_PLUGINS` without it).
"""

from __future__ import annotations

import sys

from verl.trainer.ppo import metric_utils
from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY, register_adv_est

from uni_agent_gym.advantages.estimators import ESTIMATORS
from uni_agent_gym.advantages.masked_share import with_masked_share
from uni_agent_gym.advantages.survivor_share import with_survivor_share

for _name, _estimator in ESTIMATORS.items():
    if ADV_ESTIMATOR_REGISTRY.get(_name) is not _estimator:
        register_adv_est(_name)(_estimator)

_stock = metric_utils.compute_data_metrics
_ours = with_survivor_share(with_masked_share(_stock))
for _module in [module for name, module in list(sys.modules.items()) if name.startswith("verl.") and module is not None]:
    if getattr(_module, "compute_data_metrics", None) is _stock:
        _module.compute_data_metrics = _ours
