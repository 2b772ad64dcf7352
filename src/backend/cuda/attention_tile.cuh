// One thread block's view of the CUDA attention (attention.cu): its rows (a row
// is one (query, head) pair of one KV head, rows ordered query-major), the key
// block tiles it stages in shared memory, and the key splits it walks. Both
// kernels that attend (one split per block, or every split in order) run the
// code below, so a row's arithmetic is the same in either.
//
// Shared memory, floats: q [kWarps * R rows][stride], k [32][stride], v [32][stride];
// stride is head_dim rounded up to 4, plus 4 when that keeps 8 lanes' 16-byte
// reads of different rows on different banks. The pad columns of q and k are 0.
#pragma once

#include "backend/cuda/attention_math.cuh"
#include "backend/cuda/attention_quant.cuh"

namespace cairn::cuda::attn {

// One row of a warp: its query's position and its output row (query * n_heads + head).
struct RowInfo {
  bool valid = false;
  int32_t pos = 0;
  int64_t out = 0;
};

// The block's rows: [row0, row0 + kWarps * R) of KV head kvh.
struct BlockRows {
  int kvh = 0, row0 = 0;
  int32_t q_min = INT32_MAX, q_max = INT32_MIN;  // its queries' position range
};

__device__ __forceinline__ void to_floats(const uint4& raw, float (&f)[4]) {
  f[0] = __uint_as_float(raw.x), f[1] = __uint_as_float(raw.y);
  f[2] = __uint_as_float(raw.z), f[3] = __uint_as_float(raw.w);
}
__device__ __forceinline__ void to_floats(const uint4& raw, __nv_bfloat16, float (&f)[8]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __bfloat1622float2(h[i]);
    f[2 * i] = x.x, f[2 * i + 1] = x.y;
  }
}
__device__ __forceinline__ void to_floats(const uint4& raw, __half, float (&f)[8]) {
  const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 x = __half22float2(h[i]);
    f[2 * i] = x.x, f[2 * i + 1] = x.y;
  }
}
template <typename T>
__device__ __forceinline__ void convert16(const uint4& raw, float (&f)[16 / sizeof(T)]) {
  if constexpr (sizeof(T) == 4)
    to_floats(raw, f);
  else
    to_floats(raw, T{}, f);
}

__device__ __forceinline__ float to_f32(float x) {
  return x;
}
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ float to_f32(__half x) {
  return __half2float(x);
}

template <typename T>
__device__ __forceinline__ void store16(const uint4& raw, float* d) {
  constexpr int kVec = 16 / sizeof(T);
  float f[kVec];
  convert16<T>(raw, f);
#pragma unroll
  for (int e = 0; e < kVec; e += 4)
    *reinterpret_cast<float4*>(d + e) = make_float4(f[e], f[e + 1], f[e + 2], f[e + 3]);
}

constexpr int kBatch = 4;  // 16-byte loads of K and of V a thread has in flight

// A thread's share of a key block's K and V in flight: 16-byte chunks
// first + b * kThreads (b < kBatch) of the block's 32 rows.
struct TileLoads {
  uint4 k[kBatch], v[kBatch];
};

template <typename T>
__device__ __forceinline__ void issue_loads(const Params& p, int kvh, int key0, int first,
                                            TileLoads& r) {
  constexpr int kVec = 16 / sizeof(T);
  const int per_row = p.head_dim / kVec, total = kKeyBlock * per_row;
  const auto token_bytes = static_cast<uint32_t>(p.n_kv_heads * p.head_dim * sizeof(T));
  const int64_t head_off = static_cast<int64_t>(kvh) * p.head_dim, gap = v_gap(p);
#pragma unroll
  for (int b = 0; b < kBatch; ++b) {
    const int idx = first + b * kThreads, j = idx / per_row, key = key0 + j;
    const bool in = idx < total && key < p.n_kv;
    const uint8_t* row = in ? key_k_row(p, key, token_bytes) : nullptr;
    const T* k = reinterpret_cast<const T*>(row);
    const T* v = row ? reinterpret_cast<const T*>(row + gap) : nullptr;
    const int64_t off = head_off + (idx - j * per_row) * kVec;
    r.k[b] = k ? __ldg(reinterpret_cast<const uint4*>(k + off)) : make_uint4(0, 0, 0, 0);
    r.v[b] = v ? __ldg(reinterpret_cast<const uint4*>(v + off)) : make_uint4(0, 0, 0, 0);
  }
}

template <typename T>
__device__ __forceinline__ void store_loads(const Params& p, float* k_s, float* v_s, int first,
                                            const TileLoads& r) {
  constexpr int kVec = 16 / sizeof(T);
  const int per_row = p.head_dim / kVec, total = kKeyBlock * per_row;
#pragma unroll
  for (int b = 0; b < kBatch; ++b) {
    const int idx = first + b * kThreads, j = idx / per_row;
    if (idx >= total) break;
    const int c = (idx - j * per_row) * kVec;
    store16<T>(r.k[b], k_s + j * p.stride + c);
    store16<T>(r.v[b], v_s + j * p.stride + c);
  }
}

// Stages keys [key0, key0 + 32) of KV head kvh of K and V as f32 rows of k_s and
// v_s; keys past n_kv become zeros. Conversion to f32 is exact for every dtype.
template <typename T>
__device__ void load_key_block_full(const Params& p, float* k_s, float* v_s, int kvh, int key0) {
  const int hd = p.head_dim;
  if (p.vec_loads) {
    const int total = kKeyBlock * hd / (16 / static_cast<int>(sizeof(T)));
    for (int first = threadIdx.x; first < total; first += kThreads * kBatch) {
      TileLoads r;
      issue_loads<T>(p, kvh, key0, first, r);
      store_loads<T>(p, k_s, v_s, first, r);
    }
    return;
  }
  const auto token_bytes = static_cast<uint32_t>(p.n_kv_heads * hd * sizeof(T));
  const int64_t gap = v_gap(p);
  for (int idx = threadIdx.x; idx < kKeyBlock * hd; idx += kThreads) {
    const int j = idx / hd, c = idx - j * hd, key = key0 + j;
    const uint8_t* row = key < p.n_kv ? key_k_row(p, key, token_bytes) : nullptr;
    const T* k = reinterpret_cast<const T*>(row);
    const T* v = row ? reinterpret_cast<const T*>(row + gap) : nullptr;
    const int64_t off = static_cast<int64_t>(kvh) * hd + c;
    k_s[j * p.stride + c] = k ? to_f32(k[off]) : 0.0f;
    v_s[j * p.stride + c] = v ? to_f32(v[off]) : 0.0f;
  }
}

// Loads the block's q rows (zero padded) into q_s, zeroes k_s (its pad columns
// must stay 0), fills this warp's RowInfo and the block's query position range.
template <int R>
__device__ void setup_block(const Params& p, BlockRows& b, float* q_s, float* k_s,
                            RowInfo (&rows)[R]) {
  const int n_rows = p.n_q * p.group, hd = p.head_dim;
  for (int idx = threadIdx.x; idx < kWarps * R * p.stride; idx += kThreads) {
    const int rr = idx / p.stride, c = idx - rr * p.stride, row = b.row0 + rr;
    float x = 0.0f;
    if (row < n_rows && c < hd) {
      const int t = row / p.group, h = b.kvh * p.group + row % p.group;
      x = p.q[(static_cast<int64_t>(t) * p.n_heads + h) * hd + c];
    }
    q_s[idx] = x;
  }
  for (int idx = threadIdx.x; idx < kKeyBlock * p.stride; idx += kThreads) k_s[idx] = 0.0f;
  for (int rr = 0; rr < kWarps * R && b.row0 + rr < n_rows; ++rr) {
    const int32_t pos = p.q_pos[(b.row0 + rr) / p.group];
    b.q_min = min(b.q_min, pos), b.q_max = max(b.q_max, pos);
  }
  const int warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int row = b.row0 + warp * R + i, t = row / p.group;
    rows[i].valid = row < n_rows;
    rows[i].pos = rows[i].valid ? p.q_pos[t] : 0;
    rows[i].out = static_cast<int64_t>(t) * p.n_heads + b.kvh * p.group + row % p.group;
  }
  __syncthreads();
}

// False when no query of the block can see any key of key block kb (from the
// key position range of the block): the tile is not even loaded.
__device__ __forceinline__ bool may_see(const Params& p, const BlockRows& b, int kb) {
  const bool listed = p.block_range != nullptr;  // else key j is at position j
  const int32_t k_min = listed ? p.block_range[2 * kb] : kb * kKeyBlock;
  const int32_t k_max = listed ? p.block_range[2 * kb + 1] : min(p.n_kv, (kb + 1) * kKeyBlock) - 1;
  return k_min <= b.q_max &&
         (p.window <= 0 || static_cast<int64_t>(k_max) > static_cast<int64_t>(b.q_min) - p.window);
}

// acc += w_j v_j for the key block's keys in index order (w_j = 0: key skipped).
template <int R, int S>
__device__ __forceinline__ void accumulate_values(const Params& p, const float* v_s,
                                                  const float (&w)[R], RowState<S> (&st)[R]) {
  const int lane = threadIdx.x & 31;
  for (int j = 0; j < kKeyBlock; ++j) {
    float vj[S];
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int c = lane + 32 * s;
      vj[s] = c < p.head_dim ? v_s[j * p.stride + c] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const float wj = __shfl_sync(kFull, w[i], j);
      if (wj == 0.0f) continue;
#pragma unroll
      for (int s = 0; s < S; ++s) st[i].acc[s] = __fmaf_rn(wj, vj[s], st[i].acc[s]);
    }
  }
}

// One key block (staged in k_s, v_s) for the warp's R rows (q rows in q_w).
template <int R, int S>
__device__ void attend_key_block(const Params& p, const float* q_w, const float* k_s,
                                 const float* v_s, int key0, const RowInfo (&rows)[R],
                                 RowState<S> (&st)[R]) {
  const int lane = threadIdx.x & 31, key = key0 + lane;
  const bool in = key < p.n_kv;
  const int32_t k_pos = !in ? 0 : p.kv_pos ? p.kv_pos[key] : key;
  float dot[R];
#pragma unroll
  for (int i = 0; i < R; ++i) dot[i] = 0.0f;
  const float* k_row = k_s + lane * p.stride;
  const int hd4 = (p.head_dim + 3) & ~3;
  for (int c = 0; c < hd4; c += 4) {
    const float4 k4 = *reinterpret_cast<const float4*>(k_row + c);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const float4 q4 = *reinterpret_cast<const float4*>(q_w + i * p.stride + c);
      dot[i] = __fmaf_rn(q4.x, k4.x, dot[i]);
      dot[i] = __fmaf_rn(q4.y, k4.y, dot[i]);
      dot[i] = __fmaf_rn(q4.z, k4.z, dot[i]);
      dot[i] = __fmaf_rn(q4.w, k4.w, dot[i]);
    }
  }
  float w[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const bool vis = in && rows[i].valid && visible(rows[i].pos, k_pos, p.window);
    w[i] = softmax_step(st[i], vis ? logit(dot[i], p) : -INFINITY);
  }
  accumulate_values<R, S>(p, v_s, w, st);
}

// The next key block at or after kb, before end, that some row of the block may see.
__device__ __forceinline__ int next_key_block(const Params& p, const BlockRows& b, int kb,
                                              int end) {
  const int last = min(end, (p.n_kv + kKeyBlock - 1) / kKeyBlock);
  while (kb < last && !may_see(p, b, kb)) ++kb;  // the same for every thread of the block
  return kb < last ? kb : end;
}

// attend_split for quantized rows: the next key block's encoded chunks are loaded (QuantLoads:
// S a thread) while the current one is attended, then decoded into the tiles.
template <typename T, int R, int S>
__device__ void attend_split_quant(const Params& p, const BlockRows& b, float* smem, int split,
                                   const RowInfo (&rows)[R], RowState<S> (&st)[R]) {
  float* k_s = smem + kWarps * R * p.stride;
  float* v_s = k_s + kKeyBlock * p.stride;
  const float* q_w = smem + (threadIdx.x >> 5) * R * p.stride;
  const int end = (split + 1) * kBlocksPerSplit;
  int kb = next_key_block(p, b, split * kBlocksPerSplit, end);
  QuantLoads<S> r;
  if (kb < end) issue_quant<T>(p, b.kvh, kb * kKeyBlock, r);
  while (kb < end) {
    __syncthreads();  // the previous tiles are no longer read
    store_quant<T>(p, k_s, v_s, r);
    __syncthreads();
    const int next = next_key_block(p, b, kb + 1, end);
    if (next < end) issue_quant<T>(p, b.kvh, next * kKeyBlock, r);
    attend_key_block<R, S>(p, q_w, k_s, v_s, kb * kKeyBlock, rows, st);
    kb = next;
  }
}

// attend_split for full-precision rows: when a key block fits one TileLoads per thread, the
// next one's loads are issued before the current one is attended.
template <typename T, int R, int S>
__device__ void attend_split_full(const Params& p, const BlockRows& b, float* smem, int split,
                                  const RowInfo (&rows)[R], RowState<S> (&st)[R]) {
  float* q_s = smem;
  float* k_s = q_s + kWarps * R * p.stride;
  float* v_s = k_s + kKeyBlock * p.stride;
  const float* q_w = q_s + (threadIdx.x >> 5) * R * p.stride;
  const int end = (split + 1) * kBlocksPerSplit;
  const bool pipelined =
      p.vec_loads &&
      kKeyBlock * p.head_dim / (16 / static_cast<int>(sizeof(T))) <= kThreads * kBatch;
  int kb = next_key_block(p, b, split * kBlocksPerSplit, end);
  TileLoads r;
  if (pipelined && kb < end) issue_loads<T>(p, b.kvh, kb * kKeyBlock, threadIdx.x, r);
  while (kb < end) {
    __syncthreads();  // the previous tiles are no longer read
    if (pipelined)
      store_loads<T>(p, k_s, v_s, threadIdx.x, r);
    else
      load_key_block_full<T>(p, k_s, v_s, b.kvh, kb * kKeyBlock);
    __syncthreads();
    const int next = next_key_block(p, b, kb + 1, end);
    if (pipelined && next < end) issue_loads<T>(p, b.kvh, next * kKeyBlock, threadIdx.x, r);
    attend_key_block<R, S>(p, q_w, k_s, v_s, kb * kKeyBlock, rows, st);
    kb = next;
  }
}

// The key blocks of one key split, each row's state updated in key order, the next block's
// loads in flight while the current one is attended (the loads only; the arithmetic is
// unchanged).
template <typename T, int R, int S>
__device__ void attend_split(const Params& p, const BlockRows& b, float* smem, int split,
                             const RowInfo (&rows)[R], RowState<S> (&st)[R]) {
  if constexpr (kQuantRows<T>)
    attend_split_quant<T, R, S>(p, b, smem, split, rows, st);
  else
    attend_split_full<T, R, S>(p, b, smem, split, rows, st);
}

}  // namespace cairn::cuda::attn
