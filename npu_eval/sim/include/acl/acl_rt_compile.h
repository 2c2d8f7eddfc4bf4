// aclrtc, CANN's runtime compiler: a kernel compiled from a string while the program runs
// (sage_sim/rtc.h says how the emulator does it). Signatures as asc-devkit's
// tools/include/acl/acl_rt_compile.h; the return codes and the checks before them as its
// implementation, tools/aclrtc/acl_rt_compile.cpp (a null prog ACL_ERROR_RTC_INVALID_PROG,
// another null argument ACL_ERROR_RTC_INVALID_INPUT, an empty option ACL_ERROR_RTC_INVALID_OPTION,
// a program that does not compile ACL_ERROR_RTC_COMPILATION with the compiler's log).
#pragma once

#include <cstring>
#include <string>

#include "../sage_sim/rtc.h"
#include "acl_base.h"

typedef void* aclrtcProg;

static const int ACL_ERROR_RTC_INVALID_PROG = 176000;
static const int ACL_ERROR_RTC_INVALID_INPUT = 176001;
static const int ACL_ERROR_RTC_INVALID_OPTION = 176002;
static const int ACL_ERROR_RTC_COMPILATION = 176003;
static const int ACL_ERROR_RTC_LINKING = 176004;
static const int ACL_ERROR_RTC_NO_NAME_EXPR_AFTER_COMPILATION = 176005;
static const int ACL_ERROR_RTC_NO_LOWERED_NAMES_BEFORE_COMPILATION = 176006;
static const int ACL_ERROR_RTC_NAME_EXPR_NOT_VALID = 176007;
static const int ACL_ERROR_RTC_PROG_CREATION_FAILURE = 276000;
static const int ACL_ERROR_RTC_OUT_OF_MEMORY = 276001;
static const int ACL_ERROR_RTC_FAILURE = 576000;

namespace sage {
namespace sim {

inline RtcProgram* rtc_program(aclrtcProg prog) { return static_cast<RtcProgram*>(prog); }

// Compile `p`: the translation unit and the compiler's output in a folder of the run's TMPDIR.
inline aclError rtc_compile(RtcProgram& p, const std::vector<std::string>& options, SrcLoc loc) {
    if (program().sandboxed) {
        p.log += "sage-npu aclrtc: aclrtcCompileProg after the program's first kernel launch cannot start the "
                 "compiler (a kernel runs under a filter that forbids starting programs); compile before launching\n";
        host_report("acl-error", Severity::Error, loc, "aclrtcCompileProg after a kernel launch: sage-npu can only "
                    "compile before the first launch (ACL_ERROR_RTC_FAILURE)");
        return ACL_ERROR_RTC_FAILURE;
    }
    std::vector<std::string> argv = rtc_compiler();
    if (argv.empty()) {
        p.log += "sage-npu aclrtc: no compiler: run the program with `sage-npu run`\n";
        return ACL_ERROR_RTC_FAILURE;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/sage-rtc-XXXXXX";
    if (!mkdtemp(&dir[0])) return ACL_ERROR_RTC_FAILURE;
    std::string unit = dir + "/prog.cpp", so = dir + "/prog.so", log = dir + "/log.txt";
    if (!rtc_write(unit, rtc_unit(p))) return ACL_ERROR_RTC_FAILURE;
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"-fPIC", "-shared", "-x", "c++", unit, "-o", so});
    int rc = rtc_spawn(argv, log);
    std::string text = rtc_read(log);
    for (size_t at; (at = text.find(unit)) != std::string::npos;) text.replace(at, unit.size(), p.name);
    p.log += text;
    if (rc != 0) {
        if (rc < 0) p.log += "sage-npu aclrtc: the compiler " + argv[0] + " could not start\n";
        return rc < 0 ? ACL_ERROR_RTC_FAILURE : ACL_ERROR_RTC_COMPILATION;
    }
    std::string bytes = rtc_read(so);
    p.binary.assign(bytes.begin(), bytes.end());
    // The lowered (mangled) names of the name expressions: their functions' symbols.
    void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    auto* table = handle ? static_cast<const RtcKernel*>(dlsym(handle, "sage_rtc_kernels")) : nullptr;
    for (; table && table->name; ++table) {
        Dl_info info;
        for (auto& e : p.name_exprs)
            if (e == table->name && dladdr(table->address, &info) && info.dli_sname)
                p.lowered.emplace_back(e, info.dli_sname);
    }
    p.compiled = true;
    return ACL_SUCCESS;
}

}  // namespace sim
}  // namespace sage

inline aclError aclrtcCreateProg(aclrtcProg* prog, const char* src, const char* name, int numHeaders,
                                 const char** headers, const char** includeNames) {
    (void)numHeaders;
    (void)headers;
    (void)includeNames;
    if (prog == nullptr || src == nullptr || name == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
    auto* p = new ::sage::sim::RtcProgram;
    p->source = src;
    p->name = *name ? name : "default_program";
    *prog = p;
    return ACL_SUCCESS;
}

inline aclError aclrtcCompileProg(aclrtcProg prog, int numOptions, const char** options, SAGE_LOC) {
    using namespace ::sage::sim;
    if (prog == nullptr) return ACL_ERROR_RTC_INVALID_PROG;
    if (numOptions < 0 || (numOptions > 0 && options == nullptr)) return ACL_ERROR_RTC_INVALID_INPUT;
    for (int i = 0; i < numOptions; ++i) {
        if (options[i] == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
        if (options[i][0] == '\0') return ACL_ERROR_RTC_INVALID_OPTION;
    }
    RtcProgram& p = *rtc_program(prog);
    touch(loc);
    std::string suffix = p.name.size() >= 6 ? p.name.substr(p.name.size() - 6) : "";
    bool aicpu = suffix == ".aicpu";
    for (int i = 0; i < numOptions; ++i) aicpu = aicpu || std::strcmp(options[i], "-xaicpu") == 0;
    if (aicpu) {
        p.log += "[ERROR] aicpu compile is not supported yet\n";
        return ACL_ERROR_RTC_COMPILATION;
    }
    std::vector<std::string> passed;
    if (!rtc_options(numOptions, options, passed, p.log)) return ACL_ERROR_RTC_INVALID_OPTION;
    return rtc_compile(p, passed, loc);
}

inline aclError aclrtcAddNameExpr(aclrtcProg prog, const char* const nameExpression) {
    if (prog == nullptr) return ACL_ERROR_RTC_INVALID_PROG;
    if (nameExpression == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
    ::sage::sim::rtc_program(prog)->name_exprs.push_back(nameExpression);
    return ACL_SUCCESS;
}

inline aclError aclrtcGetLoweredName(aclrtcProg prog, const char* nameExpression, const char** loweredName) {
    if (prog == nullptr) return ACL_ERROR_RTC_INVALID_PROG;
    if (nameExpression == nullptr || loweredName == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
    auto& p = *::sage::sim::rtc_program(prog);
    if (!p.compiled) return ACL_ERROR_RTC_NO_LOWERED_NAMES_BEFORE_COMPILATION;
    for (auto& [expr, symbol] : p.lowered) {
        if (expr == nameExpression) {
            *loweredName = symbol.c_str();
            return ACL_SUCCESS;
        }
    }
    return ACL_ERROR_RTC_NO_NAME_EXPR_AFTER_COMPILATION;
}

inline aclError aclrtcDestroyProg(aclrtcProg* prog) {
    if (prog == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
    if (*prog == nullptr) return ACL_ERROR_RTC_INVALID_PROG;
    delete ::sage::sim::rtc_program(*prog);
    *prog = nullptr;
    return ACL_SUCCESS;
}

inline aclError aclrtcGetBinDataSize(aclrtcProg prog, size_t* binDataSizeRet) {
    if (prog == nullptr) return ACL_ERROR_RTC_INVALID_PROG;
    if (binDataSizeRet == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
    *binDataSizeRet = ::sage::sim::rtc_program(prog)->binary.size();
    return ACL_SUCCESS;
}

inline aclError aclrtcGetBinData(aclrtcProg prog, char* binData) {
    if (prog == nullptr) return ACL_ERROR_RTC_INVALID_PROG;
    if (binData == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
    auto& bin = ::sage::sim::rtc_program(prog)->binary;
    if (!bin.empty()) std::memcpy(binData, bin.data(), bin.size());
    return ACL_SUCCESS;
}

// The log's size counts its terminating NUL, as a buffer of that size must hold it.
inline aclError aclrtcGetCompileLogSize(aclrtcProg prog, size_t* logSizeRet) {
    if (prog == nullptr) return ACL_ERROR_RTC_INVALID_PROG;
    if (logSizeRet == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
    *logSizeRet = ::sage::sim::rtc_program(prog)->log.size() + 1;
    return ACL_SUCCESS;
}

inline aclError aclrtcGetCompileLog(aclrtcProg prog, char* log) {
    if (prog == nullptr) return ACL_ERROR_RTC_INVALID_PROG;
    if (log == nullptr) return ACL_ERROR_RTC_INVALID_INPUT;
    const std::string& text = ::sage::sim::rtc_program(prog)->log;
    std::memcpy(log, text.c_str(), text.size() + 1);
    return ACL_SUCCESS;
}
