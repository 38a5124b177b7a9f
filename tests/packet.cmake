# faststamp rx/tx end to end: loopback and a veth pair between two network namespaces
# (created and removed by the script; root only, else SKIP), read back with tshark and
# tcpdump. Exit 77 means skipped. Each case takes seconds (tshark and tcpdump read every
# capture); the deadline of 300 s is for a busy machine, not a figure.
foreach(case lo4-pcap lo4-pcapng lo6-pcap lo6-pcapng netns4 netns6 stamp-modes sizes
        bad-input port-in-use unwritable full-disk ring-burst ring-wait signal-stdout both duration-empty
        listen-port0 tx-dest write-dir addr-errors netns6-scope rate-few repeated-options
        unused-options help-man)
  add_test(NAME packet_${case}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/packet/packet_test.sh $<TARGET_FILE:faststamp_tool> ${case})
  set_tests_properties(packet_${case} PROPERTIES LABELS packet TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()
