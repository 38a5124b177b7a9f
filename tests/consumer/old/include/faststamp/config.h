/* faststamp/config.h - build-time choices, written by CMake. */
#ifndef FASTSTAMP_CONFIG_H
#define FASTSTAMP_CONFIG_H

/* 1 when the library was built with -DFASTSTAMP_FORCE_GENERIC=ON: every stamp is a
 * clock_gettime(CLOCK_REALTIME) reading. */
#define FTS_FORCE_GENERIC 0

#define FTS_VERSION_MAJOR 0
#define FTS_VERSION_MINOR 1
#define FTS_VERSION_PATCH 0
#define FTS_VERSION_STRING "0.1.0"

#endif /* FASTSTAMP_CONFIG_H */
