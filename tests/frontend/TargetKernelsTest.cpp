// Which target's kernels a target compiles (kernelsFolderOf, asked of the registry): cuda-sim
// builds the cuda sources and builtins, and moving an op list between the two
// keeps a plain source usable, while moving it to another target makes it
// that list's target's entry of "sources" (retargetOpList).
#include <gtest/gtest.h>

#include "superkernel/frontend/OpList.h"
#include "superkernel/target/Targets.h"

namespace sk {
namespace {

TEST(TargetKernels, CudaSimCompilesTheCudaKernels) {
  EXPECT_EQ(kernelsFolderOf("cuda-sim"), "cuda");
  EXPECT_EQ(kernelsFolderOf("cuda"), "cuda");
  EXPECT_EQ(kernelsFolderOf("cpu"), "cpu");
  EXPECT_EQ(kernelsFolderOf("no-such-target"), "no-such-target");  // the validator reports the name
  auto b = findBuiltinKernel("add_f32", "cuda-sim");
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_EQ(b->sourcePath.parent_path().filename(), "cuda");
  EXPECT_EQ(builtinKernelNames("cuda-sim"), builtinKernelNames("cuda"));
  EXPECT_FALSE(builtinKernelNames("cuda-sim").empty());
}

OpList listWithPlainSource(const std::string& target) {
  OpList l;
  l.target = target;
  KernelDecl k;
  k.name = "k";
  k.source = "k.cu";
  k.sourcePath = "/src/k.cu";
  l.kernels.push_back(k);
  return l;
}

TEST(TargetKernels, RetargetingKeepsAPlainSourceWhereTheKernelsAreTheSame) {
  OpList sim = retargetOpList(listWithPlainSource("cuda"), "cuda-sim");
  EXPECT_EQ(sim.target, "cuda-sim");
  EXPECT_TRUE(sim.kernels[0].sources.empty());
  EXPECT_EQ(sim.kernels[0].source, "k.cu");
  // To another target, the plain source is the kernels' target's entry (cuda's, also from cuda-sim).
  for (const char* from : {"cuda", "cuda-sim"}) {
    OpList cpu = retargetOpList(listWithPlainSource(from), "cpu");
    ASSERT_EQ(cpu.kernels[0].sources.count("cuda"), 1u) << from;
    EXPECT_EQ(cpu.kernels[0].sources.at("cuda"), "k.cu");
    EXPECT_EQ(cpu.kernels[0].sourcePaths.at("cuda"), "/src/k.cu");
  }
}

}  // namespace
}  // namespace sk
