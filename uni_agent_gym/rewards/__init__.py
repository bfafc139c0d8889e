"""Rewards: SWE-bench fail-to-pass grading on top of the `swebench` package."""
