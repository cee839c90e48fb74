// Range errors of the builtin kernels: "<kernel>: <what> <v> out of range
// [<lo>, <hi><close>" through sk_report_error. Formatted by hand because a
// kernel object links against nothing (no snprintf); the message is what a
// user reads when a runtime value (a decode loop's position) leaves a
// kernel's range, so it carries the values. Private to kernels/cpu; its bytes
// are part of every including kernel's key.
#ifndef SK_RANGE_ERROR_H
#define SK_RANGE_ERROR_H

#include "superkernel/cpu/kernel.h"

// Appends s at p; returns the new end.
static inline char* sk_range_error_put_str(char* p, const char* s) {
  while (*s) *p++ = *s++;
  return p;
}

// Appends the decimal text of v at p; returns the new end.
static inline char* sk_range_error_put_i64(char* p, int64_t v) {
  char tmp[24];
  int n = 0;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u != 0);
  if (v < 0) *p++ = '-';
  while (n > 0) *p++ = tmp[--n];
  return p;
}

// Kernel and what are short literals (the message fits 192 bytes with both 20-digit values).
static inline void sk_report_range_error(const sk_ctx* ctx, const char* kernel, const char* what, int64_t v, int64_t lo,
                                         int64_t hi, const char* close) {
  char msg[192];
  char* p = sk_range_error_put_str(msg, kernel);
  p = sk_range_error_put_str(p, ": ");
  p = sk_range_error_put_str(p, what);
  p = sk_range_error_put_str(p, " ");
  p = sk_range_error_put_i64(p, v);
  p = sk_range_error_put_str(p, " out of range [");
  p = sk_range_error_put_i64(p, lo);
  p = sk_range_error_put_str(p, ", ");
  p = sk_range_error_put_i64(p, hi);
  p = sk_range_error_put_str(p, close);
  *p = '\0';
  sk_report_error(ctx, msg);
}

#endif
