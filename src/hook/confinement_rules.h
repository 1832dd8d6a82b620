// The confinement policy, written once with libseccomp. Used at build time
// by tools/gen_seccomp_filter.cc to produce the BPF program the hook loads
// (libseccomp's compiler costs about 45 us per run, a quarter of what a
// container that did not ask may cost), and by the tests to check the
// embedded program is exactly what this policy compiles to.
#pragma once
#include <string>

namespace ocid {

// Returns the compiled BPF program (struct sock_filter array as bytes), or
// "" with *why set.
std::string CompileHookFilter(std::string* why);

}  // namespace ocid
