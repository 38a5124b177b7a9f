/* histfile.h - history files: the on-disk format (faststamp-history(5)), written by
 * fts_calib_save and the process clock's recorder, read by fts_calib_load and
 * `faststamp history`. Not installed. */
#ifndef FTS__HISTFILE_H
#define FTS__HISTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bracket.h"
#include "faststamp.h"
#include "clk.h"
#include "internal.h"

#define FTS__FILE_MAGIC "FSTMPHST"      /* 8 bytes at offset 0 */
#define FTS__FILE_VERSION 3           /* written; 1 and 2 are still read */
#define FTS__BLOCK_MAGIC 0x4b4c4246u    /* "FBLK", little-endian */
#define FTS__BLOCK_HEAD_BYTES 24        /* magic, type, length, payload CRC, 0, header CRC */

/* Block types. Bit 31: a reader that does not know the type may skip the block. */
enum {
	FTS__BLK_HEAD = 1,      /* what the history is of */
	FTS__BLK_SEGS = 2,      /* a saved history: its segments */
	FTS__BLK_SAMPLES = 3,   /* recorded samples */
	FTS__BLK_EVENT = 4,     /* a recorded event */
	FTS__BLK_CLKSAMPLES = 5,   /* recorded samples of every clock (format 3) */
	FTS__BLK_CLKSEGS = 6,   /* a saved history of one clock (format 3) */
	FTS__BLK_OPTIONAL = 1u << 31,
};

/* Counter kinds (HEAD). */
enum {
	FTS__KIND_OTHER = 0,    /* any counter: a history made with fts_calib_* */
	FTS__KIND_TSC = 1,
	FTS__KIND_CNTVCT = 2,
	FTS__KIND_RDTIME = 3,
	FTS__KIND_N
};
/* Each kind's name: the backend's (fts_info.backend) for a counter, and for 0 what any
 * fts_calib history is. */
extern const char *const fts__histfile_kind_names[FTS__KIND_N];

/* Events (EVENT). */
enum {
	FTS__EV_STEP = 1,
	FTS__EV_SUSPEND = 2,
	FTS__EV_FAULT = 3,
};

/* Sample flags (SAMPLES; in CLKSAMPLES, bit k is clock k's, enum fts__clk). */
#define FTS__SAMPLE_STEP 1u     /* the source saw a step since the previous sample */
/* Every clock a file may hold, as bits 1 << k (enum fts__clk). */
#define FTS__ALL_CLOCKS ((1u << FTS__NCLK) - 1)

struct fts__head {
	uint32_t kind;
	uint64_t counter_hz;
	uint8_t boot_id[16];    /* the kernel's boot id, zero if unknown */
	char clocksource[32];
	int64_t created_ns;     /* CLOCK_REALTIME when written */
};

struct fts__event {
	uint32_t type;
	uint64_t counter;       /* the counter at the sample that found it */
	int64_t realtime_ns;    /* and CLOCK_REALTIME there */
	int64_t value_ns;       /* step size, time suspended; 0 for a fault */
	char what[64];
};

/* What a file holds, for `faststamp history`. */
struct fts__fileinfo {
	struct fts__head head;
	uint32_t version;               /* the file's format, 0 if its header is cut */
	int has_head, saved;            /* saved: SEGS or CLKSEGS blocks (else a record) */
	int plain;                      /* one history of no named clock (SAMPLES or SEGS:
					 * formats 1 and 2, fts_calib_save), read as
					 * CLOCK_REALTIME's */
	unsigned clocks;                /* the clocks it holds, 1 << k (enum fts__clk) */
	uint64_t samples, segments;     /* segments: CLOCK_REALTIME's history's */
	uint64_t events[4];             /* by type */
	struct fts__event first_event;  /* the first few, for the summary */
	uint64_t blocks_skipped;        /* optional blocks of unknown types */
	uint64_t whole;                 /* bytes up to the end of the last whole block */
	int cut;                        /* the file ends inside a block (or its header) */
};

/* This machine's boot id (zeros if unreadable). */
void fts__histfile_boot_id(uint8_t id[16]);
/* Write a whole file's header and a HEAD block to fd. 0 or negative errno. */
int fts__histfile_write_header(int fd, const struct fts__head *h);
/* A block in memory: its len bytes of payload are at out + FTS__BLOCK_HEAD_BYTES
 * already; the header goes before them and the padding after (room for both is the
 * caller's: FTS__BLOCK_HEAD_BYTES + len + 7). Returns the block's length. */
size_t fts__histfile_put_block(unsigned char *out, uint32_t type, uint32_t len);
/* Read up to len bytes from fd, fewer only at the end of the file: how many, or -EIO. */
ssize_t fts__histfile_read_some(int fd, void *buf, size_t len);
/* The same at offset off (pread: the file position stays), or at the position when
 * off < 0. */
ssize_t fts__histfile_read_at(int fd, void *buf, size_t len, off_t off);
/* Write one block. 0 or negative errno. */
int fts__histfile_write_block(int fd, uint32_t type, const void *payload, uint32_t len);
/* The payloads of SAMPLES, CLKSAMPLES and EVENT blocks, encoded little-endian into buf
 * (32 bytes a sample; 128 a sample of every clock, k[j] clock j's bracket and bit j of
 * steps its step flag; 96 bytes an event). */
size_t fts__histfile_put_sample(unsigned char *buf, uint64_t before, int64_t ref, uint64_t after,
				uint32_t flags);
size_t fts__histfile_put_clksample(unsigned char *buf, const struct fts__cbracket k[FTS__NCLK],
				   uint32_t steps);
size_t fts__histfile_put_event(unsigned char *buf, const struct fts__event *e);
#define FTS__SAMPLE_BYTES 32
#define FTS__CLKSAMPLE_BYTES (FTS__NCLK * 24 + 8)
#define FTS__EVENT_BYTES 96

/* Save the history c with header h (a SEGS block: one history of no named clock).
 * 0 or negative errno. */
int fts__histfile_save_head(const struct fts_calib *c, int fd, const struct fts__head *h);
/* Save the history of each clock k with c[k] (NULL: one it does not hold; CLOCK_REALTIME's
 * is needed) with header h: a CLKSEGS block a clock. 0 or negative errno (-ENODATA:
 * CLOCK_REALTIME's holds fewer than two samples). */
int fts__histfile_save_clocks(const struct fts_calib *const c[FTS__NCLK], int fd,
			      const struct fts__head *h);
/* A history of its own, copied from the state c publishes now, as a saved one is
 * loaded (it takes no samples): what stamps converted with a shared history keep
 * converting with after the reader leaves it. NULL if no whole state could be read. */
struct fts_calib *fts__histfile_copy(const struct fts_calib *c);
/* Read a file: the history it holds (with info, which may be NULL: on failure it
 * holds what was read before). NULL and *err = EBADMSG, ENODATA (a record of fewer
 * than two samples), EINVAL, ENOMEM or EIO. */
struct fts_calib *fts__histfile_load(int fd, struct fts__fileinfo *info, int *err);
/* Read a file: the history of each clock k in want (bits 1 << k, enum fts__clk) that it
 * holds into out[k], NULL for the others (info->clocks says which it holds; a history
 * of no named clock, formats 1 and 2 and fts_calib_save's, is CLOCK_REALTIME's). The
 * blocks of clocks not wanted are checked, not built. Every file holds CLOCK_REALTIME's.
 * 0, or a negative errno as fts__histfile_load's (out all NULL). */
int fts__histfile_load_clocks(int fd, unsigned want, struct fts_calib *out[FTS__NCLK],
			      struct fts__fileinfo *info);
/* Every clock's history the file at fd holds (fts__histfile_load_clocks). */
int fts__histfile_load_all_clocks(int fd, struct fts_calib *out[FTS__NCLK]);

#endif /* FTS__HISTFILE_H */
