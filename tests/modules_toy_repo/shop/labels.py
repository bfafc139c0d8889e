"""Price labels."""


def label(cents):
    """The cents as a price: `$1.05`."""
    return f"${cents // 100}.{cents % 100:02d}"
