// containerd's TOML configuration, as `setup containerd` writes its drop-in
// and `check` reads the registration back, and the few TOML pieces both
// need. Not a TOML parser: line-based readers of the keys oci-decorator
// writes or depends on (the top-level `version` and `imports`, BinaryName
// lines), and a renderer of basic strings. Pure: bytes in, bytes out.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ocid {

// --- TOML text -------------------------------------------------------------

// `s` without the blanks (space, tab, CR, LF) at either end.
std::string TomlTrim(std::string_view s);

// `s` as a TOML basic string: quoted, '"' and '\' escaped, control
// characters as \uXXXX.
std::string TomlString(const std::string& s);

// Reads the TOML string that starts at s[pos]: a basic string ("...", where
// a backslash takes the next byte as it is, so \" and \\ are a quote and a
// backslash) or a literal string ('...', no escapes). Its text goes to
// *out and the index after its closing quote to *end. False when s[pos] is
// not a quote or the string does not end.
bool ReadTomlString(std::string_view s, size_t pos, std::string* out, size_t* end);

// Every string of a TOML value, in order (an array's items), skipping
// # comments between them; stops at a string that does not end.
std::vector<std::string> TomlStrings(std::string_view value);

// The top-level (before any [table]) value of `key` in TOML bytes, raw
// from after '=' to the end of the value (an array may span lines, up to
// its first ']'); "" when absent. Enough for containerd's `version` and
// `imports`.
std::string TopLevelTomlValue(const std::string& toml, const std::string& key);

// --- containerd --------------------------------------------------------------

// The `version` of containerd's main config (bytes): 2 or 3; 0 when it has
// none or another (containerd reads a file without one as version 1).
int ContainerdConfigVersion(const std::string& main_config);

// The containerd drop-in for config `version` 2 or 3: the shim as a CRI
// runtime. Version 2: containerd 1.6 replaces a plugin's whole config
// section with an imported file's, so the drop-in also names runc (the
// built-in section had it) and is only safe when the main config has no CRI
// section of its own. Version 3 (containerd 2.x, which merges imported
// tables key by key): the shim's tables alone.
std::string ContainerdDropIn(const std::string& name, const std::string& shim_path,
                             int version = 2);
// The shim's runtime tables alone, to add to a main config that has one.
std::string ContainerdRuntimeTables(const std::string& name, const std::string& shim_path,
                                    int version = 2);
// Whether containerd's main config (bytes) configures the CRI plugin.
bool ContainerdHasCriSection(const std::string& main_config);

// Whether containerd's main config (bytes) has an `imports` entry matching
// `dropin` (a glob, as containerd expands them). *has_imports says whether
// it has an imports list at all.
bool ContainerdImportsCover(const std::string& main_config, const std::string& dropin,
                            bool* has_imports);

// Every `BinaryName = "..."` value in a containerd TOML file, in any
// table; commented-out lines and other keys are not read.
std::vector<std::string> ContainerdBinaryNames(const std::string& toml);

}  // namespace ocid
