"""The viewer: `uni-agent-gym view PATH` turns eval runs, gateway chains and token records into one
self-contained HTML file, to see a trajectory as the model and the trainer saw it."""
