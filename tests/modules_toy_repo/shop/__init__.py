"""A shop's money and labels."""
