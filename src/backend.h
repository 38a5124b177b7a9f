/* backend.h - backend.c: the choice of backend for new stamps. Not installed. */
#ifndef FTS__BACKEND_H
#define FTS__BACKEND_H

#include "arch.h"

struct fts__choice {
	struct fts__arch arch;
	char clocksource[32];
	char env[32];
	int env_ignored;
	int store_counter;      /* the choice for new stamps, before any fault */
};
const struct fts__choice *fts__backend_choice(void);

#endif /* FTS__BACKEND_H */
