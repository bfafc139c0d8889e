import unittest

from shop import money


class TestReceipt(unittest.TestCase):
    def test_shares_add_up_to_the_total(self):
        self.assertEqual(sum(money.split(101, 4)), 101)
