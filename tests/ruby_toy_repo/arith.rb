# A toy module with a bug in add.
module Arith
  # The sum of a and b.
  def self.add(a, b)
    a - b
  end
end
