require_relative "../arith"

RSpec.describe Arith do
  describe ".add" do
    it "adds zeros" do
      expect(Arith.add(0, 0)).to eq(0)
    end
  end
end
