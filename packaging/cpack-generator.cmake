# CPACK_PROJECT_CONFIG_FILE: cpack reads this once per generator, with
# CPACK_GENERATOR set to the one running. The install code that places the
# zsh completions (CMakeLists.txt, ocid_completions) runs in the same cpack
# process but sees none of the CPACK_ variables: it reads the generator from
# this environment variable.
set(ENV{OCID_CPACK_GENERATOR} "${CPACK_GENERATOR}")
