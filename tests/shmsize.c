/* shmsize.c - prints the length of the memory `faststamp serve` publishes, as the
 * publisher lays it out (fts__publisher_open, in a scratch directory), for the default
 * history of every clock: "PER_CLOCK_MIB CLOCKS TOTAL_MIB", MiB rounded to the nearest.
 * Read by tests/doc_facts.cmake, so that docs/design.md states what the code makes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "calib.h"
#include "shared.h"

#define MIB(n) (((n) + (1u << 19)) >> 20)

int main(void)
{
	char dir[] = "/tmp/fts-shmsize-XXXXXX", path[64], err[256];
	struct fts__publisher p;
	struct fts__head id = { 0 };
	uint32_t dircap;
	size_t len, recs;
	void *region;
	int rc;

	if (fts__calib_dims(NULL, &dircap, &len, &recs) < 0 || !mkdtemp(dir)) {
		perror("shmsize");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/clock", dir);
	rc = fts__publisher_open(&p, path, &id, 100000000, dircap, len, FTS__NCLK, &region, err,
				 sizeof(err));
	if (rc == 0) {
		printf("%zu %d %zu\n", MIB(fts__shm_stride(len)), FTS__NCLK, MIB(p.len));
		fts__publisher_close(&p, FTS__SHM_STOPPED, "done");
		munmap(p.map, p.len);
	} else {
		fprintf(stderr, "shmsize: %s\n", err);
	}
	snprintf(path, sizeof(path), "%s/clock.lock", dir);
	unlink(path);
	rmdir(dir);
	return rc == 0 ? 0 : 1;
}
