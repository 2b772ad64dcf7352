// cuBLASLt plans for matmul. Column-major view of the row-major product: yᵀ[m, n] =
// op(A)·B with A = w seen as a k×m column-major matrix (ld k, transposed), B = x seen as k×n
// (ld k), D = yᵀ as m×n (ld m), so the batch n is cuBLASLt's N dimension.
//
// Batch invariance (kFixedPerShapeClass): a cuBLASLt algorithm (kernel id, tile, stages,
// split-K, swizzle, cluster shape) fixes how each output element's k-reduction is cut into
// MMA steps. Without split-K every y element is reduced by one thread block in that fixed
// order; n only decides how many blocks run. So the class's algorithm is chosen once, from the
// heuristic at a reference n, among candidates without split-K, and checked at n = 1 and
// n = 8192. A split-K algorithm whose partial sums are reduced by a separate pass (not
// atomics) also keeps each element's order fixed; CAIRN_GEMM_FIXED_SPLITK=1 admits those
// (more thread blocks for small n). docs/cuda.md lists both knobs.
#include "backend/cuda/gemm_lt.h"

#include <cublasLt.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include "backend/cuda/cuda_runtime.h"
#include "backend/cuda/rank_context.h"
#include "core/error.h"

namespace cairn::cuda {

struct GemmLtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool bias = false;

  GemmLtPlan() = default;
  GemmLtPlan(const GemmLtPlan&) = delete;
  GemmLtPlan& operator=(const GemmLtPlan&) = delete;
  ~GemmLtPlan() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

namespace {

// How the fixed algorithm of a shape class is chosen, read once from the environment:
// CAIRN_GEMM_REFERENCE_N, the rows at which the heuristic is asked (default 1024, a prefill
// chunk's size, so that prefill gets a tensor-core tile shape; docs/determinism.md), and
// CAIRN_GEMM_FIXED_SPLITK=1 to admit split-K candidates reduced without atomics.
struct FixedChoice {
  int64_t reference_n = 1024;
  bool split_k = false;
};

const FixedChoice& fixed_choice() {
  static const FixedChoice c = [] {
    FixedChoice f;
    if (const char* v = std::getenv("CAIRN_GEMM_REFERENCE_N"))
      f.reference_n = std::max<int64_t>(1, std::atoll(v));
    if (const char* v = std::getenv("CAIRN_GEMM_FIXED_SPLITK")) f.split_k = v[0] == '1';
    return f;
  }();
  return c;
}
// Workspace offered to every algorithm (NVIDIA's advice for Hopper).
constexpr size_t kWorkspaceBytes = size_t{32} << 20;
constexpr int kCandidates = 16;

void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(ErrorCode::kInternal, "cuBLASLt: {} failed: {} ({})", what, cublasLtGetStatusString(s),
         cublasLtGetStatusName(s));
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::kBF16:
      return CUDA_R_16BF;
    case DType::kF16:
      return CUDA_R_16F;
    default:
      return CUDA_R_32F;
  }
}

using PlanKey = std::tuple<GemmLtClass, int64_t, AlgoPolicy>;

// One a context (rank_context.h), made on its device; lives until exit: cached descriptors
// and the workspace are never freed.
struct LtState {
  std::mutex mutex;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::map<GemmLtClass, std::optional<cublasLtMatmulAlgo_t>> fixed;  // nullopt: none applies
  std::map<PlanKey, std::unique_ptr<GemmLtPlan>> plans;              // null: no plan

  LtState() {
    check_lt(cublasLtCreate(&handle), "cublasLtCreate");
    CAIRN_CUDA_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
  }
};

LtState& state() {
  return context_local<LtState>();
}

void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void* v, size_t n) {
  check_lt(cublasLtMatmulDescSetAttribute(d, a, v, n), "cublasLtMatmulDescSetAttribute");
}

// Descriptors of `s` (n included); the algorithm is left for the caller.
std::unique_ptr<GemmLtPlan> make_descriptors(const GemmLtShape& s) {
  auto p = std::make_unique<GemmLtPlan>();
  const cudaDataType_t t = cuda_type(s.dtype);
  check_lt(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
           "cublasLtMatmulDescCreate");
  const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
  set_attr(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof(trans));
  set_attr(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof(no_trans));
  if (s.bias) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    const cudaDataType_t bias_type = CUDA_R_32F;
    set_attr(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi));
    set_attr(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type));
  }
  const auto m = static_cast<uint64_t>(s.m), n = static_cast<uint64_t>(s.n),
             k = static_cast<uint64_t>(s.k);
  const int64_t ld = s.pitch > 0 ? s.pitch : s.k;
  check_lt(cublasLtMatrixLayoutCreate(&p->a, t, k, m, ld), "cublasLtMatrixLayoutCreate(w)");
  check_lt(cublasLtMatrixLayoutCreate(&p->b, t, k, n, ld), "cublasLtMatrixLayoutCreate(x)");
  check_lt(cublasLtMatrixLayoutCreate(&p->d, CUDA_R_32F, m, n, s.m),
           "cublasLtMatrixLayoutCreate(y)");
  p->bias = s.bias;
  return p;
}

// The heuristic's candidates for plan p, best first.
int heuristic(LtState& st, const GemmLtPlan& p, const GemmLtShape& s,
              cublasLtMatmulHeuristicResult_t* out) {
  cublasLtMatmulPreference_t pref = nullptr;
  check_lt(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  auto set = [&](cublasLtMatmulPreferenceAttributes_t a, uint32_t v) {
    check_lt(cublasLtMatmulPreferenceSetAttribute(pref, a, &v, sizeof(v)),
             "cublasLtMatmulPreferenceSetAttribute");
  };
  const uint64_t ws = kWorkspaceBytes;
  check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                sizeof(ws)),
           "cublasLtMatmulPreferenceSetAttribute");
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, s.align_w);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, s.align_x);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, s.align_y);
  set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, s.align_y);
  int found = 0;
  cublasStatus_t r = cublasLtMatmulAlgoGetHeuristic(st.handle, p.desc, p.a, p.b, p.d, p.d, pref,
                                                    kCandidates, out, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  return r == CUBLAS_STATUS_SUCCESS ? found : 0;
}

uint32_t algo_config(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoConfigAttributes_t attr) {
  uint32_t v = 0;
  size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&a, attr, &v, sizeof(v), &written);
  return v;
}

// No split-K: one thread block reduces each output element over all of k.
bool whole_k(const cublasLtMatmulAlgo_t& a) {
  return algo_config(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) <= 1 &&
         algo_config(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME) == CUBLASLT_REDUCTION_SCHEME_NONE;
}

// Never the in-place (atomic) split-K reduction: its order changes from run to run.
bool no_atomics(const cublasLtMatmulAlgo_t& a) {
  return algo_config(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME) != CUBLASLT_REDUCTION_SCHEME_INPLACE;
}

bool algo_applies(LtState& st, const GemmLtPlan& p, const cublasLtMatmulAlgo_t& a) {
  cublasLtMatmulHeuristicResult_t r{};
  return cublasLtMatmulAlgoCheck(st.handle, p.desc, p.a, p.b, p.d, p.d, &a, &r) ==
             CUBLAS_STATUS_SUCCESS &&
         r.workspaceSize <= kWorkspaceBytes;
}

// The class's algorithm: the heuristic's best admissible candidate at the reference n that
// also applies at 1 and 8192 rows; nullopt when there is none.
std::optional<cublasLtMatmulAlgo_t> choose_fixed(LtState& st, GemmLtShape s) {
  const FixedChoice& how = fixed_choice();
  s.n = how.reference_n;
  std::unique_ptr<GemmLtPlan> ref = make_descriptors(s);
  s.n = 1;
  std::unique_ptr<GemmLtPlan> one = make_descriptors(s);
  s.n = 8192;
  std::unique_ptr<GemmLtPlan> big = make_descriptors(s);
  cublasLtMatmulHeuristicResult_t found[kCandidates];
  const int count = heuristic(st, *ref, s, found);
  for (int i = 0; i < count; ++i) {
    const cublasLtMatmulAlgo_t& a = found[i].algo;
    if ((how.split_k ? no_atomics(a) : whole_k(a)) && algo_applies(st, *one, a) &&
        algo_applies(st, *big, a))
      return a;
  }
  return std::nullopt;
}

// Picks plan p's algorithm under `policy`; false when none applies.
bool pick_algo(LtState& st, GemmLtPlan& p, const GemmLtShape& s, AlgoPolicy policy) {
  if (policy == AlgoPolicy::kFixedPerShapeClass) {
    auto [it, fresh] = st.fixed.try_emplace(gemm_lt_class(s));
    if (fresh) it->second = choose_fixed(st, s);
    if (!it->second || !algo_applies(st, p, *it->second)) return false;
    p.algo = *it->second;
    return true;
  }
  cublasLtMatmulHeuristicResult_t found[kCandidates];
  const int count = heuristic(st, p, s, found);
  for (int i = 0; i < count; ++i)
    if (no_atomics(found[i].algo)) {
      p.algo = found[i].algo;
      return true;
    }
  return false;
}

}  // namespace

const GemmLtPlan* gemm_lt_plan(const GemmLtShape& s, AlgoPolicy policy) {
  LtState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto [it, fresh] = st.plans.try_emplace(PlanKey{gemm_lt_class(s), s.n, policy});
  if (fresh) {
    std::unique_ptr<GemmLtPlan> p = make_descriptors(s);
    if (pick_algo(st, *p, s, policy)) it->second = std::move(p);  // else null: no plan
  }
  return it->second.get();
}

void gemm_lt_run(const GemmLtPlan* p, const void* w, const void* x, const float* bias, float* y,
                 bool accumulate) {
  LtState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (p->bias) set_attr(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check_lt(cublasLtMatmul(st.handle, p->desc, &one, w, p->a, x, p->b, &beta, y, p->d, y, p->d,
                          &p->algo, st.workspace, kWorkspaceBytes, stream()),
           "cublasLtMatmul");
}

GemmLtClass gemm_lt_class(const GemmLtShape& s) {
  return {s.m, s.k, s.dtype, s.bias, s.align_w, s.align_x, s.align_y, s.pitch > 0 ? s.pitch : s.k};
}

uint32_t alignment_of(const void* p, int64_t row_bytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | static_cast<uint64_t>(row_bytes) | 16u;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

}  // namespace cairn::cuda
