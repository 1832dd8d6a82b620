#include "nomad_plugin.h"

#include "log.h"

namespace ocid {

int RunNomad(const PluginOptions&) {
  log::Error("nomad: not built yet");
  return 2;
}

}  // namespace ocid
