/* reset.h - reset.c's interface: the process clock's one reset, and fork. Not
 * installed. */
#ifndef FTS__RESET_H
#define FTS__RESET_H

/* What a reset forgets: a fork's child, the threads (none of the parent's runs in it);
 * a new source, all it was and found too: its history, samples, events, fault, proof. */
enum fts__reset { FTS__RESET_THREADS, FTS__RESET_SOURCE };

/* The one reset of the process clock, with its lock held (or in a fork's child). */
void fts__reset_locked(enum fts__reset what);
/* Registers, once, the handlers that keep fork out of a history write. */
void fts__reset_watch_fork(void);

#endif /* FTS__RESET_H */
