/* The tests, printed the way redis's runtest prints them ([ok]: / [err]: NAME, then "The End" and its verdict),
   which swebench's parse_log_redis and the reward's runtest cross-check read; exit 1 when a test failed. */
#include <stdio.h>
#include "arith.h"

static const char *failed[8];
static int failures = 0;

static void expect(const char *name, int ok) {
    printf("[%s]: %s\n", ok ? "ok" : "err", name);
    if (!ok)
        failed[failures++] = name;
}

int main(void) {
    expect("add of two numbers", add(2, 3) == 5);
    expect("add of a negative number", add(-4, 1) == -3);
    expect("add of zeros", add(0, 0) == 0);
    printf("\n                   The End\n\n");
    if (failures) {
        printf("!!! WARNING The following tests failed:\n\n");
        for (int i = 0; i < failures; i++)
            printf("*** [err]: %s in check.c\n", failed[i]);
        return 1;
    }
    printf("\\o/ All tests passed without errors!\n\n");
    return 0;
}
