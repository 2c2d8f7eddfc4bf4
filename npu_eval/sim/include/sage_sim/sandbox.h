// The kernel's side of the sandbox (DESIGN section 8). The Python side already placed this
// process in its own session with resource limits, a scratch HOME/TMPDIR and an
// allow-listed environment.
#pragma once

namespace sage {
namespace sim {

inline void sandbox_enter_kernel() {}
inline void sandbox_leave_kernel() {}

}  // namespace sim
}  // namespace sage
