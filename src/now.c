/* now.c - reading and sleeping on the system clocks.
 *
 * Every clock read of the library (the sampler's, a conversion's renewal) goes to the
 * kernel's vDSO clock_gettime directly, through one pointer in the hot data section.
 * glibc's clock_gettime reaches the same function through a code page of its own and
 * a pointer in the dynamic loader's data: after idle each is one more miss, and the
 * first read after 3 ms of sleep cost about three times the direct call here
 * (docs/benchmark-notes.md). The function is found once, at the first read, in the
 * vDSO's own symbol table (getauxval(AT_SYSINFO_EHDR)); where there is none (a kernel
 * or an emulator without a vDSO, valgrind) or it does not name the function, libc's
 * clock_gettime is used. Both are called as one signature: 0, or a negative errno. */
#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include "internal.h"
#include "now.h"

/* The vDSO's name for clock_gettime, by architecture (the kernel's vdso linker
 * scripts); NULL: none is looked for. */
#if defined(__x86_64__) || (defined(__riscv) && __riscv_xlen == 64)
#define VDSO_GETTIME "__vdso_clock_gettime"
#elif defined(__aarch64__)
#define VDSO_GETTIME "__kernel_clock_gettime"
#else
#define VDSO_GETTIME NULL
#endif

int fts__libc_gettime(clockid_t id, struct timespec *ts)
{
	return clock_gettime(id, ts) ? -errno : 0;
}

/* The read in use: NULL until the first read finds it (any thread may; each finds the
 * same function and stores it with a relaxed store, read relaxed). */
static fts__gettime_fn gettime FTS__HOT_DATA;

/* A symbol's address in the ELF image at base (the vDSO, as the kernel maps it: whole,
 * its tables at the addresses its dynamic section gives, biased by where its first
 * segment lies), or NULL. Its hash table gives the number of symbols. */
static void *elf_symbol(const unsigned char *base, const char *name)
{
	const Elf64_Ehdr *eh = (const void *)base;
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	const Elf64_Sym *sym = NULL;
	const Elf32_Word *hash = NULL;
	const char *str = NULL;
	uintptr_t bias = 0;
	int have_load = 0;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr))
		return NULL;
	ph = (const void *)(base + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			bias = (uintptr_t)base + ph[i].p_offset - ph[i].p_vaddr;
			have_load = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const void *)(base + ph[i].p_offset);
		}
	}
	if (!have_load || !dyn)
		return NULL;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			sym = (const void *)(bias + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			str = (const void *)(bias + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hash = (const void *)(bias + dyn->d_un.d_ptr);
	}
	if (!sym || !str || !hash)
		return NULL;
	for (Elf32_Word i = 0; i < hash[1]; i++) {   /* hash[1]: the number of symbols */
		if (ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC && sym[i].st_shndx != SHN_UNDEF &&
		    (ELF64_ST_BIND(sym[i].st_info) == STB_GLOBAL ||
		     ELF64_ST_BIND(sym[i].st_info) == STB_WEAK) &&
		    !strcmp(str + sym[i].st_name, name))
			return (void *)(bias + sym[i].st_value);
	}
	return NULL;
}

fts__gettime_fn fts__gettime_find(int *vdso)
{
	void *f = VDSO_GETTIME ? elf_symbol((const void *)getauxval(AT_SYSINFO_EHDR), VDSO_GETTIME)
			       : NULL;

	if (vdso)
		*vdso = f != NULL;
	/* the vDSO's function returns 0 or a negative errno, as fts__libc_gettime does */
	return f ? (fts__gettime_fn)f : fts__libc_gettime;
}

/* The first read: find the function, then read with it. Out of the hot path. */
__attribute__((cold, noinline)) static int first_read(clockid_t id, struct timespec *ts)
{
	fts__gettime_fn f = fts__gettime_find(NULL);

	__atomic_store_n(&gettime, f, __ATOMIC_RELAXED);
	return f(id, ts);
}

FTS__PATH(1) int fts__now(clockid_t id, int64_t *ns)
{
	fts__gettime_fn f = __atomic_load_n(&gettime, __ATOMIC_RELAXED);
	struct timespec ts;
	int rc = f ? f(id, &ts) : first_read(id, &ts);

	if (rc < 0)
		return rc;
	*ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return 0;
}

struct timespec fts__timespec(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
}

/* An absolute deadline: a signal handler that interrupts the sleep costs its own time
 * only, where restarting a relative sleep adds the timer slack back every time (and a
 * steady stream of signals would keep it sleeping for ever). */
void fts__sleep_until(int64_t deadline)
{
	struct timespec ts = fts__timespec(deadline);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
