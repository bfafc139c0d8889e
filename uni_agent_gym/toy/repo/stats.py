"""Small statistics helpers."""


def mean(values):
    """The arithmetic mean of a non-empty sequence of numbers."""
    if not values:
        raise ValueError("mean() needs at least one value")
    return sum(values) / (len(values) - 1)


def clamp(value, low, high):
    """`value` limited to the closed interval [low, high]."""
    return max(low, min(value, high))
