// aclrtc, CANN's runtime compiler, on the CPU (acl/acl_rt_compile.h, acl/acl_rt_binary.h).
//
// aclrtcCompileProg compiles the program's source for real: with the C++ compiler, flags and
// emulator headers of the program itself (npu_eval/program.py writes them to
// $SAGE_PROGRAM_OUT/rtc_compiler.txt), into a shared object in the run's temporary folder,
// inside the same sandboxed run. The source is followed by a table of its kernels
// (sage_rtc_kernels): each non-template __global__ function, and each name expression given
// to aclrtcAddNameExpr, with the entry that launches it through the emulator's launch path
// (run_launch), its arguments read from the array aclrtLaunchKernelWithArgsArray passes. The
// program is linked with -rdynamic, so the shared object's emulator state (device memory,
// launches, faults) is the program's own. "Device binary" data is the shared object's bytes:
// aclrtBinaryLoadFromData writes them to a file and loads it, aclrtBinaryGetFunction looks the
// kernel's symbol up (its plain name, or the lowered name aclrtcGetLoweredName gave).
//
// The compiler can only start before the program's first kernel launch: from then on the
// kernel's seccomp filter forbids starting programs (sandbox.h).
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "launch.h"

extern char** environ;

namespace sage {
namespace sim {

// ---- what a compiled program exports ----

using RtcEntry = void (*)(const LaunchSite& site, int64_t blocks, void** args);

// One kernel of a compiled program: the name it was found or registered by, its function (whose
// symbol aclrtBinaryGetFunction looks up) and the entry a launch calls.
struct RtcKernel {
    const char* name;
    const void* address;
    RtcEntry entry;
};

template <class Fn>
struct rtc_params;
template <class... P>
struct rtc_params<void (*)(P...)> {
    template <size_t... I>
    static void call(void (*f)(P...), const LaunchSite& site, int64_t blocks, void** args, std::index_sequence<I...>) {
        run_launch(site, f, blocks, *static_cast<std::decay_t<P>*>(args[I])...);
    }
    static constexpr size_t count = sizeof...(P);
};

// The launch of kernel F with the arguments `args[i]` points at, each of its parameter's type.
template <auto F>
void rtc_entry(const LaunchSite& site, int64_t blocks, void** args) {
    using Fn = decltype(F);
    rtc_params<Fn>::call(F, site, blocks, args, std::make_index_sequence<rtc_params<Fn>::count>{});
}

// ---- finding the kernels of a source ----

// The source with comments, string and character literals and preprocessor lines blanked, so
// what remains is declarations and code.
inline std::string rtc_code_only(const std::string& src) {
    std::string out = src;
    size_t i = 0, n = src.size();
    bool line_start = true;
    while (i < n) {
        char c = src[i];
        if (line_start && (c == ' ' || c == '\t')) {
            ++i;
            continue;
        }
        if (line_start && c == '#') {  // a directive, with its continuation lines
            while (i < n && !(src[i] == '\n' && src[i - 1] != '\\')) out[i++] = ' ';
            continue;
        }
        line_start = c == '\n';
        if (c == '/' && i + 1 < n && src[i + 1] == '/') {
            while (i < n && src[i] != '\n') out[i++] = ' ';
        } else if (c == '/' && i + 1 < n && src[i + 1] == '*') {
            size_t end = src.find("*/", i + 2);
            end = end == std::string::npos ? n : end + 2;
            for (; i < end; ++i)
                if (src[i] != '\n') out[i] = ' ';
        } else if (c == 'R' && i + 1 < n && src[i + 1] == '"') {  // a raw string: R"delim( ... )delim"
            size_t open = src.find('(', i + 2);
            std::string close = ")" + src.substr(i + 2, open == std::string::npos ? 0 : open - i - 2) + "\"";
            size_t end = open == std::string::npos ? n : src.find(close, open);
            end = end == std::string::npos ? n : end + close.size();
            for (; i < end; ++i)
                if (src[i] != '\n') out[i] = ' ';
        } else if (c == '"' || c == '\'') {
            out[i++] = ' ';
            while (i < n && src[i] != c && src[i] != '\n') {
                if (src[i] == '\\' && i + 1 < n) out[i++] = ' ';
                out[i++] = ' ';
            }
            if (i < n && src[i] == c) out[i++] = ' ';
        } else {
            ++i;
        }
    }
    return out;
}

// The qualified names of the source's non-template __global__ functions at namespace scope
// (a template kernel is found only through aclrtcAddNameExpr, as with CANN).
inline std::vector<std::string> rtc_kernels(const std::string& src) {
    std::string code = rtc_code_only(src);
    std::vector<std::string> tokens;
    for (size_t i = 0; i < code.size();) {
        unsigned char c = static_cast<unsigned char>(code[i]);
        if (std::isalpha(c) || c == '_') {
            size_t j = i;
            while (j < code.size() && (std::isalnum(static_cast<unsigned char>(code[j])) || code[j] == '_')) ++j;
            tokens.push_back(code.substr(i, j - i));
            i = j;
        } else {
            if (!std::isspace(c)) tokens.push_back(std::string(1, code[i]));
            ++i;
        }
    }
    std::vector<std::string> scopes;  // a namespace's name, "" (extern "C", anonymous) or "{" (anything else)
    std::vector<std::string> found;
    size_t statement = 0;  // the first token of the current declaration
    for (size_t k = 0; k < tokens.size(); ++k) {
        const std::string& t = tokens[k];
        if (t == "{") {
            // `namespace a::b {`, `namespace {` and `extern "C" {` (its string blanked) open a
            // namespace scope; any other brace does not.
            size_t j = k;
            std::string name;
            while (j > 0 && (tokens[j - 1] == ":" || std::isalpha(static_cast<unsigned char>(tokens[j - 1][0])) ||
                             tokens[j - 1][0] == '_') && tokens[j - 1] != "namespace" && tokens[j - 1] != "extern")
                name = tokens[--j] + name;
            bool ns = j > 0 && (tokens[j - 1] == "namespace" || (tokens[j - 1] == "extern" && name.empty()));
            scopes.push_back(ns ? name : "{");
            statement = k + 1;
        } else if (t == "}") {
            if (!scopes.empty()) scopes.pop_back();
            statement = k + 1;
        } else if (t == ";") {
            statement = k + 1;
        } else if (t == "__global__") {
            bool at_namespace_scope = true;
            for (auto& s : scopes) at_namespace_scope = at_namespace_scope && s != "{";
            bool templated = false;
            for (size_t j = statement; j < k; ++j) templated = templated || tokens[j] == "template";
            size_t paren = k;
            while (paren < tokens.size() && tokens[paren] != "(" && tokens[paren] != ";") ++paren;
            if (!at_namespace_scope || templated || paren >= tokens.size() || tokens[paren] != "(") continue;
            std::string name = tokens[paren - 1];
            if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) continue;
            std::string qualified;
            for (auto& s : scopes)
                if (!s.empty()) qualified += s + "::";
            qualified += name;
            bool seen = false;
            for (auto& f : found) seen = seen || f == qualified;
            if (!seen) found.push_back(qualified);
        }
    }
    return found;
}

// ---- compiling ----

struct RtcProgram {
    std::string source;
    std::string name;
    std::vector<std::string> name_exprs;
    std::vector<std::pair<std::string, std::string>> lowered;  // name expression -> symbol
    std::string log;
    std::vector<char> binary;
    bool compiled = false;
};

inline std::string rtc_c_string(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\';
        if (ch == '\n') {
            out += "\\n";
            continue;
        }
        out += ch;
    }
    return out + "\"";
}

// The translation unit: the emulator, the program's source under its own name, the kernel table.
inline std::string rtc_unit(const RtcProgram& p) {
    std::string tu = "#include \"sage_sim/rtc.h\"\n#line 1 " + rtc_c_string(p.name) + "\n" + p.source + "\n";
    tu += "#line 1 " + rtc_c_string(p.name + " (aclrtc's kernel table)") + "\n";
    tu += "extern \"C\" const ::sage::sim::RtcKernel sage_rtc_kernels[] = {\n";
    std::vector<std::string> names = rtc_kernels(p.source);
    names.insert(names.end(), p.name_exprs.begin(), p.name_exprs.end());
    for (auto& n : names)
        tu += "    {" + rtc_c_string(n) + ", reinterpret_cast<const void*>(&" + n + "), &::sage::sim::rtc_entry<&" + n +
              ">},\n";
    tu += "    {nullptr, nullptr, nullptr}};\n";
    return tu;
}

inline bool rtc_write(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return bool(f);
}

inline std::string rtc_read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// The compiler of the program (rtc_compiler.txt), or empty when not run by `sage-npu run`.
inline std::vector<std::string> rtc_compiler() {
    std::vector<std::string> argv;
    if (program().out.empty()) return argv;
    std::ifstream f(program().out + "/" + protocol::kRtcCompiler);
    for (std::string line; std::getline(f, line);)
        if (!line.empty()) argv.push_back(line);
    return argv;
}

// Runs argv with its output to `log_path`; the exit status, or -1 when it could not start.
inline int rtc_spawn(const std::vector<std::string>& argv, const std::string& log_path) {
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The options aclrtcCompileProg passes on: -D, -U and -I; the architecture and language options
// the device compiler needs say nothing to the emulator. Anything else: false, with why in `log`.
inline bool rtc_options(int n, const char** options, std::vector<std::string>& out, std::string& log) {
    for (int i = 0; i < n; ++i) {
        std::string o = options[i];
        if (o.rfind("-D", 0) == 0 || o.rfind("-U", 0) == 0 || o.rfind("-I", 0) == 0) {
            out.push_back(o);
        } else if (o.rfind("--npu-arch=", 0) == 0 || o.rfind("-O", 0) == 0 || o.rfind("-std=", 0) == 0 ||
                   o == "-g" || o.rfind("-x", 0) == 0 || o == "-w") {
            continue;
        } else {
            log += "sage-npu aclrtc: option '" + o + "' is not one it knows (-D, -U, -I, --npu-arch=, -O, -std=, -g)\n";
            return false;
        }
    }
    return true;
}

}  // namespace sim
}  // namespace sage
