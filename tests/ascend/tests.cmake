# The ascend back end's tests: sk_test_ascend (included from tests/CMakeLists.txt).
# SimKernels.cpp is simulated Ascend C: it compiles against the simulator's
# kernel_operator.h only. ENABLE_EXPORTS puts the kernels in the dynamic symbol
# table so the simulator's preload check can resolve them as on a kernel .so.
file(GLOB SK_ASCEND_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
add_executable(sk_test_ascend ${SK_ASCEND_TEST_SOURCES})
sk_set_warnings(sk_test_ascend)
set_target_properties(sk_test_ascend PROPERTIES ENABLE_EXPORTS ON)
target_include_directories(sk_test_ascend PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(sk_test_ascend PRIVATE superkernel::superkernel superkernel::ascend_sim GTest::gtest GTest::gtest_main
  fmt::fmt Threads::Threads)
target_compile_definitions(sk_test_ascend PRIVATE
  SK_SOURCE_ROOT="${PROJECT_SOURCE_DIR}" SK_BINARY_ROOT="${PROJECT_BINARY_DIR}")
# The emitter and planned-run tests compile simulated SuperKernels with clang++: through ccache when there is
# one, so a second run recompiles nothing.
find_program(SK_ASCEND_TEST_CCACHE ccache)
set(_sk_ascend_env "SK_LOG_LEVEL=warn")
if(SK_ASCEND_TEST_CCACHE)
  list(APPEND _sk_ascend_env "SK_COMPILER_LAUNCHER=${SK_ASCEND_TEST_CCACHE}")
endif()
gtest_discover_tests(sk_test_ascend DISCOVERY_MODE PRE_TEST
  PROPERTIES LABELS ascend ENVIRONMENT "${_sk_ascend_env}")

# The ascend builtin kernels (kernels/ascend), each compiled like a simulated
# sub-kernel with static shapes and its entry renamed asc_<name>, next to the
# cpu builtin of the same name compiled with the same shapes and renamed
# cpu_<name>: KernelsTest.cpp runs both and compares the bits. The cpu side is
# built with SK_KERNELS_BASELINE=1, the scalar kernels the ascend ports mirror
# operation for operation; the vectorised cpu kernels sum in another order and
# are checked against an f64 reference in tests/kernels instead.
set(_sk_asc_kdir ${PROJECT_SOURCE_DIR}/kernels/ascend)
if(EXISTS ${PROJECT_SOURCE_DIR}/kernels/cpu)
  set(_sk_cpu_kdir ${PROJECT_SOURCE_DIR}/kernels/cpu)
else()
  set(_sk_cpu_kdir ${PROJECT_SOURCE_DIR}/templates/kernels)
endif()
function(_sk_ascend_kernel_pair name source entry defs)
  string(REPLACE "," ";" defs "${defs}")
  add_library(sk_test_ascend_k_${name} OBJECT ${_sk_asc_kdir}/${source})
  sk_set_warnings(sk_test_ascend_k_${name})
  target_include_directories(sk_test_ascend_k_${name} PRIVATE ${PROJECT_SOURCE_DIR}/runtime/ascend/sim/include)
  target_compile_definitions(sk_test_ascend_k_${name} PRIVATE ${defs} ${entry}=asc_${name})
  target_sources(sk_test_ascend PRIVATE $<TARGET_OBJECTS:sk_test_ascend_k_${name}>)
  add_library(sk_test_ascend_c_${name} OBJECT ${_sk_cpu_kdir}/${source})
  set_target_properties(sk_test_ascend_c_${name} PROPERTIES CXX_STANDARD 17)
  target_include_directories(sk_test_ascend_c_${name} PRIVATE
    $<TARGET_PROPERTY:superkernel_runtime,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(sk_test_ascend_c_${name} PRIVATE ${defs} ${entry}=cpu_${name} SK_KERNELS_BASELINE=1)
  target_sources(sk_test_ascend PRIVATE $<TARGET_OBJECTS:sk_test_ascend_c_${name}>)
endfunction()
_sk_ascend_kernel_pair(add add.cpp sk_add_f32 "SK_N=1000")
_sk_ascend_kernel_pair(copy copy.cpp sk_copy_f32 "SK_N=1000")
_sk_ascend_kernel_pair(swiglu swiglu.cpp sk_swiglu_f32 "SK_N=1000")
_sk_ascend_kernel_pair(rms_norm rms_norm.cpp sk_rms_norm_f32 "SK_ROWS=3,SK_COLS=64,SK_EPS=1e-5f")
_sk_ascend_kernel_pair(add_rms_norm add_rms_norm.cpp sk_add_rms_norm_f32 "SK_ROWS=3,SK_COLS=64,SK_EPS=1e-5f")
_sk_ascend_kernel_pair(softmax softmax.cpp sk_softmax_f32 "SK_ROWS=5,SK_COLS=33")
_sk_ascend_kernel_pair(rope rope.cpp sk_rope_f32 "SK_HEADS=4,SK_DIM=16,SK_POS=7,SK_THETA=10000.0f")
_sk_ascend_kernel_pair(rope_odd rope.cpp sk_rope_f32 "SK_HEADS=4,SK_DIM=15,SK_POS=7,SK_THETA=10000.0f")
_sk_ascend_kernel_pair(attn_scores attn_scores.cpp sk_attn_scores_f32
  "SK_HEADS=4,SK_KV_HEADS=2,SK_SEQ=9,SK_DIM=16,SK_SCALE=0.25f")
_sk_ascend_kernel_pair(attn_wsum attn_weighted_sum.cpp sk_attn_weighted_sum_f32
  "SK_HEADS=4,SK_KV_HEADS=2,SK_SEQ=9,SK_DIM=16")
_sk_ascend_kernel_pair(gemv gemv.cpp sk_gemv_f32 "SK_ROWS=37,SK_COLS=64")
_sk_ascend_kernel_pair(gemv_bf16w gemv.cpp sk_gemv_bf16w "SK_WEIGHT_BF16=1,SK_ROWS=37,SK_COLS=64")
_sk_ascend_kernel_pair(moe_expert moe_expert_gemv.cpp sk_moe_expert_gemv_bf16w
  "SK_WEIGHT_BF16=1,SK_EXPERTS=4,SK_TOPK=2,SK_ROWS=8,SK_COLS=16,SK_X_PER_SLOT=0")
_sk_ascend_kernel_pair(moe_expert_slot moe_expert_gemv.cpp sk_moe_expert_gemv_f32
  "SK_EXPERTS=4,SK_TOPK=2,SK_ROWS=8,SK_COLS=16,SK_X_PER_SLOT=1")
_sk_ascend_kernel_pair(moe_gate moe_gate_topk.cpp sk_moe_gate_topk_f32
  "SK_ROWS=2,SK_EXPERTS=8,SK_TOPK=2,SK_SIGMOID=0,SK_NORMALIZE=1")
_sk_ascend_kernel_pair(moe_gate_sig moe_gate_topk.cpp sk_moe_gate_topk_f32
  "SK_ROWS=3,SK_EXPERTS=6,SK_TOPK=3,SK_SIGMOID=1,SK_NORMALIZE=0")
_sk_ascend_kernel_pair(moe_combine moe_combine.cpp sk_moe_combine_f32 "SK_TOPK=2,SK_ROWS=8")
_sk_ascend_kernel_pair(mul mul.cpp sk_mul_f32 "SK_N=1000")
_sk_ascend_kernel_pair(scale scale.cpp sk_scale_f32 "SK_N=1000,SK_ALPHA=0.37f")
_sk_ascend_kernel_pair(concat concat.cpp sk_concat_f32 "SK_ROWS=3,SK_CA=5,SK_CB=7")
_sk_ascend_kernel_pair(transpose transpose.cpp sk_transpose_f32 "SK_ROWS=7,SK_COLS=9")
_sk_ascend_kernel_pair(reduce_mean reduce_mean.cpp sk_reduce_mean_f32 "SK_ROWS=5,SK_COLS=33")
_sk_ascend_kernel_pair(cast_f32_f16 cast.cpp sk_cast_f32_f16 "SK_CAST_F32_F16=1,SK_N=1000")
_sk_ascend_kernel_pair(cast_f16_f32 cast.cpp sk_cast_f16_f32 "SK_CAST_F16_F32=1,SK_N=1000")
_sk_ascend_kernel_pair(cast_f32_bf16 cast.cpp sk_cast_f32_bf16 "SK_CAST_F32_BF16=1,SK_N=1000")
_sk_ascend_kernel_pair(cast_bf16_f32 cast.cpp sk_cast_bf16_f32 "SK_CAST_BF16_F32=1,SK_N=1000")
_sk_ascend_kernel_pair(matmul matmul.cpp sk_matmul_f32 "SK_M=3,SK_K=19,SK_N=11")
_sk_ascend_kernel_pair(matmul_bf16w matmul.cpp sk_matmul_bf16w "SK_WEIGHT_BF16=1,SK_M=3,SK_K=19,SK_N=12")
_sk_ascend_kernel_pair(kv_append kv_append.cpp sk_kv_append_f32 "SK_ROW=37,SK_CAP=5,SK_POS=3")
_sk_ascend_kernel_pair(kv_append_bad kv_append.cpp sk_kv_append_f32 "SK_ROW=37,SK_CAP=5,SK_POS=5")
_sk_ascend_kernel_pair(attn_decode attn_decode.cpp sk_attn_decode_f32
  "SK_HEADS=4,SK_KV_HEADS=2,SK_DIM=16,SK_CAP=9,SK_POS=6,SK_SCALE=0.25f")
_sk_ascend_kernel_pair(attn_decode_long attn_decode.cpp sk_attn_decode_f32
  "SK_HEADS=6,SK_KV_HEADS=3,SK_DIM=8,SK_CAP=300,SK_POS=290,SK_SCALE=0.7f")
_sk_ascend_kernel_pair(attn_decode_bad attn_decode.cpp sk_attn_decode_f32
  "SK_HEADS=4,SK_KV_HEADS=2,SK_DIM=16,SK_CAP=9,SK_POS=9,SK_SCALE=0.25f")
_sk_ascend_kernel_pair(increment increment.cpp sk_increment_i64 "SK_N=10,SK_DELTA=3")
# Shapes past one UB tile: several tiles per block, the last one shorter and not whole 32-byte blocks.
_sk_ascend_kernel_pair(add_tiles add.cpp sk_add_f32 "SK_N=20003")
_sk_ascend_kernel_pair(cast_f32_bf16_tiles cast.cpp sk_cast_f32_bf16 "SK_CAST_F32_BF16=1,SK_N=20003")
_sk_ascend_kernel_pair(rope_tiles rope.cpp sk_rope_f32 "SK_HEADS=600,SK_DIM=16,SK_POS=5,SK_THETA=10000.0f")
_sk_ascend_kernel_pair(softmax_wide softmax.cpp sk_softmax_f32 "SK_ROWS=4,SK_COLS=3001")
_sk_ascend_kernel_pair(rms_norm_too_wide rms_norm.cpp sk_rms_norm_f32 "SK_ROWS=2,SK_COLS=8193,SK_EPS=1e-5f")
_sk_ascend_kernel_pair(attn_decode_wide attn_decode.cpp sk_attn_decode_f32
  "SK_HEADS=4,SK_KV_HEADS=2,SK_DIM=200,SK_CAP=100,SK_POS=90,SK_SCALE=0.07f")
# gemv past one tile: rows of 3,001 columns (one per W tile); 20,001 bf16 columns (three x chunks, the last
# short); 2,003 rows of 24 (many W and y tiles). moe_expert_gemv with 9,000 columns (two chunks, x per slot).
_sk_ascend_kernel_pair(gemv_wide gemv.cpp sk_gemv_f32 "SK_ROWS=37,SK_COLS=3001")
_sk_ascend_kernel_pair(gemv_bf16w_chunks gemv.cpp sk_gemv_bf16w "SK_WEIGHT_BF16=1,SK_ROWS=5,SK_COLS=20001")
_sk_ascend_kernel_pair(gemv_bf16w_tall gemv.cpp sk_gemv_bf16w "SK_WEIGHT_BF16=1,SK_ROWS=2003,SK_COLS=24")
_sk_ascend_kernel_pair(moe_expert_wide moe_expert_gemv.cpp sk_moe_expert_gemv_f32
  "SK_EXPERTS=3,SK_TOPK=2,SK_ROWS=130,SK_COLS=9000,SK_X_PER_SLOT=1")
# moe_gate_topk over 96 experts (two 64-element repeats): sigmoid (no sum: every bit the cpu's) and softmax;
# and past the experts a row tile holds (the launch fails).
_sk_ascend_kernel_pair(moe_gate_wide moe_gate_topk.cpp sk_moe_gate_topk_f32
  "SK_ROWS=5,SK_EXPERTS=96,SK_TOPK=6,SK_SIGMOID=1,SK_NORMALIZE=1")
_sk_ascend_kernel_pair(moe_gate_wide_softmax moe_gate_topk.cpp sk_moe_gate_topk_f32
  "SK_ROWS=3,SK_EXPERTS=96,SK_TOPK=4,SK_SIGMOID=0,SK_NORMALIZE=0")
_sk_ascend_kernel_pair(moe_gate_too_wide moe_gate_topk.cpp sk_moe_gate_topk_f32
  "SK_ROWS=1,SK_EXPERTS=4097,SK_TOPK=1,SK_SIGMOID=0,SK_NORMALIZE=0")
target_link_libraries(sk_test_ascend PRIVATE superkernel::runtime nlohmann_json::nlohmann_json)
target_compile_definitions(sk_test_ascend PRIVATE SK_ASCEND_KERNELS_DIR="${_sk_asc_kdir}"
  SK_ASCEND_SIM_INCLUDE="${PROJECT_SOURCE_DIR}/runtime/ascend/sim/include")
