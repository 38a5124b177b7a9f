# The systemd unit and tmpfiles.d entry for `faststamp serve`, the machine's one
# calibration sampler. Relative directories are under CMAKE_INSTALL_PREFIX.
set(FASTSTAMP_SYSTEMD_UNITDIR lib/systemd/system CACHE STRING
  "Where faststamp.service is installed (relative: under the prefix)")
set(FASTSTAMP_TMPFILESDIR lib/tmpfiles.d CACHE STRING
  "Where the tmpfiles.d entry faststamp.conf is installed (relative: under the prefix)")

# The path the service publishes at is the library's default (FASTSTAMP_SHARED_PATH).
get_filename_component(FASTSTAMP_SHARED_DIR "${FASTSTAMP_SHARED_PATH}" DIRECTORY)
# ExecStart names the command by its absolute path, which `cmake --install --prefix`
# may move after configuring: the unit is finished at install time, with the prefix
# then (a template here with everything else).
function(fts_unit_template)
  set(CMAKE_INSTALL_FULL_BINDIR "@FTS_UNIT_BINDIR@")
  configure_file(${CMAKE_CURRENT_SOURCE_DIR}/systemd/faststamp.service.in
    ${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.service.in @ONLY)
endfunction()
fts_unit_template()
if(IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}")
  set(fts_unit_bindir "${CMAKE_INSTALL_BINDIR}")
else()
  set(fts_unit_bindir "\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}")
endif()
install(CODE "set(FTS_UNIT_BINDIR \"${fts_unit_bindir}\")
  configure_file(\"${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.service.in\"
    \"${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.service\" @ONLY)")
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/systemd/faststamp.tmpfiles.in
  ${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.conf @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.service
  DESTINATION ${FASTSTAMP_SYSTEMD_UNITDIR})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/systemd/faststamp.conf
  DESTINATION ${FASTSTAMP_TMPFILESDIR})
