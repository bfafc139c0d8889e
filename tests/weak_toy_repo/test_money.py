import unittest

from money import split, to_cents


class TestMoney(unittest.TestCase):
    def test_to_cents(self):
        self.assertEqual(to_cents(0.29), 29)
        self.assertEqual(to_cents(2.5), 250)

    def test_split_even(self):
        self.assertEqual(split(100, 4), [25, 25, 25, 25])

    def test_split_remainder(self):
        self.assertEqual(split(100, 3), [34, 33, 33])

    def test_split_keeps_every_cent(self):
        self.assertEqual(sum(split(101, 4)), 101)


if __name__ == "__main__":
    unittest.main()
