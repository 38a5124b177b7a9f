/* record.h - record.c's interface: the record file of fts_clock_record. Every call but
 * fts__record_open and fts__record_undo with the process clock's lock held (clock.c).
 * Not installed. */
#ifndef FTS__RECORD_H
#define FTS__RECORD_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "health.h"
#include "histfile.h"

/* A file a recorder starts on: as found (to undo a failed start), and where it goes on. */
struct fts__record_file {
	const char *path;
	int fd;                 /* open and locked; -1 once closed */
	int created;            /* the start created it */
	struct stat st;         /* as found */
	off_t keep;             /* its bytes recording goes on from */
};

/* Open path for recording a record of h: a new or empty file is started, a record of
 * this boot and counter is gone on from its last whole block, anything else is left
 * alone (EEXIST); the file is locked (EBUSY: another recorder holds it). 0, or an errno
 * (the file then as it was). */
int fts__record_open(const char *path, const struct fts__head *h, struct fts__record_file *f);
/* Record to f's file from now on: 0, or EBUSY (recording already). */
int fts__record_begin(struct fts__record_file *f);
/* After the first sample of a start: 0, or the errno of a write that failed. */
int fts__record_started(void);
/* A start that failed after fts__record_begin: the recorder forgets f (then
 * fts__record_undo). */
void fts__record_abandon(struct fts__record_file *f);
/* Undo a failed start: a file it created is removed, one it found cut back to what it
 * was; the fd closed. */
void fts__record_undo(struct fts__record_file *f);

/* 1 while recording. */
int fts__record_on(void);
/* A sample of every clock, each in its bracket; steps: bit k, clock k's history was
 * told of a step before it (a replay tells it the same). */
void fts__record_sample(const struct fts__psample *s, uint32_t steps);
/* An event (FTS__EV_*) found at sample s, after the samples before it. */
void fts__record_event(uint32_t type, const struct fts__psample *s, int64_t value,
		       const char *what);
/* Write what is buffered; is that due at now (CLOCK_MONOTONIC ns)? */
void fts__record_flush(void);
int fts__record_due(int64_t now);
/* Stop recording (fts_clock_record(NULL)): the buffer written, the file closed and its
 * lock let go. 0, or the errno of a write that had stopped it. */
int fts__record_stop(void);
/* The tap: a second copy of every sample and event recorded from now on, kept in
 * memory as blocks of a record (type, length, payload) for a trace's drain to write.
 * fts__record_tap(1) starts it (empty), fts__record_tap(0) stops it. */
void fts__record_tap(int on);
int fts__record_tapping(void);
/* The tap's blocks since the last take, as entries of a 4-byte type, a 4-byte length
 * and the payload: *buf (the caller frees it) and its bytes, 0 when none. */
size_t fts__record_tap_take(unsigned char **buf);
/* In a fork's child: the parent's record stays the parent's. */
void fts__record_drop_inherited(void);

#endif /* FTS__RECORD_H */
