// An independent check of a BufferAssignment by replaying the schedule: every instruction
// writes the values it defines into their slices (claiming those bytes for their buffer), and
// every read must find its operand's bytes still held by that operand's buffer; a temp that
// shares bytes with another while both are live shows up as a read of clobbered bytes. While
// bodies and conditions are replayed more than once (cond, body, cond) so values carried across
// iterations are checked too. Also checks that every value of a sequential computation with a
// non-zero size has a slice inside its allocation's bounds, and that the outputs survive to the
// end. Used by the tests and available to anyone who builds an assignment.
#pragma once
#include "absl/status/status.h"
#include "buffers/buffer_assignment.h"

namespace hloc {

absl::Status CheckBufferAssignment(const HloModule& module, const BufferAssignment& assignment);

}  // namespace hloc
