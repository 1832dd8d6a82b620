// CDI names: the kinds, device names and file names oci-decorator gives
// the specs it renders (cdi.h) and writes (`cdi generate`, the device
// plugin), and the inverse names a reader of a CDI directory takes them
// back with. Apart from the renderer, so that the inventory parser can check
// an inventory's "cdi_kind" without depending on how specs are rendered.
// Strings in, strings out: this module knows no inventory (inventory.h has
// the overloads that take one), so the two do not include each other.
#pragma once
#include <string>

namespace ocid {

// The CDI naming rules as podman 4.3's CDI library (0.5) applies them, which
// later versions still accept. Vendor: a letter, then letters, digits, '_',
// '-', '.', ending with a letter or digit; class: the same without '.';
// both at least 2 characters (shorter ones crash that library's parser).
// Device names: letters, digits, '_', '-', '.', ':', starting and ending
// with a letter or digit. `why` says what is wrong.
bool CheckCdiKind(const std::string& kind, std::string* why);
bool CheckCdiDeviceName(const std::string& name, std::string* why);

constexpr const char* kCdiDefaultVendor = "oci-decorator.local";

// "onload" for ".../onload.json".
std::string InventoryStem(const std::string& file);
// An inventory's kind: its cdi_kind when set, else kCdiDefaultVendor + "/"
// + the stem of its file (which may be invalid: check it).
std::string CdiKindOf(const std::string& cdi_kind, const std::string& inventory_file);
// The spec's file name in a CDI directory: "oci-decorator-<stem>.json".
std::string CdiFileName(const std::string& stem);
// The inverse: "a.b" for "oci-decorator-a.b.json"; "" for a name
// CdiFileName does not make.
std::string CdiSpecStem(const std::string& file_name);

// "oci-decorator-<stem>.<device>.preload", with '.' and '%' in the stem
// percent-encoded ("a.b" -> "a%2Eb"), so that no two (spec, device) pairs
// share a name.
std::string CdiPreloadFileName(const std::string& spec_file_name, const std::string& device);
// The inverse: the spec file name a preload file belongs to
// ("oci-decorator-a%2Eb.c.preload" -> "oci-decorator-a.b.json"), "" for a
// name CdiPreloadFileName does not make.
std::string CdiSpecOfPreloadFile(const std::string& preload_file_name);
// The stem of the spec a preload file belongs to ("a.b" for
// "oci-decorator-a%2Eb.onload.preload"); "" for another name.
std::string CdiPreloadStem(const std::string& preload_file_name);
// A spec or preload file name of ours, as the two functions above read it.
bool IsOurCdiFileName(const std::string& file_name);

}  // namespace ocid
