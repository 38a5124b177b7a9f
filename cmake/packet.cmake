# The packet module: receive, stamp and record UDP (faststamp rx / tx). Built into the
# command only, over the public API; the library does not depend on it.
list(APPEND FTS_TOOL_SOURCES
  packet/addr.c packet/capfile.c packet/ring.c packet/rxloop.c packet/tx.c
  tools/rx.c tools/tx.c)
include_directories(packet)
