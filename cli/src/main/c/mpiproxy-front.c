/*
 * mpiproxy-front: the thin front of `mpiproxy run` (docs/protocol-v2.md 4.4).
 *
 *   mpiproxy-front COLD-COMMAND... -- ARGS...
 *
 * Hands the job (ARGS, the environment, the working directory) to the node's proxy over its
 * local socket ($MPIPROXY_SOCKET, else /run/mpiproxy/proxy.sock), where the launcher runs in a
 * JVM that is already warm; relays SIGINT and SIGTERM to it, writes its output to fd 1 and 2 and
 * exits with its exit status. When there is no socket, or the proxy refuses the run or does not
 * know RUN, it executes COLD-COMMAND ARGS... instead (the standalone launcher): the job runs
 * either way. $MPIPROXY_COLD=1 always runs cold; $MPIPROXY_FRONT_DEBUG=1 says why it did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/mpiproxy/proxy.sock"
#define MAX_BODY (1u << 20)

extern char **environ;

static char **cold_argv;
static int debug;
static volatile sig_atomic_t caught[2]; /* SIGINT, SIGTERM not yet relayed */
static sigset_t original_mask;

static void on_signal(int signo)
{
    caught[signo == SIGINT ? 0 : 1]++;
}

/* Runs the standalone launcher: COLD-COMMAND ARGS..., as if the front were not there. */
static void run_cold(const char *why)
{
    if (debug && why != NULL) {
        fprintf(stderr, "mpiproxy-front: running cold: %s\n", why);
    }
    struct sigaction current;
    int caught_here[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        if (sigaction(caught_here[i], NULL, &current) == 0 && current.sa_handler == on_signal) {
            signal(caught_here[i], SIG_DFL);
        }
    }
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &original_mask, NULL);
    execvp(cold_argv[0], cold_argv);
    fprintf(stderr, "mpiproxy: cannot start %s: %s\n", cold_argv[0], strerror(errno));
    exit(127);
}

/* Writes all of buf; 0 on success, -1 with errno. */
static int write_all(int fd, const void *buf, size_t len, int sock)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

static int send_frame(int sock, char type, const void *body, size_t len)
{
    unsigned char header[5] = {(unsigned char) type, len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff,
                               (len >> 24) & 0xff};
    if (write_all(sock, header, sizeof header, 1) < 0) {
        return -1;
    }
    return len == 0 ? 0 : write_all(sock, body, len, 1);
}

/* Reads exactly len bytes; 1 on success, 0 at the end of the stream before any, -1 otherwise. */
static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return got == 0 && n == 0 ? 0 : -1;
        }
        got += (size_t) n;
    }
    return 1;
}

/* Sends the SIGNAL frames of the signals caught since the last call. */
static void relay_signals(int sock)
{
    for (int i = 0; i < 2; i++) {
        while (caught[i] > 0) {
            unsigned char signo = i == 0 ? 2 : 15;
            caught[i]--;
            send_frame(sock, 's', &signo, 1); /* a proxy gone shows as the end of the stream */
        }
    }
}

/* Hands the job over; 0 on success, -1 (run cold) otherwise. */
static int send_job(int sock, int argc, char **argv)
{
    char number[32];
    char *cwd = getcwd(NULL, 0);
    if (cwd == NULL || write_all(sock, "RUN 1\n", 6, 1) < 0) {
        free(cwd);
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        if (send_frame(sock, 'a', argv[i], strlen(argv[i])) < 0) {
            free(cwd);
            return -1;
        }
    }
    for (char **e = environ; *e != NULL; e++) {
        if (strchr(*e, '=') != NULL && send_frame(sock, 'e', *e, strlen(*e)) < 0) {
            free(cwd);
            return -1;
        }
    }
    int failed = send_frame(sock, 'c', cwd, strlen(cwd));
    free(cwd);
    snprintf(number, sizeof number, "%ld", (long) getpid());
    if (failed < 0 || send_frame(sock, 'p', number, strlen(number)) < 0 || send_frame(sock, 'g', "", 0) < 0) {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int dashes = 1;
    while (dashes < argc && strcmp(argv[dashes], "--") != 0) {
        dashes++;
    }
    if (dashes == 1 || dashes >= argc) {
        fprintf(stderr, "usage: mpiproxy-front COLD-COMMAND... -- ARGS...\n");
        return 2;
    }
    cold_argv = argv + 1;
    char **args = argv + dashes + 1;
    int nargs = argc - dashes - 1;
    /* the cold command gets the same arguments: shift them over the "--" */
    for (int i = 0; i <= nargs; i++) {
        argv[dashes + i] = args[i];
    }
    args = argv + dashes;
    debug = getenv("MPIPROXY_FRONT_DEBUG") != NULL && strcmp(getenv("MPIPROXY_FRONT_DEBUG"), "1") == 0;
    sigprocmask(SIG_SETMASK, NULL, &original_mask);
    const char *cold = getenv("MPIPROXY_COLD");
    if (cold != NULL && strcmp(cold, "1") == 0) {
        run_cold("MPIPROXY_COLD=1");
    }
    if (nargs == 0 || strcmp(args[0], "run") != 0) {
        run_cold(NULL); /* only run is handed over */
    }
    /* rank 0 reads the launcher's standard input, which the warm path does not carry: data piped
       or redirected in (not a terminal, not /dev/null) goes to the standalone launcher */
    struct stat in;
    if (fstat(0, &in) == 0 && (S_ISFIFO(in.st_mode) || S_ISREG(in.st_mode) || S_ISSOCK(in.st_mode))) {
        run_cold("standard input is a pipe or a file, for rank 0");
    }

    const char *path = getenv("MPIPROXY_SOCKET");
    if (path == NULL || path[0] == '\0') {
        path = DEFAULT_SOCKET;
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address.sun_path) {
        run_cold("the socket's path is too long");
    }
    strcpy(address.sun_path, path);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *) &address, sizeof address) < 0) {
        run_cold(strerror(errno));
    }

    /* signals wait until the run can take them: delivered only inside ppoll below */
    sigset_t relayed;
    sigemptyset(&relayed);
    sigaddset(&relayed, SIGINT);
    sigaddset(&relayed, SIGTERM);
    sigprocmask(SIG_BLOCK, &relayed, NULL);
    struct sigaction action = {.sa_handler = on_signal}, before;
    sigemptyset(&action.sa_mask);
    int signals[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        /* one ignored when started (a background job's SIGINT) stays ignored, as for the launcher */
        if (sigaction(signals[i], NULL, &before) == 0 && before.sa_handler != SIG_IGN) {
            sigaction(signals[i], &action, NULL);
        }
    }

    /* a proxy that does not know RUN answers one line and closes: what it said is read below */
    int sent = send_job(sock, nargs, args) == 0;
    int frames = 0;
    sigset_t waiting;
    sigprocmask(SIG_SETMASK, NULL, &waiting);
    sigdelset(&waiting, SIGINT);
    sigdelset(&waiting, SIGTERM);
    signal(SIGPIPE, SIG_IGN); /* as the standalone launcher: a closed output drops the output only */
    for (;;) {
        struct pollfd fd = {.fd = sock, .events = POLLIN};
        int ready = ppoll(&fd, 1, NULL, &waiting);
        if (sent) {
            relay_signals(sock);
        }
        if (ready < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("mpiproxy: poll");
            return 1;
        }
        unsigned char header[5];
        int r = read_all(sock, header, sizeof header);
        if (r <= 0) {
            if (frames == 0) {
                run_cold(sent ? "the proxy closed the connection" : "the proxy did not take the job");
            }
            fprintf(stderr, "mpiproxy: the proxy ended the run without its exit status\n");
            return 1;
        }
        uint32_t len = header[1] | (uint32_t) header[2] << 8 | (uint32_t) header[3] << 16
                       | (uint32_t) header[4] << 24;
        char type = (char) header[0];
        if ((type != 'o' && type != 'r' && type != 'x' && type != 'f') || len > MAX_BODY) {
            if (frames == 0) {
                run_cold("the proxy does not know RUN");
            }
            fprintf(stderr, "mpiproxy: the proxy sent a bad frame\n");
            return 1;
        }
        char *body = malloc(len + 1);
        if (body == NULL || read_all(sock, body, len) <= 0) {
            fprintf(stderr, "mpiproxy: the proxy ended the run within a frame\n");
            return 1;
        }
        body[len] = '\0';
        frames++;
        if (type == 'o' || type == 'r') {
            write_all(type == 'o' ? 1 : 2, body, len, 0);
        } else if (type == 'x') {
            return len == 1 ? (unsigned char) body[0] : 1;
        } else if (frames == 1) {
            run_cold(body); /* nothing ran */
        } else {
            fprintf(stderr, "mpiproxy: %s\n", body);
            return 1;
        }
        free(body);
    }
}
