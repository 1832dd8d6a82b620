// `oci-decorator-device-plugin probe --health-file FILE [--max-age S]
// [--ready]`: exit 0 when the kubernetes mode's health file is fresh (and,
// with --ready, every resource registered), for a DaemonSet's exec probe.
// Run by the kubelet every few seconds: no logger, no journald socket.
#pragma once
#include <string>

namespace ocid {

// Prints one line (stdout when it passes, stderr when not) and returns the
// exit code: 0 passes, 1 not.
int RunProbe(const std::string& path, int max_age, bool ready);

}  // namespace ocid
