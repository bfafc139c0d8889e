#include <gtest/gtest.h>

#include "arith.h"

TEST(arith_test, add_zeros) { EXPECT_EQ(add(0, 0), 0); }
