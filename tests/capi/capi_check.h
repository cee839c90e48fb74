/* The C API tests' one assertion: CHECK(cond) counts a failure in `failures`
 * and prints the condition with the library's last error, then goes on (a C
 * test reports every failed check, as gtest's EXPECT does). */
#ifndef SK_TESTS_CAPI_CHECK_H
#define SK_TESTS_CAPI_CHECK_H

#include <stdio.h>

#include <superkernel/superkernel_c.h>

static int failures = 0;
#define CHECK(cond)                                                                                             \
  do {                                                                                                          \
    if (!(cond)) {                                                                                              \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, sk_last_error()); \
      ++failures;                                                                                               \
    }                                                                                                           \
  } while (0)

#endif
