/* calib.h - calib.c's interface: a history's writer and storage, beyond the public
 * fts_calib_* calls. Not installed. */
#ifndef FTS__CALIB_H
#define FTS__CALIB_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* fts_calib_add, and step: the source saw a step since the previous sample. */
int fts__calib_add_sample(struct fts_calib *c, uint64_t before, int64_t ref_ns, uint64_t after,
			  int step);
/* 1 when the writer's state and what it published agree: no add is half done (what a
 * fork landing inside one would leave the child). */
int fts__calib_in_sync(const struct fts_calib *c);
/* Drop every sample (used when the process clock is reset in tests). */
void fts__calib_reset(struct fts_calib *c);
/* The region a history with opts needs (history.h): its chunks and length, and the
 * segments it keeps at most. 0 or -EINVAL. */
int fts__calib_dims(const struct fts_calib_opts *opts, uint32_t *dircap, size_t *len,
		    size_t *recs);
/* A history written in region (zeroed, len from fts__calib_dims, the caller's to unmap
 * after fts_calib_free), or in memory of its own (region NULL). */
struct fts_calib *fts__calib_new_at(const struct fts_calib_opts *opts, void *region, size_t len);
/* The same in the caller's struct *c, which the history never frees (the process clock
 * keeps its own in its object's hot page, beside the pointers readers take to them):
 * 0, or -errno with *c left alone. */
int fts__calib_init_at(struct fts_calib *c, const struct fts_calib_opts *opts, void *region,
		       size_t len);
/* Point c's fields at a region of dircap chunks. */
void fts__calib_layout(struct fts_calib *c, void *region, uint32_t dircap);
/* A history read from a file or copied: room for n segments, put one by one (each
 * spanning [key, end], keys rising), then published with its ends (the head at the
 * first key, the tail at newest); it takes no samples (EPERM). The puts and the
 * publishing check what they are given as a file's contents: -1 if it is not a
 * history. */
struct fts__rec;
struct fts__end;
struct fts__pub;
struct fts_calib *fts__calib_new_loaded(size_t n);
int fts__calib_put_loaded(struct fts_calib *c, size_t pos, uint64_t key, uint64_t end,
			  struct fts__rec r);
int fts__calib_publish_loaded(struct fts_calib *c, size_t n, struct fts__end head,
			      struct fts__end tail, uint64_t newest);

#endif /* FTS__CALIB_H */
