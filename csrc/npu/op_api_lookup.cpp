// See op_api_lookup.h for the order. No torch here: the same object serves both flavours.
#include "op_api_lookup.h"

#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

namespace airfuse::npu {

const char* const kInstallAdvice =
    "Build and install airfuse's CANN custom-op package on this NPU host (see README.md, 'Eager on the NPU'): "
    "`cmake -S . -B build && cmake --build build -j`, then `./build/cann_project/build_out/custom_opp_*.run "
    "--install-path=$HOME/airfuse_opp` and `source $HOME/airfuse_opp/vendors/customize/bin/set_env.bash` (which puts "
    "the vendor directory on ASCEND_CUSTOM_OPP_PATH) before the first airfuse op runs.";

namespace {

const char* const kCustomLib = "/op_api/lib/libcust_opapi.so";
const char* const kFeatureLibs[] = {"libaclnn_ops_infer.so", "libaclnn_ops_train.so", "libaclnn_math.so",
                                    "libaclnn_sparse.so",    "libaclnn_fft.so",       "libaclnn_rand.so"};

std::string Env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::vector<std::string> Split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep))
        if (!item.empty()) parts.push_back(item);
    return parts;
}

// The vendors of the first load_priority= line of config.ini, in order.
std::vector<std::string> ConfigVendors(const std::string& configIni) {
    std::ifstream in(configIni);
    std::string line;
    const std::string key = "load_priority=";
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return Split(line.substr(key.size()), ',');
    return {};
}

struct Candidate {
    std::string path;   // a file path, or a bare name for the loader's search path
    std::string where;  // how the candidate was derived, for error messages
};

std::vector<Candidate> Candidates() {
    std::vector<Candidate> out;
    for (const std::string& entry : Split(Env("ASCEND_CUSTOM_OPP_PATH"), ':'))
        out.push_back({entry + kCustomLib, "ASCEND_CUSTOM_OPP_PATH entry " + entry});
    const std::string opp = Env("ASCEND_OPP_PATH");
    if (!opp.empty()) {
        const std::string ini = opp + "/vendors/config.ini";
        for (const std::string& vendor : ConfigVendors(ini))
            out.push_back({opp + "/vendors/" + vendor + kCustomLib, "vendor " + vendor + " of " + ini});
    }
    const std::string home = Env("ASCEND_HOME_PATH");
    if (!home.empty()) {
        glob_t g{};
        if (glob((home + "/lib64/libopapi_*.so").c_str(), 0, nullptr, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back({g.gl_pathv[i], "$ASCEND_HOME_PATH/lib64"});
        globfree(&g);
    }
    out.push_back({"libopapi.so", "the dynamic loader's search path"});
    for (const char* lib : kFeatureLibs) out.push_back({lib, "the dynamic loader's search path"});
    return out;
}

// op-plugin's checkOwner: a root process loads only root's libraries; another user loads its own
// or root's.
bool OwnerAllowed(const std::string& path, std::string& why) {
    struct stat st{};
    if (stat(path.c_str(), &st) != 0) return true;  // a bare name: the loader decides
    const uid_t me = geteuid();
    if (st.st_uid == me || st.st_uid == 0) return true;
    why = "skipped: owned by uid " + std::to_string(st.st_uid) + (me == 0 ? ", and this process runs as root" : ", not by this user or root");
    return false;
}

struct Library {
    Candidate candidate;
    void* handle = nullptr;
    std::string failure;  // why it could not be opened
};

class Registry {
public:
    SymbolLookup Find(const std::string& symbol) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!opened_) Open();
        SymbolLookup r;
        for (const Library& lib : libraries_) {
            if (!lib.handle) {
                r.searched.push_back(lib.candidate.path + " (" + lib.candidate.where + "): " + lib.failure);
                continue;
            }
            if (void* address = dlsym(lib.handle, symbol.c_str())) {
                r.address = address;
                r.library = lib.candidate.path;
                r.searched.clear();
                return r;
            }
            r.searched.push_back(lib.candidate.path + " (" + lib.candidate.where + "): loaded, has no " + symbol);
        }
        return r;
    }

private:
    void Open() {
        for (Candidate& c : Candidates()) {
            Library lib{c, nullptr, ""};
            char resolved[PATH_MAX];
            const bool isPath = c.path.find('/') != std::string::npos;
            if (isPath && !realpath(c.path.c_str(), resolved)) {
                lib.failure = "no such file";
            } else {
                const std::string file = isPath ? resolved : c.path;
                if (OwnerAllowed(file, lib.failure)) {
                    lib.handle = dlopen(file.c_str(), RTLD_LAZY);
                    if (!lib.handle) lib.failure = std::string("dlopen failed: ") + dlerror();
                }
            }
            libraries_.push_back(lib);
        }
        opened_ = true;
    }

    std::mutex mutex_;
    bool opened_ = false;
    std::vector<Library> libraries_;
};

}  // namespace

SymbolLookup FindOpApiSymbol(const std::string& symbol) {
    static Registry registry;
    return registry.Find(symbol);
}

}  // namespace airfuse::npu
