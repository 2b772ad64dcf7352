#include "model/rope.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace cairn {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<double> base_inv_freq(double theta, int dim) {
  std::vector<double> f(static_cast<size_t>(dim / 2));
  for (int i = 0; i < dim / 2; ++i)
    f[static_cast<size_t>(i)] = 1.0 / std::pow(theta, 2.0 * i / dim);
  return f;
}

// Llama 3.1: long wavelengths divide by `factor`, short ones stay, a smooth band between.
void apply_llama3(const RopeSpec& s, std::vector<double>& f) {
  double old_len = static_cast<double>(s.original_max_position_embeddings);
  double low_wavelen = old_len / s.low_freq_factor;
  double high_wavelen = old_len / s.high_freq_factor;
  for (double& x : f) {
    double wavelen = 2.0 * kPi / x;
    if (wavelen > low_wavelen) {
      x /= s.factor;
    } else if (wavelen >= high_wavelen) {
      double smooth =
          (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      x = (1.0 - smooth) * x / s.factor + smooth * x;
    }
  }
}

double yarn_mscale(double scale, double m) {
  return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
}

// YaRN: interpolate low frequencies, extrapolate high ones, a linear ramp between.
float apply_yarn(const RopeSpec& s, int dim, double max_pos, std::vector<double>& f) {
  double orig = s.original_max_position_embeddings > 0
                    ? static_cast<double>(s.original_max_position_embeddings)
                    : max_pos;
  double factor = s.factor > 0 ? s.factor : max_pos / orig;
  double attn = s.attention_factor;
  if (attn <= 0)
    attn = (s.mscale > 0 && s.mscale_all_dim > 0)
               ? yarn_mscale(factor, s.mscale) / yarn_mscale(factor, s.mscale_all_dim)
               : yarn_mscale(factor, 1.0);
  auto correction_dim = [&](double rotations) {
    return dim * std::log(orig / (rotations * 2.0 * kPi)) / (2.0 * std::log(s.theta));
  };
  double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;
  for (size_t i = 0; i < f.size(); ++i) {
    double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    double extrapolation = 1.0 - ramp;
    f[i] = (f[i] / factor) * (1.0 - extrapolation) + f[i] * extrapolation;
  }
  return static_cast<float>(attn);
}

float apply_longrope(const RopeSpec& s, int dim, double max_pos, std::vector<double>& f) {
  double orig = s.original_max_position_embeddings > 0
                    ? static_cast<double>(s.original_max_position_embeddings)
                    : max_pos;
  double factor = s.factor > 0 ? s.factor : max_pos / orig;
  double attn = s.attention_factor;
  if (attn <= 0) attn = factor <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(factor) / std::log(orig));
  const std::vector<double>& ext = max_pos > orig ? s.long_factor : s.short_factor;
  if (ext.size() != f.size())
    fail(ErrorCode::kBadFile, "rope: longrope {} has {} entries, expected rotary_dim/2 = {}",
         max_pos > orig ? "long_factor" : "short_factor", ext.size(), f.size());
  (void)dim;
  for (size_t i = 0; i < f.size(); ++i) f[i] /= ext[i];
  return static_cast<float>(attn);
}

}  // namespace

RopeTable make_rope_table(const RopeSpec& s, int64_t head_dim, int64_t max_position_embeddings) {
  RopeTable t;
  int dim = static_cast<int>(static_cast<double>(head_dim) * s.partial_rotary_factor);
  if (dim <= 0 || dim > head_dim || dim % 2 != 0)
    fail(ErrorCode::kBadFile,
         "rope: rotary dim {} (head_dim {} × partial_rotary_factor {}) must be "
         "even and in (0, head_dim]",
         dim, head_dim, s.partial_rotary_factor);
  t.rotary_dim = dim;
  std::vector<double> f = base_inv_freq(s.theta, dim);
  double max_pos = static_cast<double>(max_position_embeddings);
  if (s.type == "linear") {
    for (double& x : f) x /= s.factor;
  } else if (s.type == "llama3") {
    if (s.original_max_position_embeddings <= 0)
      fail(ErrorCode::kBadFile, "rope: llama3 scaling needs original_max_position_embeddings");
    apply_llama3(s, f);
  } else if (s.type == "yarn") {
    t.attention_factor = apply_yarn(s, dim, max_pos, f);
  } else if (s.type == "longrope") {
    t.attention_factor = apply_longrope(s, dim, max_pos, f);
  }
  t.inv_freq.assign(f.begin(), f.end());
  return t;
}

}  // namespace cairn
