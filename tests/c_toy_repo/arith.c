#include "arith.h"

/* The sum of a and b. */
int add(int a, int b) {
    return a - b;
}
