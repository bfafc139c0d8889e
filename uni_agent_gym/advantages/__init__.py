"""verl's advantage estimators without the fake zeros: a trajectory the gym masked (a dead sandbox, an aborted
generation, a timeout) leaves its GRPO/RLOO group's statistics, and its share per cause reaches verl's metrics, as
does the share of positive rewards that came from tasks whose tests accept a wrong fix (`survivor_share`).

verl loads `plugin` through the package's `verl.plugins` entry point on `import verl`, in the driver and in
every worker, so `algorithm.adv_estimator = "grpo_drop_masked"` works with no code in verl's scripts.
"""
