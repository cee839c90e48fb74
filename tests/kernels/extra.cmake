# Included by tests/CMakeLists.txt for sk_test_kernels (target name in `t`).
#
# Every builtin kernel (kernels/cpu/<name>.json) is compiled into the
# test binary the way the driver compiles it: its source with the JSON's
# macros, -O2, only runtime/cpu/include on the include path, C++17. Then a few
# static-shape copies: the same source with -DSK_<PARAM>=<value> and the
# entry renamed -D<entry>=<entry>_static, so run-time and compile-time shapes
# are both tested.
set(_sk_kdir ${PROJECT_SOURCE_DIR}/kernels/cpu)
file(GLOB _sk_kjsons CONFIGURE_DEPENDS ${_sk_kdir}/*.json)

function(_sk_kernel_object name source defs)
  set(lib ${t}_k_${name})
  add_library(${lib} OBJECT ${source})
  sk_set_warnings(${lib})
  set_target_properties(${lib} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  target_include_directories(${lib} PRIVATE ${PROJECT_SOURCE_DIR}/runtime/cpu/include)
  target_compile_options(${lib} PRIVATE -O2)
  target_compile_definitions(${lib} PRIVATE ${defs})
  target_sources(${t} PRIVATE $<TARGET_OBJECTS:${lib}>)
endfunction()

foreach(_json IN LISTS _sk_kjsons)
  get_filename_component(_name ${_json} NAME_WE)
  file(READ ${_json} _text)
  string(JSON _src GET "${_text}" source)
  string(JSON _nmac LENGTH "${_text}" macros)
  set(_defs "")
  if(_nmac GREATER 0)
    math(EXPR _last "${_nmac} - 1")
    foreach(i RANGE ${_last})
      string(JSON _key MEMBER "${_text}" macros ${i})
      string(JSON _val GET "${_text}" macros ${_key})
      list(APPEND _defs "${_key}=${_val}")
    endforeach()
  endif()
  _sk_kernel_object(${_name} ${_sk_kdir}/${_src} "${_defs}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_json})
endforeach()

# Static-shape copies: name | source | comma-separated defines (tests/kernels/StaticShapeTest.cpp
# declares the *_static entries with these exact shapes).
set(_sk_static
  "add_static|add.cpp|SK_N=1000,sk_add_f32=sk_add_f32_static"
  "mul_static|mul.cpp|SK_N=1000,sk_mul_f32=sk_mul_f32_static"
  "scale_static|scale.cpp|SK_N=1000,SK_ALPHA=0.5f,sk_scale_f32=sk_scale_f32_static"
  "copy_static|copy.cpp|SK_N=1000,sk_copy_f32=sk_copy_f32_static"
  "swiglu_static|swiglu.cpp|SK_N=1000,sk_swiglu_f32=sk_swiglu_f32_static"
  "cast_bf16_static|cast.cpp|SK_CAST_F32_BF16=1,SK_N=1000,sk_cast_f32_bf16=sk_cast_f32_bf16_static"
  "cast_f16_static|cast.cpp|SK_CAST_F16_F32=1,SK_N=1000,sk_cast_f16_f32=sk_cast_f16_f32_static"
  "rms_norm_static|rms_norm.cpp|SK_ROWS=3,SK_COLS=64,SK_EPS=1e-5f,sk_rms_norm_f32=sk_rms_norm_f32_static"
  "add_rms_norm_static|add_rms_norm.cpp|SK_ROWS=3,SK_COLS=64,SK_EPS=1e-5f,sk_add_rms_norm_f32=sk_add_rms_norm_f32_static"
  "softmax_static|softmax.cpp|SK_ROWS=5,SK_COLS=33,sk_softmax_f32=sk_softmax_f32_static"
  "reduce_mean_static|reduce_mean.cpp|SK_ROWS=7,SK_COLS=19,sk_reduce_mean_f32=sk_reduce_mean_f32_static"
  "rope_static|rope.cpp|SK_HEADS=4,SK_DIM=16,SK_POS=7,SK_THETA=10000.0f,sk_rope_f32=sk_rope_f32_static"
  "gemv_static|gemv.cpp|SK_ROWS=37,SK_COLS=64,sk_gemv_f32=sk_gemv_f32_static"
  "gemv_bf16w_static|gemv.cpp|SK_WEIGHT_BF16=1,SK_ROWS=37,SK_COLS=64,sk_gemv_bf16w=sk_gemv_bf16w_static"
  "matmul_static|matmul.cpp|SK_M=3,SK_K=16,SK_N=24,sk_matmul_f32=sk_matmul_f32_static"
  "matmul_bf16w_static|matmul.cpp|SK_WEIGHT_BF16=1,SK_M=3,SK_K=16,SK_N=24,sk_matmul_bf16w=sk_matmul_bf16w_static"
  "moe_expert_static|moe_expert_gemv.cpp|SK_EXPERTS=4,SK_TOPK=2,SK_ROWS=8,SK_COLS=16,SK_X_PER_SLOT=0,sk_moe_expert_gemv_f32=sk_moe_expert_gemv_f32_static"
  "moe_gate_static|moe_gate_topk.cpp|SK_ROWS=2,SK_EXPERTS=8,SK_TOPK=2,SK_SIGMOID=0,SK_NORMALIZE=1,sk_moe_gate_topk_f32=sk_moe_gate_topk_f32_static"
  "moe_combine_static|moe_combine.cpp|SK_TOPK=2,SK_ROWS=8,sk_moe_combine_f32=sk_moe_combine_f32_static"
  "attn_scores_static|attn_scores.cpp|SK_HEADS=4,SK_KV_HEADS=2,SK_SEQ=9,SK_DIM=16,SK_SCALE=0.25f,sk_attn_scores_f32=sk_attn_scores_f32_static"
  "attn_wsum_static|attn_weighted_sum.cpp|SK_HEADS=4,SK_KV_HEADS=2,SK_SEQ=9,SK_DIM=16,sk_attn_weighted_sum_f32=sk_attn_weighted_sum_f32_static"
  "transpose_static|transpose.cpp|SK_ROWS=5,SK_COLS=7,sk_transpose_f32=sk_transpose_f32_static"
  "concat_static|concat.cpp|SK_ROWS=3,SK_CA=4,SK_CB=5,sk_concat_f32=sk_concat_f32_static"
  "kv_append_static|kv_append.cpp|SK_ROW=37,SK_CAP=5,SK_POS=3,sk_kv_append_f32=sk_kv_append_f32_static"
  "attn_decode_static|attn_decode.cpp|SK_HEADS=4,SK_KV_HEADS=2,SK_DIM=16,SK_CAP=9,SK_POS=6,SK_SCALE=0.25f,sk_attn_decode_f32=sk_attn_decode_f32_static"
  "increment_static|increment.cpp|SK_N=1000,SK_DELTA=3,sk_increment_i64=sk_increment_i64_static")
foreach(_entry IN LISTS _sk_static)
  string(REPLACE "|" ";" _parts "${_entry}")
  list(GET _parts 0 _name)
  list(GET _parts 1 _src)
  list(GET _parts 2 _defs)
  string(REPLACE "," ";" _defs "${_defs}")
  _sk_kernel_object(${_name} ${_sk_kdir}/${_src} "${_defs}")
endforeach()
target_compile_definitions(${t} PRIVATE SK_KERNELS_DIR="${_sk_kdir}")

# -march copies of the vectorized kernels (sk_simd.h picks its vector width
# and conversion instructions from the target): x86-64-v3 (AVX2, FMA, F16C)
# and x86-64-v4 (AVX-512), entries renamed <entry>_v3 / <entry>_v4. The plain
# objects above (no -march) test the portable 4-wide fallback with the
# bit-arithmetic f16 conversion. tests/kernels/SimdTest.cpp runs a copy only
# when the CPU supports it (__builtin_cpu_supports).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(_sk_simd_builtins gemv_f32 gemv_bf16w gemv_f16w gemv_q8_0 gemv_q4_0 matmul_f32 matmul_bf16w matmul_f16w
      matmul_q8_0 matmul_q4_0
      rms_norm_f32 add_rms_norm_f32 softmax_f32 attn_scores_f32 attn_weighted_sum_f32 attn_decode_f32)
  foreach(_arch v3 v4)
    foreach(_name IN LISTS _sk_simd_builtins)
      file(READ ${_sk_kdir}/${_name}.json _text)
      string(JSON _src GET "${_text}" source)
      string(JSON _entry GET "${_text}" entry)
      string(JSON _nmac LENGTH "${_text}" macros)
      set(_defs "${_entry}=${_entry}_${_arch}")
      if(_nmac GREATER 0)
        math(EXPR _last "${_nmac} - 1")
        foreach(i RANGE ${_last})
          string(JSON _key MEMBER "${_text}" macros ${i})
          string(JSON _val GET "${_text}" macros ${_key})
          list(APPEND _defs "${_key}=${_val}")
        endforeach()
      endif()
      _sk_kernel_object(${_name}_${_arch} ${_sk_kdir}/${_src} "${_defs}")
      target_compile_options(${t}_k_${_name}_${_arch} PRIVATE -march=x86-64-${_arch})
    endforeach()
  endforeach()
  target_compile_definitions(${t} PRIVATE SK_TEST_MARCH_COPIES=1)
endif()
