#pragma once

// The sum of a and b.
inline int add(int a, int b) { return a - b; }
