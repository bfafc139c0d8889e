/* The tests, printed the way redis's runtest prints them ([ok]: / [err]: NAME), which swebench's
   parse_log_redis reads; the exit code is the number of failures. */
#include <stdio.h>
#include "arith.h"

static int failures = 0;

static void expect(const char *name, int ok) {
    printf("[%s]: %s\n", ok ? "ok" : "err", name);
    failures += !ok;
}

int main(void) {
    expect("add of two numbers", add(2, 3) == 5);
    expect("add of a negative number", add(-4, 1) == -3);
    expect("add of zeros", add(0, 0) == 0);
    return failures;
}
