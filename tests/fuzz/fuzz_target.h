// The contract of every target in tests/fuzz: libFuzzer's entry point, and the
// checks targets share. A target returns 0 for every input; it aborts (a crash
// libFuzzer and the replay driver report) only when onyx breaks a promise — a
// crash, a sanitizer report, or an answer that contradicts its own contract.
#pragma once

#include <cstddef>
#include <cstdint>

#include "onyx/tensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace onyx::fuzz {

// Aborts with `what` on stderr when `condition` is false.
void Require(bool condition, const char* what);

// Called by a target when onyx accepted the input (a session created, a
// request decoded, ...): the replay driver's --all-accepted checks that every
// seed of a corpus still reaches past the front door.
void Accepted();
int64_t AcceptedCount();

// Reads every element of `tensor` (every byte of every string of a BYTES
// tensor) so that a tensor viewing freed or out-of-range memory is reported
// by the sanitizer; the sum only keeps the reads from being optimized away.
uint64_t ReadEveryByte(const onyx::Tensor& tensor);

}  // namespace onyx::fuzz
