import unittest

from shop.money import split


class TestMoney(unittest.TestCase):
    def test_split_even(self):
        self.assertEqual(split(100, 4), [25, 25, 25, 25])

    def test_split_remainder(self):
        self.assertEqual(split(100, 3), [34, 33, 33])
