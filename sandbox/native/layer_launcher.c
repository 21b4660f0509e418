/* The capped-layer launcher a tier-1 sandbox starts under, compiled (sandbox/launcher.py builds it
 * with the host's C compiler: `make install`, or the first start after a change to this file).
 *
 *   layer_launcher --write-back PYTHON SCRIPT --nofile N
 *                  [--cgroup-v1 DIR]... [--cgroup-v2 DIR] [--track-v2 DIR] [--oom-first]
 *                  [--done-fd FD [--apply-fd FD]]
 *                  SCRATCH [NAME SIZE PATH]... -- COMMAND...
 *   layer_launcher --check ...the same...   (parse only: "ok", or the refusal; nothing is done)
 *
 * What sandbox/layer_mount.py does, without an interpreter's start per sandbox:
 *
 * - In a private mount namespace (and, for a bot that is not root, a user namespace mapping only
 *   its own uid and gid), each writable folder gets an overlay whose upper layer is a tmpfs of the
 *   folder's cap (SIZE bytes, at least 4096; SIZE/4096 inodes, at least 1024).
 * - COMMAND (bubblewrap) starts in the run's cgroups: born in the v2 cgroup (clone3
 *   CLONE_INTO_CGROUP), moved into each v1 cgroup by writing 0 to its `tasks` file (the only
 *   thread of a fresh child: the kernel then takes no global lock, where a write to cgroup.procs
 *   waits an RCU grace period, milliseconds), with RLIMIT_NOFILE N, no core dumps, and, with
 *   --oom-first, oom_score_adj 1000; anything that fails ends it with status 71 before it runs.
 * - This launcher stays outside those cgroups: killing the sandbox (SIGTERM here, or every task
 *   of the cgroups) still leaves it to apply what the sandbox wrote. bubblewrap is signalled only
 *   through its pidfd. A layer seen full two looks in a row (0.25 s apart) stops the sandbox.
 * - When bubblewrap has been reaped: a layer whose upper layer holds no entry has nothing to apply,
 *   and when none holds any, this writes SCRATCH/report itself (one line per layer: NAME, SIZE,
 *   full 0/1, applied 1, no error, nothing dropped, separated by tabs). Otherwise it unmounts the
 *   overlays (the write-back needs no privilege then: an exec drops this namespace's capabilities
 *   for a bot that is not root) and execs `PYTHON -I -S SCRIPT --apply STATUS SCRATCH
 *   (NAME SIZE PATH FULL UNMOUNT_ERRNO)...` in this same mount namespace: the write-back of a
 *   hostile tree stays sandbox/layer_apply.py's. PYTHON is opened before this enters its user
 *   namespace (from there the bot's /proc/PID/exe, which PYTHON may be, cannot be opened).
 * - It then exits as bubblewrap did (the same signal, or the same status). With --done-fd, once
 *   SCRATCH/report is written by this launcher itself (nothing to apply), it first writes
 *   bubblewrap's wait status to FD in decimal and a newline, and closes it and its own standard
 *   streams (the bot reads the run's output to their end): the bot then has the
 *   run's outcome without waiting for this exit, which tears the overlays down (a few ms per
 *   thousand names the sandbox looked up). FD is close-on-exec from the start: neither bubblewrap
 *   nor the write-back ever holds it, and after a write-back the bot waits for the exit as before.
 * - With --apply-fd as well (the read end of a pipe the bot holds the other end of), a sandbox that
 *   changed something is offered to the bot first: "apply STATUS FULL...\n" on the done FD (FULL:
 *   0/1 per layer, in order), its standard streams closed. The bot applies the upper layers itself
 *   (sandbox/layer_apply.py, read through /proc/PID/root of this process, which waits), writes
 *   SCRATCH/report, and answers "applied\n": no interpreter starts and no overlay is unmounted on
 *   the run's path (about 10-20 ms). Any other answer, or none (the bot gone: its end closed), and
 *   this launcher's own write-back runs as without it, so a killed bot still has the writes applied.
 * - The death of the bot that started it is a SIGTERM (PR_SET_PDEATHSIG): `bot run` or the service
 *   killed, the sandbox ends all the same, its writes applied.
 * - From its start to its end (the write-back included) it holds a shared flock on SCRATCH, as the
 *   bot does while it waits for it: a sweep of stale scratch folders (sandbox/layers.py) removes
 *   only a folder it can lock exclusively, so never a live sandbox's, even once its bot is gone.
 *
 * Every argument is read through an allowlist and anything else is refused with status 64 before
 * anything is done: paths absolute and normalised, without control characters, and, where they go
 * into mount options (SCRATCH, PATH), without ',' ':' or '\'; NAME [a-z0-9_-]{1,32}, each once;
 * SIZE and N decimal and bounded; each option at most once (--cgroup-v1 up to 4 times); a cap to
 * join (a cgroup, or --oom-first) and the write-back present.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define USAGE_EXIT 64
#define JOIN_FAILED_EXIT 71
#define LAYERS_FAILED_EXIT 72
#define MAX_LAYERS 8
#define MAX_V1 4
#define MAX_NAME 32
#define MAX_PATH 4095
#define MAX_SIZE (1ULL << 50)
#define MAX_NOFILE (1ULL << 30)
#define MAX_FD 65535ULL
#define POLL_MS 250
#define FULL_LOOKS 2

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct clone3_args {  /* struct clone_args of linux/sched.h, version 2 (with cgroup) */
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size, cgroup;
};

struct layer {
    const char *name, *path;
    unsigned long long size, inodes;
    char scratch[MAX_PATH + 1], upper[MAX_PATH + 1];
    int looks, full, changed;
};

struct plan {
    int check_only;
    const char *python, *script, *scratch, *cgroup_v2, *track_v2;
    const char *cgroup_v1[MAX_V1];
    int v1_count, oom_first, layer_count, done_fd, apply_fd;
    unsigned long long nofile;
    struct layer layers[MAX_LAYERS];
    char **command;
};

static void say(const char *format, ...) {
    char line[2 * MAX_PATH];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (length < 0) return;
    if ((size_t)length > sizeof line - 2) length = sizeof line - 2;
    line[length] = '\n';
    ssize_t ignored = write(2, line, (size_t)length + 1);
    (void)ignored;
}

static int refuse(const char *what, const char *value) {
    say("bot-sandbox: the layer launcher refuses its arguments: %s%s%s", what, value ? ": " : "",
        value ? value : "");
    return -1;
}

/* ---- the argument allowlist ---- */

static int is_path(const char *text) {
    size_t length = strlen(text);
    if (length == 0 || length > MAX_PATH || text[0] != '/') return 0;
    if (length > 1 && text[length - 1] == '/') return 0;
    for (const char *at = text; *at; at++) {
        unsigned char c = (unsigned char)*at;
        if (c < 0x20 || c == 0x7f) return 0;
        if (c == '/') {  /* no empty, "." or ".." component */
            const char *next = at + 1;
            if (*next == '/') return 0;
            if (next[0] == '.' && (next[1] == '/' || next[1] == 0)) return 0;
            if (next[0] == '.' && next[1] == '.' && (next[2] == '/' || next[2] == 0)) return 0;
        }
    }
    return 1;
}

static int is_mount_path(const char *text) {
    return is_path(text) && strpbrk(text, ",:\\") == NULL;
}

static int is_name(const char *text) {
    size_t length = strlen(text);
    if (length == 0 || length > MAX_NAME) return 0;
    return strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789_-") == length;
}

static int read_number(const char *text, unsigned long long most, unsigned long long *value) {
    size_t length = strlen(text);
    if (length == 0 || length > 19 || strspn(text, "0123456789") != length) return 0;
    *value = strtoull(text, NULL, 10);
    return *value <= most;
}

static int take_option(struct plan *plan, char **argv, int *at, int argc) {
    const char *option = argv[*at];
    int values = strcmp(option, "--write-back") == 0 ? 2 : strcmp(option, "--oom-first") == 0 ? 0 : 1;
    if (*at + values >= argc) return refuse("a value is missing after", option);
    const char *value = argv[*at + 1];
    if (strcmp(option, "--write-back") == 0) {
        if (plan->python) return refuse("given twice", option);
        if (!is_path(value) || !is_path(argv[*at + 2])) return refuse("not an absolute path", option);
        plan->python = value;
        plan->script = argv[*at + 2];
    } else if (strcmp(option, "--nofile") == 0) {
        if (plan->nofile) return refuse("given twice", option);
        if (!read_number(value, MAX_NOFILE, &plan->nofile) || plan->nofile == 0)
            return refuse("not a count of descriptors", value);
    } else if (strcmp(option, "--cgroup-v1") == 0) {
        if (plan->v1_count == MAX_V1) return refuse("too many", option);
        if (!is_path(value)) return refuse("not an absolute path", value);
        plan->cgroup_v1[plan->v1_count++] = value;
    } else if (strcmp(option, "--cgroup-v2") == 0 || strcmp(option, "--track-v2") == 0) {
        const char **slot = option[2] == 'c' ? &plan->cgroup_v2 : &plan->track_v2;
        if (*slot) return refuse("given twice", option);
        if (!is_path(value)) return refuse("not an absolute path", value);
        *slot = value;
    } else if (strcmp(option, "--oom-first") == 0) {
        if (plan->oom_first) return refuse("given twice", option);
        plan->oom_first = 1;
    } else if (strcmp(option, "--done-fd") == 0 || strcmp(option, "--apply-fd") == 0) {
        int *slot = option[2] == 'd' ? &plan->done_fd : &plan->apply_fd;
        unsigned long long fd;
        if (*slot >= 0) return refuse("given twice", option);
        if (!read_number(value, MAX_FD, &fd) || fd < 3) return refuse("not a descriptor past stderr", value);
        *slot = (int)fd;
    } else {
        return refuse("unknown option", option);
    }
    *at += values + 1;
    return 0;
}

static int take_layer(struct plan *plan, char **argv, int at) {
    if (plan->layer_count == MAX_LAYERS) return refuse("too many layers", NULL);
    struct layer *layer = &plan->layers[plan->layer_count];
    layer->name = argv[at];
    layer->path = argv[at + 2];
    if (!is_name(layer->name)) return refuse("not a layer name", layer->name);
    for (int other = 0; other < plan->layer_count; other++)
        if (strcmp(plan->layers[other].name, layer->name) == 0) return refuse("a layer named twice", layer->name);
    if (!read_number(argv[at + 1], MAX_SIZE, &layer->size)) return refuse("not a layer size", argv[at + 1]);
    if (!is_mount_path(layer->path)) return refuse("not a plain absolute path", layer->path);
    if (layer->size < 4096) layer->size = 4096;  /* tmpfs reads size=0 as unlimited */
    layer->inodes = layer->size / 4096 < 1024 ? 1024 : layer->size / 4096;
    int made = snprintf(layer->scratch, sizeof layer->scratch, "%s/%d", plan->scratch, plan->layer_count);
    int upper = snprintf(layer->upper, sizeof layer->upper, "%s/%d/upper", plan->scratch, plan->layer_count);
    if (made < 0 || upper < 0 || (size_t)upper >= sizeof layer->upper) return refuse("scratch path too long", NULL);
    plan->layer_count++;
    return 0;
}

static int parse(struct plan *plan, int argc, char **argv) {
    int at = 1;
    memset(plan, 0, sizeof *plan);
    plan->done_fd = plan->apply_fd = -1;
    if (at < argc && strcmp(argv[at], "--check") == 0) plan->check_only = 1, at++;
    while (at < argc && strncmp(argv[at], "--", 2) == 0 && argv[at][2] != 0)
        if (take_option(plan, argv, &at, argc)) return -1;
    if (!plan->python) return refuse("--write-back is required", NULL);
    if (!plan->nofile) return refuse("--nofile is required", NULL);
    if (!plan->v1_count && !plan->cgroup_v2 && !plan->oom_first)
        return refuse("no cap to join: --cgroup-v1, --cgroup-v2 or --oom-first is required", NULL);
    if (plan->cgroup_v2 && plan->track_v2) return refuse("--cgroup-v2 and --track-v2 together", NULL);
    if (plan->apply_fd >= 0 && plan->done_fd < 0) return refuse("--apply-fd without --done-fd", NULL);
    if (plan->apply_fd >= 0 && plan->apply_fd == plan->done_fd) return refuse("--apply-fd is --done-fd", NULL);
    if (at >= argc || !is_mount_path(argv[at])) return refuse("SCRATCH is not a plain absolute path", argv[at]);
    plan->scratch = argv[at++];
    while (at < argc && strcmp(argv[at], "--") != 0) {
        if (at + 2 >= argc) return refuse("a layer is not NAME SIZE PATH", argv[at]);
        if (take_layer(plan, argv, at)) return -1;
        at += 3;
    }
    if (at + 1 >= argc) return refuse("no command after --", NULL);
    plan->command = argv + at + 1;
    if (!is_path(plan->command[0])) return refuse("the command is not an absolute path", plan->command[0]);
    return 0;
}

/* ---- the capped layers ---- */

static int failed(const char *what, const char *where) {
    say("bot-sandbox: cannot cap the sandbox's writable folders: %s %s: %s", what, where, strerror(errno));
    return -1;
}

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t wrote = write(fd, text, strlen(text));
    int saved = errno;
    close(fd);
    errno = saved;
    return wrote == (ssize_t)strlen(text) ? 0 : -1;
}

static int enter_namespace(void) {
    uid_t uid = geteuid();
    gid_t gid = getegid();
    char map[64];
    if (unshare(uid == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS)) return failed("unshare", "");
    if (uid != 0) {
        if (write_file("/proc/self/setgroups", "deny")) return failed("write", "/proc/self/setgroups");
        snprintf(map, sizeof map, "%u %u 1", uid, uid);
        if (write_file("/proc/self/uid_map", map)) return failed("write", "/proc/self/uid_map");
        snprintf(map, sizeof map, "%u %u 1", gid, gid);
        if (write_file("/proc/self/gid_map", map)) return failed("write", "/proc/self/gid_map");
    }
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL)) return failed("mount propagation on", "/");
    return 0;
}

static int mount_layer(struct layer *layer) {
    char options[3 * MAX_PATH + 64], work[MAX_PATH + 1];
    struct stat top;
    if (snprintf(work, sizeof work, "%s/work", layer->scratch) >= (int)sizeof work) {
        errno = ENAMETOOLONG;
        return failed("mkdir", layer->scratch);
    }
    if (mkdir(layer->scratch, 0700)) return failed("mkdir", layer->scratch);
    snprintf(options, sizeof options, "size=%llu,nr_inodes=%llu,mode=0700", layer->size, layer->inodes);
    if (mount("tmpfs", layer->scratch, "tmpfs", 0, options)) return failed("mount tmpfs on", layer->scratch);
    if (mkdir(layer->upper, 0777) || mkdir(work, 0777)) return failed("mkdir", layer->scratch);
    if (stat(layer->path, &top)) return failed("stat", layer->path);
    if (geteuid() == 0 && chown(layer->upper, top.st_uid, top.st_gid)) return failed("chown", layer->upper);
    /* the overlay's top folder takes the upper's owner and mode */
    if (chmod(layer->upper, top.st_mode & 07777)) return failed("chmod", layer->upper);
    int length = snprintf(options, sizeof options, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", layer->path,
                          layer->upper, work);
    if (length < 0 || (size_t)length >= sizeof options) {
        errno = ENAMETOOLONG;
        return failed("mount overlay on", layer->path);
    }
    if (mount("overlay", layer->path, "overlay", 0, options)) return failed("mount overlay on", layer->path);
    return 0;
}

static int is_full(const struct layer *layer) {
    struct statvfs stats;
    if (statvfs(layer->scratch, &stats)) return 0;
    unsigned long long free_bytes = (unsigned long long)stats.f_bavail * stats.f_frsize;
    unsigned long long margin = layer->size / 16 < (1ULL << 20) ? layer->size / 16 : 1ULL << 20;
    return free_bytes < margin || stats.f_favail == 0;
}

/* Whether the upper layer holds any entry: the sandbox changed something in the folder. A folder
 * that cannot be read counts as changed (the write-back then reports why). */
static int holds_changes(const struct layer *layer) {
    char buffer[4096];
    int fd = open(layer->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 1;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
        if (got <= 0) {
            close(fd);
            return got < 0;
        }
        for (long at = 0; at < got;) {
            unsigned short length;
            memcpy(&length, buffer + at + 16, sizeof length);  /* d_reclen, after d_ino and d_off */
            const char *name = buffer + at + 19;
            if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
                close(fd);
                return 1;
            }
            at += length;
        }
    }
}

/* ---- the command, in its cgroups ---- */

static void join_failed(const char *what, const char *where) {
    say("bot-sandbox: cannot %s %s: %s", what, where, strerror(errno));
    _exit(JOIN_FAILED_EXIT);
}

static void join_v2_by_pid(const char *folder, int optional) {
    char path[MAX_PATH + 32], pid[32];
    snprintf(path, sizeof path, "%s/cgroup.procs", folder);
    snprintf(pid, sizeof pid, "%d", getpid());
    if (write_file(path, pid) && !optional) join_failed("join cgroup", path);
}

/* In the child, before COMMAND runs: nothing of it runs outside its caps. */
static void child(const struct plan *plan, int born_in_v2) {
    char path[MAX_PATH + 32];
    sigset_t none;
    if (plan->cgroup_v2 && !born_in_v2) join_v2_by_pid(plan->cgroup_v2, 0);
    if (plan->track_v2 && born_in_v2 < 0) join_v2_by_pid(plan->track_v2, 1);
    for (int index = 0; index < plan->v1_count; index++) {
        snprintf(path, sizeof path, "%s/tasks", plan->cgroup_v1[index]);
        if (write_file(path, "0")) join_failed("join cgroup", path);
    }
    if (plan->oom_first && write_file("/proc/self/oom_score_adj", "1000"))
        join_failed("raise", "oom_score_adj");
    struct rlimit files = {plan->nofile, plan->nofile}, cores = {0, 0};
    if (setrlimit(RLIMIT_NOFILE, &files)) join_failed("set", "RLIMIT_NOFILE");
    if (setrlimit(RLIMIT_CORE, &cores)) join_failed("set", "RLIMIT_CORE");
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv(plan->command[0], plan->command);
    say("bot-sandbox: cannot run %s: %s", plan->command[0], strerror(errno));
    _exit(127);
}

/* Start the command; its pid, with a pidfd in *pidfd. Born in the v2 cgroup when the kernel can
 * (clone3 CLONE_INTO_CGROUP); otherwise the child joins it by pid. */
static pid_t start(const struct plan *plan, int *pidfd) {
    const char *v2 = plan->cgroup_v2 ? plan->cgroup_v2 : plan->track_v2;
    int cgroup = v2 ? open(v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    int pidfd_value = -1;
    struct clone3_args args = {.flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&pidfd_value,
                               .exit_signal = SIGCHLD};
    int born_in_v2 = 0;  /* 1: born there; 0: join by pid; -1: the kernel has no clone into a cgroup */
    if (cgroup >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)cgroup;
        born_in_v2 = 1;
    }
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0 && cgroup >= 0 && errno != ENOSYS) {  /* refused into that cgroup: join by pid, which says why */
        born_in_v2 = (errno == E2BIG || errno == EINVAL) ? -1 : 0;
        args.flags &= ~CLONE_INTO_CGROUP;
        pid = syscall(SYS_clone3, &args, sizeof args);
    }
    if (pid < 0 && errno == ENOSYS) {  /* no clone3 (or a seccomp profile refusing it): fork */
        born_in_v2 = -1;
        pid = fork();
        if (pid > 0) pidfd_value = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    }
    if (pid == 0) child(plan, born_in_v2);
    if (cgroup >= 0) close(cgroup);
    *pidfd = pidfd_value;
    return (pid_t)pid;
}

/* SCRATCH, locked shared for as long as this runs (the write-back inherits it): a sweep never
 * removes it under a live sandbox. Close-on-exec, so bubblewrap never holds it. */
static int hold_scratch(const struct plan *plan) {
    int fd = open(plan->scratch, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return failed("open", plan->scratch);
    if (flock(fd, LOCK_SH | LOCK_NB)) {
        failed("lock", plan->scratch);
        close(fd);
        return -1;
    }
    return fd;
}

static void stop(int pidfd) {
    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);  /* ESRCH once gone: nobody else */
}

#define KEPT 6
static void close_all_but(const int kept[KEPT]) {
    int keep[KEPT], from = 3;
    memcpy(keep, kept, sizeof keep);
    for (int i = 0; i < KEPT; i++)  /* sort them */
        for (int j = i + 1; j < KEPT; j++)
            if (keep[j] < keep[i]) { int swap = keep[i]; keep[i] = keep[j]; keep[j] = swap; }
    for (int i = 0; i < KEPT; i++) {
        if (keep[i] > from) syscall(SYS_close_range, from, keep[i] - 1, 0);
        if (keep[i] + 1 > from) from = keep[i] + 1;
    }
    syscall(SYS_close_range, from, ~0U, 0);
}

/* Wait for the command, stopping it when a layer stays full or SIGTERM comes; its wait status. */
static int watch(struct plan *plan, pid_t pid, int pidfd, int sigterm) {
    struct pollfd ready[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = sigterm, .events = POLLIN}};
    int status = 0;
    for (;;) {
        ready[0].revents = ready[1].revents = 0;
        int woke = poll(ready, 2, POLL_MS);
        if (woke < 0 && errno == EINTR) continue;
        if (woke < 0) break;
        if (ready[1].revents & POLLIN) {  /* SIGTERM is the bot's kill: the sandbox ends now */
            struct signalfd_siginfo info;
            ssize_t ignored = read(sigterm, &info, sizeof info);
            (void)ignored;
            stop(pidfd);
        }
        if (ready[0].revents & (POLLIN | POLLHUP)) break;
        if (woke != 0) continue;
        int any_full = 0;
        for (int index = 0; index < plan->layer_count; index++) {
            struct layer *layer = &plan->layers[index];
            layer->looks = is_full(layer) ? layer->looks + 1 : 0;
            if (layer->looks >= FULL_LOOKS) layer->full = 1;
            any_full |= layer->full;
        }
        if (any_full) stop(pidfd);  /* bubblewrap's PID namespace dies with it */
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    for (int index = 0; index < plan->layer_count; index++)
        plan->layers[index].full |= is_full(&plan->layers[index]);
    return status;
}

/* ---- after the sandbox ---- */

/* One line per layer; `error` (the write-back could not start) marks the changed ones unapplied. */
static int write_report(const struct plan *plan, const char *error) {
    char path[MAX_PATH + 16], line[MAX_NAME + 160];
    snprintf(path, sizeof path, "%s/report", plan->scratch);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    for (int index = 0; index < plan->layer_count; index++) {
        const struct layer *layer = &plan->layers[index];
        int unkept = error && layer->changed;
        int length = snprintf(line, sizeof line, "%s\t%llu\t%d\t%d\t%s\t\n", layer->name, layer->size, layer->full,
                              !unkept, unkept ? error : "");
        if (length < 0 || (size_t)length >= sizeof line || write(fd, line, (size_t)length) != length) {
            close(fd);
            return -1;
        }
    }
    return close(fd);
}

/* The Python write-back, in this mount namespace; returns only when it could not be started. */
static void write_back(const struct plan *plan, int python, int held, int status, char *reason) {
    char *argv[7 + 5 * MAX_LAYERS + 1], number[32], sizes[MAX_LAYERS][24], unmounted[MAX_LAYERS][16];
    int at = 0;
    snprintf(number, sizeof number, "%d", status);
    argv[at++] = "/proc/self/exe";  /* how the interpreter finds its own files, whatever PYTHON was */
    argv[at++] = "-I";
    argv[at++] = "-S";
    argv[at++] = (char *)plan->script;
    argv[at++] = "--apply";
    argv[at++] = number;
    argv[at++] = (char *)plan->scratch;
    for (int index = 0; index < plan->layer_count; index++) {
        const struct layer *layer = &plan->layers[index];
        snprintf(sizes[index], sizeof sizes[index], "%llu", layer->size);
        argv[at++] = (char *)layer->name;
        argv[at++] = sizes[index];
        argv[at++] = (char *)layer->path;
        argv[at++] = layer->full ? "1" : "0";
        snprintf(unmounted[index], sizeof unmounted[index], "%d", umount2(layer->path, MNT_DETACH) ? errno : 0);
        argv[at++] = unmounted[index];
    }
    argv[at] = NULL;
    sigset_t none;
    signal(SIGTERM, SIG_IGN);  /* a kill now falls during the write-back: the bot's grace covers it */
    fcntl(held, F_SETFD, 0);  /* the write-back holds SCRATCH too */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    syscall(SYS_execveat, python, "", argv, environ, AT_EMPTY_PATH);
    say("bot-sandbox: cannot start the write-back %s: %s", plan->python, strerror(errno));
    snprintf(reason, MAX_NAME + 64, "the write-back could not start: %s", strerror(errno));
}

/* The bot reads the run's output to its end: this process lets go of it (onto /dev/null, so that a
 * write-back started after never has a file it opens take a standard stream's number). */
static void close_streams(void) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int stream = 0; stream < 3; stream++)
        if (null < 0 || dup2(null, stream) < 0) close(stream);
    if (null > 2) close(null);
}

/* Offer the sandbox's changes to the bot, which applies them while this waits (no signal is read
 * here: a kill now falls during the write-back); whether it answered that it did. */
static int bot_applied(struct plan *plan, int status) {
    char offer[64 + MAX_LAYERS * 2], answer[16];
    int length = snprintf(offer, sizeof offer, "apply %d ", status);
    for (int index = 0; index < plan->layer_count; index++) offer[length++] = plan->layers[index].full ? '1' : '0';
    offer[length++] = '\n';
    close_streams();
    int offered = write(plan->done_fd, offer, (size_t)length) == length;
    close(plan->done_fd);
    plan->done_fd = -1;
    size_t heard = 0;
    while (offered && heard < sizeof answer) {
        ssize_t got = read(plan->apply_fd, answer + heard, sizeof answer - heard);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        heard += (size_t)got;
    }
    close(plan->apply_fd);
    return offered && heard == 8 && memcmp(answer, "applied\n", 8) == 0;
}

/* The run's outcome to the bot before this exits (and tears the overlays down): the wait status. */
static void tell_done(int fd, int status) {
    char line[16];
    close_streams();
    int length = snprintf(line, sizeof line, "%d\n", status);
    ssize_t ignored = write(fd, line, (size_t)length);  /* a short or failed write: the bot waits for the exit */
    (void)ignored;
    close(fd);
}

/* Die as bubblewrap died, so the bot sees the same status. */
static int exit_as(int status) {
    if (!WIFSIGNALED(status)) return WEXITSTATUS(status);
    int number = WTERMSIG(status);
    sigset_t one;
    signal(number, SIG_DFL);
    sigemptyset(&one);
    sigaddset(&one, number);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    kill(getpid(), number);
    return (256 - number) & 0xff;
}

int main(int argc, char **argv) {
    struct plan plan;
    sigset_t term;
    if (parse(&plan, argc, argv)) return USAGE_EXIT;
    if (plan.check_only) return puts("ok") == EOF;
    if (plan.done_fd >= 0 && fcntl(plan.done_fd, F_SETFD, FD_CLOEXEC))  /* never bubblewrap's */
        return failed("keep the done descriptor", "--done-fd"), LAYERS_FAILED_EXIT;
    if (plan.apply_fd >= 0 && fcntl(plan.apply_fd, F_SETFD, FD_CLOEXEC))
        return failed("keep the apply descriptor", "--apply-fd"), LAYERS_FAILED_EXIT;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);  /* read from a signalfd below: no handler runs mid-step */
    int sigterm = signalfd(-1, &term, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sigterm < 0) return failed("signalfd", ""), LAYERS_FAILED_EXIT;
    /* The bot's death is its kill too (SIGTERM, read from the signalfd): a sandbox never outlives
     * the bot that started it. A bot gone before this line leaves bubblewrap's info pipe without a
     * reader, and bubblewrap dies writing to it. */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM)) return failed("prctl", "PR_SET_PDEATHSIG"), LAYERS_FAILED_EXIT;
    int python = open(plan.python, O_PATH | O_CLOEXEC);  /* nothing runs that could not be written back */
    if (python < 0) return failed("open the write-back's interpreter", plan.python), LAYERS_FAILED_EXIT;
    int held = hold_scratch(&plan);
    if (held < 0) return LAYERS_FAILED_EXIT;
    if (enter_namespace()) return LAYERS_FAILED_EXIT;
    for (int index = 0; index < plan.layer_count; index++)
        if (mount_layer(&plan.layers[index])) return LAYERS_FAILED_EXIT;
    int pidfd;
    pid_t pid = start(&plan, &pidfd);
    if (pid < 0 || pidfd < 0) {
        say("bot-sandbox: cannot start %s: %s", plan.command[0], strerror(errno));
        if (pid > 0) kill(pid, SIGKILL), waitpid(pid, NULL, 0);  /* never seen: it cannot be another's */
        return LAYERS_FAILED_EXIT;
    }
    close_all_but((int[KEPT]){pidfd, sigterm, python, held, plan.done_fd, plan.apply_fd});  /* the sandbox's pipes are bubblewrap's alone */
    int status = watch(&plan, pid, pidfd, sigterm);
    int changed = 0;
    char reason[MAX_NAME + 64] = "";
    for (int index = 0; index < plan.layer_count; index++)
        changed |= plan.layers[index].changed = holds_changes(&plan.layers[index]);
    if (changed && plan.apply_fd >= 0 && bot_applied(&plan, status)) return exit_as(status);
    if (changed) write_back(&plan, python, held, status, reason);
    if (write_report(&plan, changed ? reason : NULL)) say("bot-sandbox: cannot write the layers' report: %s", strerror(errno));
    else if (plan.done_fd >= 0) tell_done(plan.done_fd, status);
    return exit_as(status);
}
