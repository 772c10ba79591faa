/*
 * parts.h: a big kernel file compiled as several translation units ("parts") that the build
 * runs in parallel (aclnn_py/_build.py; docs/architecture.md, "A lean source build").
 *
 * A wrapper csrc/parts/NAME_N.c defines ACLK_PART to N and includes csrc/kernels/NAME.c, and
 * the build compiles the wrappers instead of NAME.c. The kernel file keeps all of its code in
 * one place and puts each of its external definitions (its entry points) under
 * `#if ACLK_IN_PART(n)`, so each is defined by exactly one part. Every part sees all the
 * static code, and the compiler drops, before optimising it, whatever its own entry points do
 * not reach; so each part compiles only its share, to the same machine code (same functions,
 * same flags, same inlining) as the whole file, and the output bits cannot differ.
 * Compiled directly (ACLK_PART undefined, as tests/test_kernels_c.py does) the file is whole.
 */
#ifndef ACLK_PARTS_H
#define ACLK_PARTS_H

#ifdef ACLK_PART
#define ACLK_IN_PART(n) (ACLK_PART == (n))
/* the static functions only the other parts' entry points reach are unused here, by design */
#pragma GCC diagnostic ignored "-Wunused-function"
#else
#define ACLK_IN_PART(n) 1
#endif

#endif
