/* procs.c - the bench's child processes: this program run again (bench
 * --first-conversion-child ...) with its stdout, and maybe its stdin, through pipes;
 * what it prints read as "key value" lines; reaped, or killed on an error path. And
 * the clean-up while the shared-history section runs: a signal that ends the bench
 * first kills the service and the children and removes the private directory.
 *
 * Owns: the pipes, fork/exec and waitpid of the children, the signal handlers of the
 * section. May not: know what a child measures (fresh.c does) or print to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_int.h"
#include "tool.h"

/* While the section runs, a signal that ends the bench (SIGINT, SIGTERM, SIGHUP) first
 * kills the service and the children and removes the directory: only async-signal-safe
 * calls, on what was laid out before. */
static struct {
	int armed;
	volatile pid_t pid[1 + SH_ROLES];   /* [0] the service, then the children running */
	char file[4][PATH_MAX + 32];        /* what the directory may hold */
	char dir[PATH_MAX];
	struct sigaction old[3];
} SG;
static const int sg_signals[3] = { SIGINT, SIGTERM, SIGHUP };

static void sg_on_signal(int sig)
{
	for (int i = 0; i < 1 + SH_ROLES; i++)
		if (SG.pid[i] > 0)
			kill(SG.pid[i], SIGKILL);
	for (int i = 0; i < 4; i++)
		if (SG.file[i][0])
			unlink(SG.file[i]);
	rmdir(SG.dir);
	signal(sig, SIG_DFL);
	raise(sig);
}

void bench_sg_arm(const char *dir)
{
	static const char *const names[3] = { "clock", "clock.lock", "serve.err" };
	struct sigaction sa;

	memset(&SG, 0, sizeof(SG));
	snprintf(SG.dir, sizeof(SG.dir), "%s", dir);
	for (int i = 0; i < 3; i++)
		snprintf(SG.file[i], sizeof(SG.file[i]), "%s/%s", dir, names[i]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sg_on_signal;
	sigfillset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sg_signals[i], &sa, &SG.old[i]);
	SG.armed = 1;
}

void bench_sg_disarm(void)
{
	if (!SG.armed)
		return;
	for (int i = 0; i < 3; i++)
		sigaction(sg_signals[i], &SG.old[i], NULL);
	SG.armed = 0;
}

/* sg_track(pid, 0): a child runs (slots 1..; the service has slot 0); sg_track(0, pid):
 * it no longer does. */
static void sg_track(pid_t pid, pid_t gone)
{
	if (!SG.armed)
		return;
	for (int i = pid > 0 && !gone ? 1 : 0; i < 1 + SH_ROLES; i++)
		if (SG.pid[i] == gone) {
			SG.pid[i] = pid;
			return;
		}
}


void bench_sg_service(pid_t pid, const char *newfile)
{
	if (!SG.armed)
		return;
	SG.pid[0] = pid;
	if (newfile)
		snprintf(SG.file[3], sizeof(SG.file[3]), "%s", newfile);
}

/* environ, with FASTSTAMP_SHARED=shared instead of any it has; NULL if out of memory.
 * One allocation: free() it. */
static char **env_with(const char *shared)
{
	size_t n = 0, k = 0, len = strlen(shared) + sizeof("FASTSTAMP_SHARED=");
	char **e;

	while (environ[n])
		n++;
	if (!(e = malloc((n + 2) * sizeof(*e) + len)))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "FASTSTAMP_SHARED=", 17))
			e[k++] = environ[i];
	e[k] = (char *)(e + n + 2);
	snprintf(e[k++], len, "FASTSTAMP_SHARED=%s", shared);
	e[k] = NULL;
	return e;
}

/* Start bench --first-conversion-child [role quick|full] with FASTSTAMP_SHARED=shared
 * (NULL: this process's environment), a pipe to its stdin if with_stdin. 0, or -1 with
 * a message. */
int bench_child_start(struct child *c, const char *shared, const char *role, int quick,
		      int with_stdin)
{
	char *argv[] = { "faststamp", "bench", "--first-conversion-child", (char *)role,
			 quick ? "quick" : "full", NULL };
	char **env = shared ? env_with(shared) : environ;
	int out[2] = { -1, -1 }, in[2] = { -1, -1 };

	c->pid = -1;
	c->out = c->in = -1;
	c->len = 0;
	if (!role)
		argv[3] = NULL;
	if (!env || pipe2(out, O_CLOEXEC) < 0 || (with_stdin && pipe2(in, O_CLOEXEC) < 0)) {
		perror("faststamp bench: a child's pipes");
		goto fail;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		perror("faststamp bench: fork");
		goto fail;
	}
	if (c->pid == 0) {   /* dup2 clears close-on-exec on the copies */
		if (dup2(out[1], 1) < 0 || (with_stdin && dup2(in[0], 0) < 0))
			_exit(127);
		execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	sg_track(c->pid, 0);
	close(out[1]);
	c->out = out[0];
	if (with_stdin) {
		close(in[0]);
		c->in = in[1];
	}
	if (shared)
		free(env);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (in[i] >= 0)
			close(in[i]);
	}
	if (shared)
		free(env);
	return -1;
}

/* Read what the child prints until its output holds until (NULL: to its end). 1 if it
 * does (or the end came, for NULL), 0 if not. */
int bench_child_read(struct child *c, const char *until)
{
	for (;;) {
		ssize_t got;
		c->buf[c->len] = '\0';
		if (until && strstr(c->buf, until))
			return 1;
		if (c->len == sizeof(c->buf) - 1)
			return !until;
		got = read(c->out, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return !until;
		c->len += (size_t)got;
	}
}

static void child_close(struct child *c)
{
	if (c->out >= 0)
		close(c->out);
	if (c->in >= 0)
		close(c->in);
	c->out = c->in = -1;
}

/* Read the rest of its output and reap it: 0 if it exited 0, else -1 with a message. */
int bench_child_end(struct child *c, const char *what)
{
	int status;

	if (c->pid <= 0)
		return -1;
	bench_child_read(c, NULL);
	child_close(c);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	sg_track(0, c->pid);
	c->pid = -1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "faststamp bench: the %s child was killed by signal %d\n", what,
			WTERMSIG(status));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "faststamp bench: the %s child failed (exit %d)\n", what,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}

/* On an error path: kill it, reap it. */
void bench_child_kill(struct child *c)
{
	child_close(c);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
		sg_track(0, c->pid);
	}
	c->pid = -1;
}

/* The value of the line "key value" it printed: NAN if none. */
double bench_child_num(const struct child *c, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = c->buf; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
		if (!strncmp(l, key, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	return NAN;
}

void bench_child_str(const struct child *c, const char *key, char *out, size_t len)
{
	size_t n = strlen(key);

	out[0] = '\0';
	for (const char *l = c->buf; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
		if (!strncmp(l, key, n) && l[n] == ' ') {
			snprintf(out, len, "%.*s", (int)strcspn(l + n + 1, "\n"), l + n + 1);
			return;
		}
}

