/* backend.c - which counter new stamps use, decided once before main(). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "arch.h"
#include "backend.h"
#include "sysfs.h"

#if FTS__HAVE_COUNTER
int fts__store_counter = 1;
#else
int fts__store_counter = 0;
#endif

static struct fts__choice choice;
static pthread_once_t choice_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
	const char *env = getenv("FASTSTAMP_BACKEND");

	if (fts__sysfs_clocksource(choice.clocksource, sizeof(choice.clocksource)) < 0)
		choice.clocksource[0] = '\0';
	fts__arch_probe(&choice.arch, choice.clocksource);
	if (env && *env) {
		snprintf(choice.env, sizeof(choice.env), "%s", env);
		if (!strcmp(env, "generic")) {
			choice.arch.usable = 0;
			snprintf(choice.arch.reason, sizeof(choice.arch.reason),
				 "FASTSTAMP_BACKEND=generic in the environment");
		} else if (FTS__HAVE_COUNTER && !strcmp(env, choice.arch.backend)) {
			choice.arch.usable = 1;
			snprintf(choice.arch.reason, sizeof(choice.arch.reason),
				 "FASTSTAMP_BACKEND=%s in the environment", env);
		} else {
			choice.env_ignored = 1;
		}
	}
	choice.store_counter = FTS__HAVE_COUNTER && choice.arch.usable;
	__atomic_store_n(&fts__store_counter, choice.store_counter, __ATOMIC_RELAXED);
}

const struct fts__choice *fts__backend_choice(void)
{
	pthread_once(&choice_once, choose);
	return &choice;
}

/* Decide before main(), so stores agree with fts_get_info() from the first one. */
__attribute__((constructor)) static void choose_at_load(void)
{
	fts__backend_choice();
}

