# The install layout and the packages (`cmake --install`, `cpack -G DEB`,
# `cpack -G RPM`). Included from the top CMakeLists.txt, so relative paths
# and CMAKE_CURRENT_SOURCE_DIR/BINARY_DIR are the top directory's.
#
# Two prefixes meet here, and each path must say which it means:
# - CMAKE_INSTALL_PREFIX (configure time, /usr/local unless set) is where a
#   plain `cmake --install` puts the files;
# - CPACK_PACKAGING_INSTALL_PREFIX (/usr, below) is where the packages put
#   them: cpack runs the same install rules with CMAKE_INSTALL_PREFIX set to
#   it (and DESTDIR to its staging tree), whatever the build was configured
#   with.
# So the install rules use the relative GNUInstallDirs dirs
# (CMAKE_INSTALL_DOCDIR, never CMAKE_INSTALL_FULL_DOCDIR), a path written
# into an installed file is made at install time from the prefix of that
# install, and the package file lists below are made from the packaging
# prefix.

# Laid out like a distribution package: the hook where OCI hooks live, its
# hooks.d entries (generated with the real install path) where podman and
# CRI-O look, the Onload inventory active, the other vendors as examples to
# copy into the config directory, and a /usr/bin link for `plan` and `check`.
set(OCID_HOOKS_BINDIR ${CMAKE_INSTALL_LIBEXECDIR}/oci/hooks.d)
# The build tree's own copies of the hooks.d entries, for the tests that
# hand them to podman (test/integration/podman_hooks.sh): they name the
# configure-time prefix. The installed ones are made by the install code
# below.
set(OCID_HOOK_PATH ${CMAKE_INSTALL_FULL_LIBEXECDIR}/oci/hooks.d/oci-decorator)
foreach(stage prestart poststop)
  set(OCID_STAGE ${stage})
  configure_file(hooks.d/oci-decorator.json.in
                 ${CMAKE_CURRENT_BINARY_DIR}/hooks.d/oci-decorator-${stage}.json @ONLY)
endforeach()
# Relative, so the same under any prefix: ../libexec/oci/hooks.d/oci-decorator.
file(RELATIVE_PATH OCID_BIN_LINK /${CMAKE_INSTALL_BINDIR} /${OCID_HOOKS_BINDIR}/oci-decorator)
file(CREATE_LINK ${OCID_BIN_LINK} ${CMAKE_CURRENT_BINARY_DIR}/oci-decorator-bin-link SYMBOLIC)

install(TARGETS oci-decorator DESTINATION ${OCID_HOOKS_BINDIR} COMPONENT hook)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/oci-decorator-bin-link
        DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME oci-decorator COMPONENT hook)
# The runtime shim: the same binary, in shim mode under this name (register
# /usr/bin/oci-decorator-runtime as a docker or containerd runtime).
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/oci-decorator-bin-link
        DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME oci-decorator-runtime COMPONENT hook)
# The hooks.d entries name the hook by its absolute path, so they are
# generated when installing, from that install's prefix: /usr in the
# packages, the --prefix of `cmake --install`.
install(CODE "
  set(OCID_HOOK_PATH \"\${CMAKE_INSTALL_PREFIX}/${OCID_HOOKS_BINDIR}/oci-decorator\")
  foreach(OCID_STAGE prestart poststop)
    configure_file(\"${CMAKE_CURRENT_SOURCE_DIR}/hooks.d/oci-decorator.json.in\"
                   \"${CMAKE_CURRENT_BINARY_DIR}/hooks.d/install/oci-decorator-\${OCID_STAGE}.json\"
                   @ONLY)
  endforeach()
  file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/containers/oci/hooks.d\"
       TYPE FILE FILES
       \"${CMAKE_CURRENT_BINARY_DIR}/hooks.d/install/oci-decorator-prestart.json\"
       \"${CMAKE_CURRENT_BINARY_DIR}/hooks.d/install/oci-decorator-poststop.json\")
  " COMPONENT hook)
install(FILES config/onload.json DESTINATION ${OCID_SYSCONFDIR}/oci-decorator/oci-decorator.d COMPONENT hook)
install(FILES config/onload.json config/rdma.json config/nvidia.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/oci-decorator/examples COMPONENT hook)
install(FILES man/oci-decorator.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT hook)
install(FILES man/oci-decorator.json.5 DESTINATION ${CMAKE_INSTALL_MANDIR}/man5 COMPONENT hook)
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT hook)
# systemd-tmpfiles makes /run/onload at boot, for CDI specs that mount it.
# lib/tmpfiles.d under the prefix (not CMAKE_INSTALL_LIBDIR, which is
# multiarch on Debian): /usr/lib/tmpfiles.d in the packages, and
# /usr/local/lib/tmpfiles.d, which systemd reads too, for a default install.
set(OCID_TMPFILES_DIR lib/tmpfiles.d CACHE STRING
    "Where the tmpfiles.d entry goes, relative to the install prefix")
install(FILES packaging/tmpfiles.d/oci-decorator.conf DESTINATION ${OCID_TMPFILES_DIR}
        COMPONENT hook)
# The operator's pages the README links to, at the same relative path.
set(OCID_DOC_PAGES README.md architecture.md clusters.md delivery-modes.md install.md
                   inventories-and-profiles.md logs-and-check.md speed.md)
list(TRANSFORM OCID_DOC_PAGES PREPEND docs/ OUTPUT_VARIABLE OCID_DOC_PAGE_FILES)
install(FILES ${OCID_DOC_PAGE_FILES} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT hook)
# (The device plugin's install rules are in src/plugin/CMakeLists.txt.)

# `cpack -G DEB` in the build directory builds the Debian packages, one per
# program: oci-decorator (the hook: static, so it depends on nothing) and,
# when built, oci-decorator-device-plugin (gRPC and protobuf: its
# dependencies come from dpkg-shlibdeps).
set(CPACK_PACKAGE_NAME oci-decorator)
set(CPACK_PACKAGE_VENDOR "The oci-decorator authors")
set(CPACK_PACKAGE_CONTACT "The oci-decorator authors <oci-decorator@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "OCI runtime hook bringing Onload, TCPDirect and other vendor stacks into containers")
set(CPACK_PACKAGE_INSTALL_DIRECTORY /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Where the packages put a GNUInstallDirs dir: for the package file lists.
set(OCID_PKG_DOCDIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR})
set(OCID_PKG_DATADIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR})
set(OCID_PKG_MANDIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR})
set(OCID_PKG_LIBEXECDIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBEXECDIR})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL hook)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_HOOK_PACKAGE_NAME oci-decorator)
set(CPACK_DEBIAN_HOOK_PACKAGE_RECOMMENDS "runc | crun")
set(CPACK_DEBIAN_HOOK_PACKAGE_SUGGESTS "podman")
set(CPACK_COMPONENT_HOOK_DESCRIPTION
    "OCI runtime hook bringing Onload, TCPDirect and other vendor stacks into containers")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles
     "${OCID_SYSCONFDIR}/oci-decorator/oci-decorator.d/onload.json\n")
set(CPACK_DEBIAN_HOOK_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles)
if(TARGET oci-decorator-device-plugin)
  list(APPEND CPACK_COMPONENTS_ALL plugin)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_NAME oci-decorator-device-plugin)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_SUGGESTS "oci-decorator")
  set(CPACK_COMPONENT_PLUGIN_DESCRIPTION
      "Kubernetes and Nomad device plugin serving the oci-decorator inventories as cluster resources")
endif()
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

# `cpack -G RPM` builds the same two packages for RHEL, Rocky and Alma 8 and
# 9, with the same layout. The hook's inventory is %config(noreplace) (an
# edited one survives an upgrade; rpm puts the new one beside it as
# .rpmnew). The hook package requires nothing (automatic requires find no
# library in a static binary); the plugin's requires are found by rpm. Like
# the .debs, no scriptlets. Directories that belong to the system
# (filesystem, man, bash-completion, zsh, containers-common) are not
# claimed; the packages own only their own.
set(CPACK_RPM_COMPONENT_INSTALL ON)
set(CPACK_PACKAGE_RELOCATABLE OFF)  # the hooks.d entries name the absolute paths
# No /usr/lib/.build-id links: the binaries are stripped and no debuginfo
# package is built for them to point at. brp-compress gzips the man pages
# as on RHEL; it needs bash, and Debian's rpmbuild runs it with /bin/sh,
# dash there (RHEL's /bin/sh is bash). The Packager tag is the contact.
set(CPACK_RPM_SPEC_MORE_DEFINE
    "%define _build_id_links none
%define __brp_compress bash %{_rpmconfigdir}/brp-compress %{?_prefix}
%define packager ${CPACK_PACKAGE_CONTACT}")
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_LICENSE "ASL 2.0")  # RHEL 8 and 9 name licenses so (not SPDX yet)
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_HOOK_PACKAGE_NAME oci-decorator)
set(CPACK_RPM_HOOK_PACKAGE_SUMMARY "OCI runtime hook bringing vendor stacks such as Onload into containers")
set(CPACK_RPM_HOOK_PACKAGE_DESCRIPTION
    "An OCI runtime hook (for runc, crun, podman, CRI-O, docker, containerd)
bringing Onload, TCPDirect and other vendor user-space stacks into the
containers that ask for them: also a runtime shim and a CDI spec generator.")
set(CPACK_RPM_HOOK_USER_FILELIST
    "%config(noreplace) ${OCID_SYSCONFDIR}/oci-decorator/oci-decorator.d/onload.json"
    "%doc ${OCID_PKG_DOCDIR}/README.md"
    "%license ${OCID_PKG_DOCDIR}/LICENSE")
foreach(page IN LISTS OCID_DOC_PAGES)
  list(APPEND CPACK_RPM_HOOK_USER_FILELIST "%doc ${OCID_PKG_DOCDIR}/docs/${page}")
endforeach()
set(CPACK_RPM_PLUGIN_PACKAGE_NAME oci-decorator-device-plugin)
set(CPACK_RPM_PLUGIN_PACKAGE_SUMMARY "Kubernetes and Nomad device plugin for the oci-decorator inventories")
set(CPACK_RPM_PLUGIN_PACKAGE_DESCRIPTION
    "A Kubernetes (kubelet) and Nomad device plugin serving the vendor
inventories of oci-decorator as cluster resources.")
set(CPACK_RPM_PLUGIN_USER_FILELIST
    "%license ${OCID_PKG_DATADIR}/doc/oci-decorator-device-plugin/LICENSE")
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    ${OCID_PKG_LIBEXECDIR}
    ${OCID_PKG_MANDIR} ${OCID_PKG_MANDIR}/man5 ${OCID_PKG_MANDIR}/man8
    ${OCID_PKG_DATADIR}/bash-completion ${OCID_PKG_DATADIR}/bash-completion/completions
    ${OCID_PKG_DATADIR}/zsh ${OCID_PKG_DATADIR}/zsh/site-functions
    ${OCID_PKG_DATADIR}/containers
    ${CPACK_PACKAGING_INSTALL_PREFIX}/${OCID_TMPFILES_DIR})
# cpack reads packaging/cpack-generator.cmake per generator (it tells the
# install code of the zsh completions which generator runs).
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_SOURCE_DIR}/packaging/cpack-generator.cmake)
include(CPack)
