"""The boundary probe's first address, kept for code that imports it from here; it lives in
`uni_agent_gym.tokens.boundary`, beside the rollout cache."""

from uni_agent_gym.tokens.boundary import Boundary, BoundaryError, delta_ids, probe, render, stop_token_ids

__all__ = ["Boundary", "BoundaryError", "delta_ids", "probe", "render", "stop_token_ids"]
