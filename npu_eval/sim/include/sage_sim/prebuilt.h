// The emulator's containers, instantiated once in the prebuilt runtime object (see
// harness_main in harness.h): with SAGE_SIM_PREBUILT_RUNTIME a kernel's build declares them
// `extern template`, so it does not generate their code again; SAGE_SIM_RUNTIME_TU defines them.
#pragma once

#include <deque>
#include <string>
#include <utility>
#include <vector>

#if defined(SAGE_SIM_PREBUILT_RUNTIME)
#ifdef SAGE_SIM_RUNTIME_TU
#define SAGE_SIM_INSTANTIATE template class
#else
#define SAGE_SIM_INSTANTIATE extern template class
#endif
SAGE_SIM_INSTANTIATE std::vector<sage::sim::GmBuffer>;
SAGE_SIM_INSTANTIATE std::vector<sage::sim::FreedGm>;
SAGE_SIM_INSTANTIATE std::vector<sage::sim::FaultRecord>;
SAGE_SIM_INSTANTIATE std::vector<sage::sim::TraceRec*>;
SAGE_SIM_INSTANTIATE std::vector<sage::sim::Slot*>;
SAGE_SIM_INSTANTIATE std::vector<std::pair<std::string, int>>;
SAGE_SIM_INSTANTIATE std::vector<std::pair<unsigned, std::string>>;
SAGE_SIM_INSTANTIATE std::vector<AscendC::TPipe::PoolNote>;
SAGE_SIM_INSTANTIATE std::deque<sage::sim::Slot>;
SAGE_SIM_INSTANTIATE std::deque<sage::sim::Slot*>;
#undef SAGE_SIM_INSTANTIATE
#endif
