/*
 * minmax.h — fmin and fmax for operands that cannot be NaN, as inline comparisons.
 *
 * glibc's fmin and fmax are calls into libm: GCC inlines them only under
 * -ffinite-math-only, for their rule that a NaN operand gives the other one, so the
 * search's hot loops (the event simulator's op starts, a block's slowest device, the
 * collectives' protocol choice, the interleave floors) paid about 1.5 % of their time
 * in the calls. Where neither operand can be NaN — times and bandwidths made of finite
 * non-negative figures, or +INFINITY — these give the same value to the bit, the sign
 * of a zero included: glibc's fmin and fmax give the first operand where the two
 * compare equal (+0 and −0 alike), and so do these (tests/test_cost.c test_minmax).
 * A NaN operand would not be skipped as fmin and fmax skip it: a call site says why
 * its operands cannot be NaN. Pure.
 */
#ifndef TSL_MINMAX_H
#define TSL_MINMAX_H

/* fmin(a, b) where neither is NaN. */
static inline double tsl_min(double a, double b)
{
    return b < a ? b : a;
}

/* fmax(a, b) where neither is NaN. */
static inline double tsl_max(double a, double b)
{
    return b > a ? b : a;
}

#endif
