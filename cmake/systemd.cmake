# The systemd unit and tmpfiles.d entry for `faststamp serve`, the machine's one
# calibration sampler. Relative directories are under CMAKE_INSTALL_PREFIX.
set(FASTSTAMP_SYSTEMD_UNITDIR lib/systemd/system CACHE STRING
  "Where faststamp.service is installed (relative: under the prefix)")
set(FASTSTAMP_TMPFILESDIR lib/tmpfiles.d CACHE STRING
  "Where the tmpfiles.d entry faststamp.conf is installed (relative: under the prefix)")

configure_file(${CMAKE_CURRENT_SOURCE_DIR}/systemd/faststamp.service.in
  ${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.service @ONLY)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/systemd/faststamp.tmpfiles.in
  ${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.conf @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.service
  DESTINATION ${FASTSTAMP_SYSTEMD_UNITDIR})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.conf
  DESTINATION ${FASTSTAMP_TMPFILESDIR})
