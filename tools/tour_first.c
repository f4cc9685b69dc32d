/* tour_first.c -- the tour's first stop is the README's first program itself,
 * examples/first.c, compiled here with its main() renamed (and left out of the
 * GX_TOUR build of the other examples, whose main()s drop out by #ifdef). */
#define main example_first_main
#include "../examples/first.c"
