// The CPU backend: reference ops (cpu/reference/) and SIMD fast paths
// (cpu/fast/) chosen once at run time from the processor's features.
#pragma once

#include "backend/op_table.h"

namespace cairn::ops::cpu {

// Instruction sets the fast paths are built for; each kernel file is compiled
// with its own ISA flags and only called when the processor supports them.
enum class Isa : uint8_t { kScalar, kAvx2, kAvx512 };

// The best ISA this processor supports (AVX2 needs FMA and F16C; AVX-512 needs F, BW, VL).
Isa detected_isa();
const char* isa_name(Isa isa);

// The ISA the fast paths use now; starts as detected_isa(). Tests lower it to
// compare kernels; asking for more than the processor has is Error(kUnsupported).
Isa active_isa();
void set_active_isa(Isa isa);

// The tables: every entry of the reference one is ref::*; the fast one holds
// the fast paths (which dispatch on active_isa()).
const OpTable& reference_table();
const OpTable& fast_table();

// Registers the fast table for DeviceKind::kCpu (op_table.cpp calls it once).
void register_cpu_backend();
// Replaces the CPU entry: the reference table when `use_reference`, else the fast one.
void use_reference_ops(bool use_reference);

}  // namespace cairn::ops::cpu
