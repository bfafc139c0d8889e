import unittest

from shop.labels import label


class TestLabels(unittest.TestCase):
    def test_label(self):
        self.assertEqual(label(105), "$1.05")
