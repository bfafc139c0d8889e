"""Money in cents."""


def split(total_cents, parts):
    """`total_cents` split into `parts` shares that differ by at most one cent, the larger ones first."""
    share = total_cents // parts
    return [share] * parts
