/* A stand-in libnccl for CudaNcclTest.cpp (no GPU or second rank here): the calls the cuda device's NCCL
 * set-up makes (src/backends/cuda/CudaNccl.cpp) are recorded, one line each, for the test to read with
 * fake_nccl_log() (fake_nccl_reset() clears it; fake_nccl_fail(name) makes the next call of that name fail
 * with ncclInternalError). Memory is host memory (malloc), so the device's "zero the header" step can be a
 * memset in the test; windows are addresses inside a static array. FAKE_NCCL_LSA_RANKS=N makes ncclTeamLsa
 * answer N ranks (default: all of the communicator's). */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char internal[128];
} ncclUniqueId;
typedef struct {
  int nRanks, rank, stride;
} ncclTeam_t;

enum { kSuccess = 0, kInternalError = 3 };

static char g_log[1 << 16];
static size_t g_len;
static char g_fail[64];
static char g_comm[64];    /* the communicator's address */
static char g_windows[64]; /* window handles: addresses in here */
static int g_nranks = 1, g_rank = 0, g_windows_made = 0;

const char* fake_nccl_log(void) { return g_log; }
void fake_nccl_reset(void) {
  g_len = 0;
  g_log[0] = 0;
  g_fail[0] = 0;
}
/* Window handles count from 0 again (each test's first window is w0). */
void fake_nccl_windows_from_zero(void) { g_windows_made = 0; }
void fake_nccl_fail(const char* name) { snprintf(g_fail, sizeof g_fail, "%s", name); }

static void record(const char* fmt, const char* a, long long b, long long c) {
  char line[256];
  snprintf(line, sizeof line, fmt, a, b, c);
  const size_t n = strlen(line);
  if (g_len + n + 2 < sizeof g_log) {
    memcpy(g_log + g_len, line, n);
    g_len += n;
    g_log[g_len++] = '\n';
    g_log[g_len] = 0;
  }
}

/* The call `name` fails (once) when fake_nccl_fail named it; the line records that. */
static int failing(const char* name) {
  if (strcmp(g_fail, name) != 0) return 0;
  g_fail[0] = 0;
  record("%s -> fail", name, 0, 0);
  return 1;
}

int ncclGetVersion(int* v) {
  *v = 22809;
  return kSuccess;
}
const char* ncclGetErrorString(int e) { return e == kInternalError ? "internal error (fake)" : "fake error"; }

int ncclGetUniqueId(ncclUniqueId* id) {
  if (failing("ncclGetUniqueId")) return kInternalError;
  memset(id, 0, sizeof *id);
  memcpy(id->internal, "fake-nccl-id", 12);
  record("ncclGetUniqueId", "", 0, 0);
  return kSuccess;
}

int ncclCommInitRank(void** comm, int nranks, ncclUniqueId id, int rank) {
  if (failing("ncclCommInitRank")) return kInternalError;
  /* The id must be rank 0's, handed over by the communicator. */
  record("ncclCommInitRank %s nranks=%lld rank=%lld", memcmp(id.internal, "fake-nccl-id", 12) == 0 ? "id=rank0" : "id=?",
         nranks, rank);
  g_nranks = nranks;
  g_rank = rank;
  *comm = g_comm;
  return kSuccess;
}

ncclTeam_t ncclTeamLsa(void* comm) {
  (void)comm;
  const char* v = getenv("FAKE_NCCL_LSA_RANKS");
  ncclTeam_t t = {v ? atoi(v) : g_nranks, g_rank, 1};
  record("ncclTeamLsa", "", 0, 0);
  return t;
}

int ncclMemAlloc(void** p, size_t bytes) {
  if (failing("ncclMemAlloc")) return kInternalError;
  *p = malloc(bytes);
  record("ncclMemAlloc %s%lld", "", (long long)bytes, 0);
  return *p ? kSuccess : kInternalError;
}
int ncclMemFree(void* p) {
  free(p);
  record("ncclMemFree", "", 0, 0);
  return kSuccess;
}

int ncclCommWindowRegister(void* comm, void* buf, size_t bytes, void** win, int flags) {
  if (failing("ncclCommWindowRegister")) return kInternalError;
  /* The header (4096 bytes) must be zero before registration: peers write it once registered. */
  int zero = 1;
  for (size_t i = 0; i < 4096 && i < bytes; ++i) zero &= ((const unsigned char*)buf)[i] == 0;
  record(comm == g_comm ? "ncclCommWindowRegister %s bytes=%lld flags=%lld" : "ncclCommWindowRegister (bad comm)%s",
         zero ? "header=0" : "header=dirty", (long long)bytes, flags);
  *win = g_windows + (g_windows_made++ % 64);
  return kSuccess;
}
int ncclCommWindowDeregister(void* comm, void* win) {
  (void)comm;
  record("ncclCommWindowDeregister%s w%lld", "", (long long)((char*)win - g_windows), 0);
  return kSuccess;
}
int ncclCommDestroy(void* comm) {
  record(comm == g_comm ? "ncclCommDestroy%s" : "ncclCommDestroy (bad comm)%s", "", 0, 0);
  return kSuccess;
}
