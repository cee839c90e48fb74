// cuda emitter: goldens of the generated .cu for the hand-made plans of
// tests/codegen (every sync kind, two streams, an unfused op) and for a
// planned op list, properties of the text, and every golden compiled with
// nvcc for sm_90 (device code checked by ptxas; skipped without nvcc).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "codegen/TestPlans.h"
#include "cuda/CudaTestUtil.h"
#include "superkernel/codegen/Emitter.h"
#include "superkernel/driver/Process.h"
#include "superkernel/support/Paths.h"

namespace sk {
namespace {
namespace fs = std::filesystem;
using namespace sk::testplans;
using cudatest::checkGolden;

std::shared_ptr<const Emitter> cuda() {
  auto t = makeEmitter("cuda");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message());
  return t.ok() ? *t : nullptr;
}

GeneratedSource emitOk(const FusionPlan& plan, size_t step = 0) {
  auto t = cuda();
  if (!t) return {};
  auto src = t->emit(plan, step);
  EXPECT_TRUE(src.ok()) << (src.ok() ? "" : src.error().message());
  return src.ok() ? *src : GeneratedSource{};
}

const char* kGoldens[] = {"seed.cu", "sync_kinds.cu", "two_streams.cu", "unfused_op.cu", "profiling.cu"};

TEST(CudaCodegen, GoldenSeed) { checkGolden("seed.cu", emitOk(seedPlan()).text); }
TEST(CudaCodegen, GoldenSyncKinds) { checkGolden("sync_kinds.cu", emitOk(syncKindsPlan()).text); }
TEST(CudaCodegen, GoldenTwoStreams) { checkGolden("two_streams.cu", emitOk(twoStreamsPlan()).text); }
TEST(CudaCodegen, GoldenUnfusedOp) { checkGolden("unfused_op.cu", emitOk(unfusedPlan()).text); }
TEST(CudaCodegen, GoldenRuntimeScalar) { checkGolden("runtime_scalar.cu", emitOk(runtimeScalarPlan()).text); }

// A runtime scalar is a load from the step's device buffer at the call.
TEST(CudaCodegen, RuntimeScalarIsADeviceLoadAtTheCall) {
  const std::string t = emitOk(runtimeScalarPlan()).text;
  EXPECT_NE(t.find("static_cast<const int64_t*>(sk_buf[4])[1])"), std::string::npos);
  EXPECT_EQ(t.find("INT64_C(0)"), std::string::npos);
}
// profiling=1: record rows sized 4 per block a CTA runs, records around waits and blocks, the reader.
TEST(CudaCodegen, GoldenProfiling) {
  FusionPlan plan = syncKindsPlan();
  plan.steps[0].options.profiling = true;
  checkGolden("profiling.cu", emitOk(plan).text);
}

TEST(CudaCodegen, SourceIsCudaWithItsManifest) {
  GeneratedSource s = emitOk(seedPlan());
  EXPECT_EQ(s.language, "cuda");
  EXPECT_EQ(fs::path(s.fileName).extension(), ".cu");
  auto m = nlohmann::json::parse(s.manifest);
  EXPECT_EQ(m["target"], "cuda");
  EXPECT_NE(s.text.find("extern \"C\" __global__ void __launch_bounds__(256) sk_superkernel"), std::string::npos);
  EXPECT_NE(s.text.find("int run(uint32_t block_dim, void* stream, const sk_run_args* args)"), std::string::npos);
}

TEST(CudaCodegen, SyncKindsMapToDeviceScopePrimitives) {
  const std::string t = emitOk(syncKindsPlan()).text;
  // flag table 8 -> 4, counters, a grid barrier before the kernel_sync op, its kernel_sync slot.
  EXPECT_NE(t.find("SK_WAIT_FLAG_RANGE"), std::string::npos);
  EXPECT_NE(t.find("SK_WAIT_COUNTER"), std::string::npos);
  EXPECT_NE(t.find("sk_cta_barrier(&sk_bar[0], cores, (e - 1) * 1 + 1)"), std::string::npos);
  EXPECT_NE(t.find("__device__ unsigned int sk_ksync[2]"), std::string::npos);
  // Two edges 0 -> 1 (RAW and WAR on t1) need one wait: four wait rows in all (flag, counter, counter + none
  // for the barrier edge, which the barrier covers).
  EXPECT_NE(t.find("__device__ const sk_wait_desc sk_waits[3]"), std::string::npos) << t;
  // Early start: op 2's descriptor says so; the kernel's points are honoured by the runtime.
  EXPECT_NE(t.find("{4u, 1u, 1u,"), std::string::npos);
  // preload-code is printed as a comment that says it has no effect.
  EXPECT_NE(t.find("no effect on GPUs"), std::string::npos);
  EXPECT_EQ(t.find("__builtin_prefetch"), std::string::npos);
  // No reset kernel: nothing in the module zeroes the sync area.
  EXPECT_EQ(t.find("cudaMemset"), std::string::npos);
}

TEST(CudaCodegen, TwoStreamsDispatchCtasToQueues) {
  const std::string t = emitOk(twoStreamsPlan()).text;
  EXPECT_NE(t.find("if (core < 2u) return sk_queue0(&env, core - 0, 2u);"), std::string::npos) << t;
  EXPECT_NE(t.find("if (core >= 2u && core < 4u) return sk_queue1(&env, core - 2, 2u);"), std::string::npos);
  EXPECT_NE(t.find("SK_WAIT_FLAG, "), std::string::npos);  // the one-to-one flag edge across the queues
}

TEST(CudaCodegen, UnfusedLaunchesOneCtaPerBlock) {
  FusionPlan plan = unfusedPlan();
  const std::string t = emitOk(plan).text;
  const uint32_t blocks = plan.steps[0].ops[0].blockDim;
  EXPECT_NE(t.find("SK_LAUNCH_SUPERKERNEL(" + std::to_string(blocks) + ", 256, 0, stream, sk_epoch + 1)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("sk_queue0(&env, core, gridDim.x);"), std::string::npos);
  // An unfused step never checks co-residency: it has no grid-wide waits.
  EXPECT_EQ(t.find("cudaOccupancyMaxActiveBlocksPerMultiprocessor"), std::string::npos);
}

// The Graph + PDL baseline's variant (CompileRequest::graphPdl) is the unfused step's text plus one define that
// superkernel_rt.cuh reads, and launch metadata that makes the recipe export sk_last_launch; without the flag the
// text is the golden as it was, and a fused step never gets it.
std::string withPdlDefine(std::string text) {
  const std::string include = "#include \"superkernel/cuda/superkernel_rt.cuh\"\n";
  const size_t at = text.find(include);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos)
    text.insert(at, "#define SK_CUDA_PDL 1  // the Graph + PDL baseline's variant of this unfused step "
                    "(superkernel_rt.cuh)\n");
  return text;
}

TEST(CudaCodegen, GraphPdlVariantIsTheUnfusedTextPlusOneDefine) {
  FusionPlan plan = unfusedPlan();
  const GeneratedSource plain = emitOk(plan);
  EXPECT_EQ(plain.launch, "");
  plan.steps[0].graphPdl = true;
  const GeneratedSource pdl = emitOk(plan);
  EXPECT_EQ(pdl.text, withPdlDefine(cudatest::readFile(cudatest::goldenDir() / "unfused_op.cu")));
  EXPECT_EQ(pdl.launch, "graph-pdl");
  FusionPlan fused = seedPlan();
  fused.steps[0].graphPdl = true;  // only unfused steps have the variant
  const GeneratedSource f = emitOk(fused);
  EXPECT_EQ(f.text.find("SK_CUDA_PDL"), std::string::npos);
  EXPECT_EQ(f.launch, "");
}

// The variant's weights before the wait: an input no op of the plan writes (PlanBuffer::readOnlyInPlan, which
// markGraphPdlSteps sets) is prefetched by each CTA before the op's sk_run_op, where griddepcontrol.wait is; an
// input that is not marked (an earlier launch may write it) is not, and without the variant nothing is.
TEST(CudaCodegen, GraphPdlVariantPrefetchesOnlyPlanConstantInputsBeforeItsWait) {
  FusionPlan plan = unfusedPlan();
  plan.steps[0].graphPdl = true;
  plan.steps[0].buffers[0].readOnlyInPlan = true;
  const std::string t = emitOk(plan).text;
  const size_t prefetch = t.find(") sk_preload_data(0u, ");
  ASSERT_NE(prefetch, std::string::npos) << t;
  EXPECT_LT(prefetch, t.find("  sk_run_op(env, &sk_ops[0]")) << t;
  EXPECT_EQ(t.find("sk_preload_data(1u"), std::string::npos) << t;  // not marked: never prefetched
  plan.steps[0].graphPdl = false;
  EXPECT_EQ(emitOk(plan).text.find("sk_preload_data("), std::string::npos);
}

// nvcc builds the variant warning-free; its PTX (sm_90) lets the next kernel launch, then waits for the previous
// one before the block's sub-kernel call (the first read of an input), and the plain unfused text has neither
// instruction; for sm_80 the variant compiles without them (PDL needs sm_90). The weight prefetch comes before
// the wait. The host side defines sk_last_launch for the capture.
TEST(CudaCodegen, GraphPdlVariantPtxWaitsBeforeTheSubKernelCall) {
  SK_REQUIRE_NVCC(nvcc);
  cudatest::TempDir dir("pdl");
  FusionPlan plan = unfusedPlan();
  plan.steps[0].graphPdl = true;
  plan.steps[0].buffers[0].readOnlyInPlan = true;
  const fs::path src = dir.path / "unfused_pdl.cu";
  {
    std::ofstream out(src);
    out << emitOk(plan).text;
  }
  auto nvccRun = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {nvcc, "-std=c++17", "-rdc=true", "-I" + (dataRuntimeDir() / "cuda" / "include").string(),
                                     "-Xcompiler=-fPIC,-Wall,-Wextra", "-Werror", "all-warnings"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions po;
    po.timeout = std::chrono::minutes(3);
    auto r = runProcess(argv, po);
    EXPECT_TRUE(r.ok()) << r.error().message();
    if (r.ok()) {
      EXPECT_EQ(r->exitCode, 0) << r->err;
    }
  };
  nvccRun({"-arch=sm_90", "-ptx", src.string(), "-o", (dir.path / "pdl90.ptx").string()});
  const std::string ptx = cudatest::readFile(dir.path / "pdl90.ptx");
  const size_t trigger = ptx.find("griddepcontrol.launch_dependents;");
  const size_t wait = ptx.find("griddepcontrol.wait;");
  const size_t call = ptx.find("sk_call_op0EPK6sk_ctx, ");  // the call site (the definition has "(")
  ASSERT_NE(trigger, std::string::npos) << ptx;
  ASSERT_NE(wait, std::string::npos) << ptx;
  ASSERT_NE(call, std::string::npos) << ptx;
  EXPECT_LT(trigger, wait);
  EXPECT_LT(wait, call) << "the sub-kernel is called before griddepcontrol.wait";
  const size_t prefetch = ptx.find("cp.async.bulk.prefetch.L2");
  ASSERT_NE(prefetch, std::string::npos) << ptx;
  // The prefetch is issued in the queue before its call of sk_run_op (which waits at griddepcontrol.wait): the
  // call site passes the sub-kernel's address.
  EXPECT_LT(prefetch, call) << "the weights are prefetched after the op's call";

  nvccRun({"-arch=sm_80", "-ptx", src.string(), "-o", (dir.path / "pdl80.ptx").string()});
  EXPECT_EQ(cudatest::readFile(dir.path / "pdl80.ptx").find("griddepcontrol"), std::string::npos);

  nvccRun({"-arch=sm_90", "-ptx", (cudatest::goldenDir() / "unfused_op.cu").string(), "-o",
           (dir.path / "plain.ptx").string()});
  EXPECT_EQ(cudatest::readFile(dir.path / "plain.ptx").find("griddepcontrol"), std::string::npos);

  nvccRun({"-arch=sm_90", "-c", src.string(), "-o", (dir.path / "pdl.o").string()});
  auto nm = runProcess({"nm", (dir.path / "pdl.o").string()});
  ASSERT_TRUE(nm.ok()) << nm.error().message();
  EXPECT_NE(nm->out.find(" T sk_last_launch\n"), std::string::npos) << nm->out;
}

TEST(CudaCodegen, CtaShapeIsTheLargestDeclared) {
  FusionPlan plan = syncKindsPlan();
  plan.variants[1].decl.attributes["threads"] = 512;
  plan.variants[2].decl.attributes["shared_bytes"] = 64 * 1024;
  const std::string t = emitOk(plan).text;
  EXPECT_NE(t.find("__launch_bounds__(512)"), std::string::npos);
  EXPECT_NE(t.find("SK_LAUNCH_SUPERKERNEL(4, 512, 65536, stream, sk_epoch + 1)"), std::string::npos);
  // Above 48 KiB the module raises the kernel's dynamic shared memory limit once.
  EXPECT_NE(t.find("cudaFuncAttributeMaxDynamicSharedMemorySize, 65536"), std::string::npos);
}

TEST(CudaCodegen, OutputIsDeterministic) {
  EXPECT_EQ(emitOk(syncKindsPlan()).text, emitOk(syncKindsPlan()).text);
  EXPECT_EQ(emitOk(twoStreamsPlan()).text, emitOk(twoStreamsPlan()).text);
}

TEST(CudaCodegen, InconsistentPlansAreErrorsNotCode) {
  FusionPlan plan = syncKindsPlan();
  plan.steps[0].ops[1].variant = 99;
  auto t = cuda();
  ASSERT_TRUE(t);
  auto src = t->emit(plan, 0);
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.error().kind(), ErrorKind::Internal) << src.error().message();
  auto out = t->emit(syncKindsPlan(), 7);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("out of range"), std::string::npos);
}

// Every golden compiles for sm_90 as relocatable device code (the sub-kernels
// are extern: the device link is the examples' test, CudaBuildTest.cpp).
TEST(CudaCodegen, GoldensCompileWithNvcc) {
  SK_REQUIRE_NVCC(nvcc);
  fs::path dir = fs::temp_directory_path() / ("sk-cuda-goldens-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* g : kGoldens) {
    std::vector<std::string> argv = {nvcc, "-c", "-rdc=true", "-O3", "-std=c++17", "-arch=sm_90",
                                     "-Xcompiler=-fPIC", "-I" + (dataRuntimeDir() / "cuda" / "include").string(),
                                     "-o", (dir / (std::string(g) + ".o")).string(), "-x", "cu",
                                     (cudatest::goldenDir() / g).string()};
    ProcessOptions po;
    po.timeout = std::chrono::minutes(3);
    auto r = runProcess(argv, po);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r->exitCode, 0) << g << ":\n" << r->err;
    EXPECT_EQ(r->err.find("warning"), std::string::npos) << g << ":\n" << r->err;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace sk
