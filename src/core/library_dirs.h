// Where the libraries an inventory brings are mounted in a container: in
// the directories the image's own dynamic loader searches, never at their
// host path. A host keeps its libraries where its own distribution's loader
// looks (/usr/lib64 on RHEL, /usr/lib/x86_64-linux-gnu on Debian); an image
// of another distribution would not find them there, and nothing here may
// run the image's ldconfig or write its ld.so.cache (SECURITY.md 2.2, 2.3).
// So a library goes by its name into a directory the loader already knows.
//
// Two answers, one value (LibraryDirs) the planner takes as input:
//   - the image not seen (CDI specs, the device plugin, Nomad: one answer
//     for every image): /usr/lib/<triplet> then /usr/lib64, the default
//     directories of Debian/Ubuntu multiarch and of RHEL/Fedora/SUSE;
//   - the image seen (the hook, the runtime shim, `plan` with a rootfs):
//     the directory of the image's own libc.so.6, the first of the fixed
//     LibcCandidates() that has it. An image without one (musl, a static
//     program) gets the pair, and the plan a warning.
//
// The probe (FindImageLibc) is the only I/O here. Threat model: the image
// author controls every name in the rootfs, and it is read as host root.
// So the image only chooses among fixed directories: each candidate is
// opened by descriptor inside the rootfs with no symlink followed (a
// directory the image points elsewhere is not that directory), libc.so.6 in
// it is resolved inside the rootfs (rootfs_path.h) and must end at a regular
// file, seen through an O_PATH fd and fstat: never opened for reading,
// mapped or executed. Nothing is created or written. The executors resolve
// the chosen mount targets again, by descriptor, as every other target.
#pragma once
#include <string>
#include <vector>

#include "error.h"

namespace ocid {

struct LibraryDirs {
  std::vector<std::string> dirs;  // absolute container directories; a
                                  // preload by name takes the first
  std::string why;                // one line: how they were chosen
  bool no_glibc = false;          // the image was seen and has no libc.so.6
  std::string probe_error;        // the image could not be looked at (a line), or ""
};

// The build's multiarch triplet ("x86_64-linux-gnu"), "" for an
// architecture the table does not know.
const char* MultiarchTriplet();

// Where a glibc image keeps libc.so.6, in the order they are tried.
std::vector<std::string> LibcCandidates();

// Directories as one list in a sentence: "a, b and c".
std::string JoinDirs(const std::vector<std::string>& dirs);

// The answer for every image: /usr/lib/<triplet>, then /usr/lib64. `why`
// says why the image was not looked at ("" for the standing reason).
LibraryDirs UnseenLibraryDirs(const std::string& why = "");

// The answer for an image whose libc.so.6 is in `dir`.
LibraryDirs ImageLibraryDirs(const std::string& dir);

// The image has no libc.so.6 in any candidate: the pair, marked no_glibc.
LibraryDirs NoGlibcLibraryDirs();

// The probe. `rootfs_fd`: the rootfs directory (O_PATH | O_DIRECTORY is
// enough). *dir is the first candidate holding a libc.so.6 that is a
// regular file, or "" when none does. A candidate that is missing, not a
// directory, reached through a symlink or a symlink loop (ENOENT, ENOTDIR,
// ELOOP) just does not have it; any other failure is false with `err`.
bool FindImageLibc(int rootfs_fd, std::string* dir, Error* err);

// The probe from the rootfs's host path, as the hook, the shim and `plan`
// hold it. A rootfs that does not exist gives the pair with why "no rootfs
// at ..."; any other failure gives the pair with probe_error set.
LibraryDirs ProbeLibraryDirs(const std::string& rootfs);

}  // namespace ocid
