require "test/unit"
require_relative "../arith"

class ArithTest < Test::Unit::TestCase
  def test_adds_zeros
    assert_equal(0, Arith.add(0, 0))
  end
end
