"""The token record of a trajectory, as a trainer sees it: the rollout cache (ids, loss mask, log-probs,
weight versions; append-only, checked after every append) and the boundary probe that finds a chat
template's glue. Used by the verl agent loops and the gateway alike; knows nothing of either."""
