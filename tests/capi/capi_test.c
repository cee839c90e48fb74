/* The C API from a C program (compiled as C11, -Wall -Wextra -Werror):
 * an op list and its kernel source both from memory, run on caller memory,
 * the result checked; then every error path a caller can hit.
 *   sk_test_capi_c CACHE_DIR */
#include <superkernel/superkernel_c.h>

#include <stdio.h>
#include <string.h>

#include "capi_check.h"

static const char kKernel[] =
    "#include <superkernel/cpu/kernel.h>\n"
    "SK_KERNEL void axpb(const sk_ctx* ctx, const float* x, float* y, int64_t n) {\n"
    "  int64_t b, e;\n"
    "  sk_block_range(ctx, n, &b, &e);\n"
    "  for (int64_t i = b; i < e; ++i) y[i] = 3.0f * x[i] + 1.0f;\n"
    "}\n";

static const char kOpList[] =
    "{\"format\": \"superkernel.oplist\", \"version\": 1, \"target\": \"cpu\", \"arch\": \"native\",\n"
    " \"kernels\": {\"axpb\": {\"source\": \"axpb.c\", \"entry\": \"axpb\", \"params\": [\n"
    "   {\"name\": \"x\", \"kind\": \"buffer\", \"dtype\": \"f32\", \"access\": \"read\", \"partition\": \"block\"},\n"
    "   {\"name\": \"y\", \"kind\": \"buffer\", \"dtype\": \"f32\", \"access\": \"write\", \"partition\": \"block\"},\n"
    "   {\"name\": \"n\", \"kind\": \"scalar\", \"dtype\": \"i64\"}]}},\n"
    " \"buffers\": {\"a\": {\"dtype\": \"f32\", \"shape\": [1000]}, \"b\": {\"dtype\": \"f32\", \"shape\": [1000]},\n"
    "             \"c\": {\"dtype\": \"f32\", \"shape\": [1000]}},\n"
    " \"ops\": [\n"
    "   {\"name\": \"op0\", \"kernel\": \"axpb\", \"block_dim\": 7, \"scope\": \"s\", \"args\": {\"x\": \"a\", \"y\": \"b\", \"n\": 1000}},\n"
    "   {\"name\": \"op1\", \"kernel\": \"axpb\", \"block_dim\": 7, \"scope\": \"s\", \"args\": {\"x\": \"b\", \"y\": \"c\", \"n\": 1000}}]}\n";

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CACHE_DIR\n", argv[0]);
    return 2;
  }
  CHECK(strcmp(sk_version(), "") != 0);
  CHECK(strcmp(sk_status_name(SK_ERR_COMPILE), "compile") == 0);

  sk_session_options so;
  sk_session_options_init(&so);
  so.cache_dir = argv[1];
  so.workers = 2;
  sk_session* s = NULL;
  CHECK(sk_session_create(&so, &s) == SK_OK);
  if (!s) return 1;
  CHECK(strcmp(sk_cache_dir(s), argv[1]) == 0);

  sk_source src = {"axpb.c", kKernel, sizeof kKernel - 1};
  sk_plan* p = NULL;
  CHECK(sk_compile_json(s, kOpList, sizeof kOpList - 1, NULL, &src, 1, NULL, 1, &p) == SK_OK);
  if (!p) return 1;
  CHECK(sk_plan_op_count(p) == 2);
  CHECK(sk_plan_launch_count(p) == 1); /* both ops fused into one SuperKernel */
  CHECK(sk_plan_buffer_count(p) == 3);
  CHECK(strcmp(sk_plan_buffer_name(p, 1), "b") == 0);
  CHECK(sk_plan_buffer_bytes(p, 2) == 4000);
  CHECK(sk_plan_buffer_name(p, 3) == NULL);

  static float a[1000], b[1000], c[1000];
  for (int i = 0; i < 1000; ++i) a[i] = (float)i;
  void* bufs[3] = {a, b, c};
  CHECK(sk_run(s, p, bufs, 3) == SK_OK);
  for (int i = 0; i < 1000; ++i) {
    if (c[i] != 3.0f * (3.0f * (float)i + 1.0f) + 1.0f) {
      fprintf(stderr, "c[%d] = %g\n", i, (double)c[i]);
      ++failures;
      break;
    }
  }

  /* Fused vs unfused on library-owned buffers. */
  sk_plan* ref = NULL;
  CHECK(sk_compile_json(s, kOpList, sizeof kOpList - 1, NULL, &src, 1, "early-start=0", 0, &ref) == SK_OK);
  if (ref) {
    CHECK(sk_plan_launch_count(ref) == 2);
    sk_buffers *fb = NULL, *ub = NULL;
    CHECK(sk_buffers_create(p, &fb) == SK_OK);
    CHECK(sk_buffers_create(ref, &ub) == SK_OK);
    CHECK(sk_run_buffers(s, p, fb) == SK_OK);
    CHECK(sk_run_buffers(s, ref, ub) == SK_OK);
    CHECK(sk_buffers_compare(ub, fb) == SK_OK);
    ((float*)sk_buffers_data(fb, 2))[5] += 1.0f;
    CHECK(sk_buffers_compare(ub, fb) == SK_ERR_MISMATCH);
    CHECK(strstr(sk_last_error(), "element 5") != NULL);
    CHECK(sk_buffers_data(fb, 3) == NULL);
    sk_buffers_destroy(fb);
    sk_buffers_destroy(ub);
    sk_plan_destroy(ref);
  }

  sk_cache_stats st;
  CHECK(sk_cache_stats_get(s, &st) == SK_OK);
  CHECK(st.entries >= 1 && st.bytes > 0 && st.max_bytes > 0);

  /* Errors: each a status and a message, never a crash. */
  /* The sync calibration (it runs for real in tests/python/test_package.py): a target without one, no session. */
  sk_sync_costs costs;
  CHECK(sk_calibrate_sync(s, "ascend", &costs) == SK_ERR_BAD_INPUT);
  CHECK(strstr(sk_last_error(), "ascend") != NULL);
  CHECK(sk_calibrate_sync(NULL, NULL, &costs) == SK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(sk_last_error(), "sk_calibrate_sync: session is NULL") != NULL);
  /* The messages say what is wrong, not just something with a digit in it. */
  CHECK(sk_run(s, p, bufs, 2) == SK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(sk_last_error(), "sk_run: 2 buffers given, the op list has 3") != NULL);
  CHECK(sk_compile_json(s, "{", 1, NULL, NULL, 0, NULL, 1, &ref) == SK_ERR_BAD_INPUT);
  CHECK(ref == NULL);
  CHECK(strstr(sk_last_error(), "JSON") != NULL || strstr(sk_last_error(), "json") != NULL);
  static const char kBroken[] = "this is not C";
  sk_source broken = {"axpb.c", kBroken, sizeof kBroken - 1};
  CHECK(sk_compile_json(s, kOpList, sizeof kOpList - 1, NULL, &broken, 1, NULL, 1, &ref) == SK_ERR_COMPILE);
  CHECK(strstr(sk_last_error(), "axpb.c") != NULL); /* the diagnostic names the file */
  sk_source badName = {"../evil.c", kKernel, sizeof kKernel - 1};
  CHECK(sk_compile_json(s, kOpList, sizeof kOpList - 1, NULL, &badName, 1, NULL, 1, &ref) == SK_ERR_BAD_INPUT);
  CHECK(sk_compile_file(s, "/nonexistent/list.json", NULL, 1, &ref) == SK_ERR_BAD_INPUT ||
        sk_compile_file(s, "/nonexistent/list.json", NULL, 1, &ref) == SK_ERR_IO);
  CHECK(sk_compile_file(NULL, "x", NULL, 1, &ref) == SK_ERR_INVALID_ARGUMENT);
  CHECK(sk_session_create(&so, NULL) == SK_ERR_INVALID_ARGUMENT);
  so.struct_size = 4;
  sk_session* s2 = NULL;
  CHECK(sk_session_create(&so, &s2) == SK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(sk_last_error(), "struct_size is 4") != NULL);
  /* A binary built against version 1 of the header: it allocated the struct without `communicator` and calls the
   * exported function (no macro). The library writes that much only, and creates a session from it. */
  {
    union {
      sk_session_options o;
      unsigned char bytes[sizeof(sk_session_options) + 8];
    } v1;
    memset(v1.bytes, 0xA5, sizeof v1.bytes);
    const size_t v1Size = offsetof(sk_session_options, communicator);
    (sk_session_options_init)(&v1.o);
    CHECK(v1.o.struct_size == v1Size);
    for (size_t i = v1Size; i < sizeof v1.bytes; ++i) CHECK(v1.bytes[i] == 0xA5); /* nothing past the v1 struct */
    v1.o.memory_only = 1;
    sk_session* s1 = NULL;
    CHECK(sk_session_create(&v1.o, &s1) == SK_OK);
    sk_session_destroy(s1);
  }
  CHECK(sk_run(s, p, NULL, 3) == SK_ERR_INVALID_ARGUMENT);

  sk_plan_destroy(p);
  sk_session_destroy(s);
  sk_session_destroy(NULL);
  sk_plan_destroy(NULL);
  if (failures) {
    fprintf(stderr, "capi_test: %d check(s) failed\n", failures);
    return 1;
  }
  puts("capi_test ok");
  return 0;
}
