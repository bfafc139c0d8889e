"""`python -m uni_agent_gym`: the `uni-agent-gym` command, where the environment's scripts are not on PATH."""

import sys

from uni_agent_gym.cli import main

sys.exit(main())
