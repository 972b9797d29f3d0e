/*
 * Baselines of this machine, measured in plain C, against which the Java figures are read.
 * One key=value line per result on stdout.
 *
 *   anchors spawn <n>
 *       n times posix_spawn("/bin/true") and waitpid, each pair timed (CLOCK_MONOTONIC), after
 *       20 uncounted warm-up pairs:
 *         spawn.median.us=<us>  spawn.p90.us=<us>  spawn.count=<n>
 *   anchors ring <recordBytes> <seconds>
 *       a single-producer single-consumer ring between two threads of this process (1 MiB of
 *       data; each record a 4-byte length, the payload, padding to 8 bytes), records copied in
 *       and out with memcpy, after 0.2 s of uncounted warm-up:
 *         ring.<recordBytes>.records.per.second=<records consumed per second>
 *   anchors udp <seconds>
 *       1448-byte datagrams over loopback, sendto in a loop from this thread, recvfrom in another
 *       until 200 ms pass without one after the sender stops:
 *         udp.1448.received.per.second=<rate>  udp.1448.sent=<n>  udp.1448.received=<n>
 *       (the rate is the datagrams received over the time from the first receive to the last)
 *
 * Build: gcc -O2 -std=gnu11 -Wall -Wextra -pthread -o anchors anchors.c
 * A failing system call prints "anchors: <what>: <reason>" on stderr and exits 1; bad arguments
 * print the usage and exit 2.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---------------------------------------------------------------- common */

static void usage(void)
{
    fprintf(stderr, "usage: anchors spawn <n> | ring <recordBytes> <seconds> | udp <seconds>\n");
    exit(2);
}

/* Reports a failed call whose error number is err, and exits 1. */
static void fail(const char *what, int err)
{
    fprintf(stderr, "anchors: %s: %s\n", what, strerror(err));
    exit(1);
}

static double now_seconds(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) {
        fail("clock_gettime", errno);
    }
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* Parses a whole decimal integer in [min, max], or exits with the usage. */
static long parse_long(const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
        usage();
    }
    return value;
}

/* Parses a positive number of seconds (at most one hour), or exits with the usage. */
static double parse_seconds(const char *text)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value > 0 && value <= 3600)) {
        usage();
    }
    return value;
}

/* ---------------------------------------------------------------- spawn */

#define SPAWN_WARMUP 20

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* One posix_spawn of /bin/true and the waitpid for its exit; returns the time taken in us. */
static double spawn_once(void)
{
    char *argv[] = {"/bin/true", NULL};
    pid_t pid;
    int status;
    double start = now_seconds();
    int err = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
    if (err != 0) {
        fail("posix_spawn /bin/true", err);
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fail("waitpid", errno);
        }
    }
    double end = now_seconds();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "anchors: /bin/true: ended with status %d\n", status);
        exit(1);
    }
    return (end - start) * 1e6;
}

static void run_spawn(long n)
{
    double *us = malloc((size_t) n * sizeof *us);
    if (us == NULL) {
        fail("malloc", errno);
    }
    for (int i = 0; i < SPAWN_WARMUP; i++) {
        spawn_once();
    }
    for (long i = 0; i < n; i++) {
        us[i] = spawn_once();
    }
    qsort(us, (size_t) n, sizeof *us, compare_doubles);
    double median = n % 2 == 1 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
    long p90 = (long) ((n * 9 + 9) / 10) - 1; /* nearest rank: ceil(0.9 n), from 1 */
    printf("spawn.median.us=%.1f\n", median);
    printf("spawn.p90.us=%.1f\n", us[p90]);
    printf("spawn.count=%ld\n", n);
    free(us);
}

/* ---------------------------------------------------------------- ring */

#define RING_CAPACITY ((uint64_t) 1 << 20) /* data bytes, a power of two */
#define RING_MASK (RING_CAPACITY - 1)
#define RING_HEADER 4                      /* the uint32_t length before each payload */
#define RING_PADDING UINT32_MAX            /* the length of a record that fills up to the end */
#define RING_MAX_RECORD 65536
#define CHECK_EVERY 4096                   /* records between the producer's looks at the clock */

/*
 * head and tail count bytes from the start and never wrap (64 bits); a position in data is the
 * count masked by RING_MASK. Records start at multiples of 8, so a header never straddles the
 * end. A record that would not fit before the end is preceded by a padding record whose header
 * says RING_PADDING and whose extent is the rest of the buffer; the consumer skips it.
 */
struct ring {
    _Alignas(64) _Atomic uint64_t head; /* consumed up to here: written by the consumer */
    _Alignas(64) _Atomic uint64_t tail; /* produced up to here: written by the producer */
    _Alignas(64) _Atomic int stop;      /* set by the producer when the time is up */
    _Alignas(64) unsigned char *data;
    uint32_t payload;                   /* bytes of payload per record */
    uint64_t slot;                      /* bytes per record: header + payload, rounded up to 8 */
    double seconds;                     /* how long the producer runs */
    pthread_barrier_t start;            /* both threads begin together */
    double started;                     /* when the producer began */
    double finished;                    /* when the consumer saw the ring empty after the stop */
    uint64_t consumed;                  /* records the consumer took out */
};

static void *ring_producer(void *arg)
{
    struct ring *r = arg;
    unsigned char *source = malloc(r->payload);
    if (source == NULL) {
        fail("malloc", errno);
    }
    memset(source, 0x5a, r->payload);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed); /* cached */
    uint32_t length = r->payload;
    pthread_barrier_wait(&r->start);
    r->started = now_seconds();
    double deadline = r->started + r->seconds;
    for (uint64_t n = 1;; n++) {
        uint64_t offset = tail & RING_MASK;
        uint64_t to_end = RING_CAPACITY - offset;
        uint64_t pad = to_end < r->slot ? to_end : 0;
        uint64_t need = pad + r->slot;
        /* re-read the consumer's head only when the cached one says there is no room */
        while (RING_CAPACITY - (tail - head) < need) {
            head = atomic_load_explicit(&r->head, memory_order_acquire);
        }
        if (pad != 0) {
            uint32_t marker = RING_PADDING;
            memcpy(r->data + offset, &marker, RING_HEADER);
            offset = 0;
        }
        memcpy(r->data + offset, &length, RING_HEADER);
        memcpy(r->data + offset + RING_HEADER, source, r->payload);
        tail += need;
        atomic_store_explicit(&r->tail, tail, memory_order_release);
        if (n % CHECK_EVERY == 0 && now_seconds() >= deadline) {
            break;
        }
    }
    atomic_store_explicit(&r->stop, 1, memory_order_release);
    free(source);
    return NULL;
}

static void *ring_consumer(void *arg)
{
    struct ring *r = arg;
    unsigned char *target = malloc(r->payload);
    if (target == NULL) {
        fail("malloc", errno);
    }
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed); /* cached */
    uint64_t consumed = 0;
    unsigned sum = 0;
    pthread_barrier_wait(&r->start);
    for (;;) {
        /* re-read the producer's tail only when the cached one says the ring is empty */
        if (head == tail) {
            tail = atomic_load_explicit(&r->tail, memory_order_acquire);
            if (head == tail) {
                /* stop is set after the last tail, so seeing it, one more look at tail drains all */
                if (atomic_load_explicit(&r->stop, memory_order_acquire)) {
                    tail = atomic_load_explicit(&r->tail, memory_order_acquire);
                    if (head == tail) {
                        break;
                    }
                }
                continue;
            }
        }
        uint64_t offset = head & RING_MASK;
        uint32_t length;
        memcpy(&length, r->data + offset, RING_HEADER);
        if (length == RING_PADDING) {
            /* the producer published the padding and the record after it together */
            head += RING_CAPACITY - offset;
            offset = 0;
            memcpy(&length, r->data, RING_HEADER);
        }
        if (length != r->payload) {
            fprintf(stderr, "anchors: ring: record of %u bytes, expected %u\n", length, r->payload);
            exit(1);
        }
        memcpy(target, r->data + offset + RING_HEADER, length);
        sum += target[length - 1];
        head += r->slot;
        atomic_store_explicit(&r->head, head, memory_order_release);
        consumed++;
    }
    r->finished = now_seconds();
    r->consumed = consumed;
    if (sum != (unsigned) (consumed * 0x5a)) {
        fprintf(stderr, "anchors: ring: payload bytes changed in transit\n");
        exit(1);
    }
    free(target);
    return NULL;
}

/* Runs producer and consumer on a fresh ring for the given time; returns records per second. */
static double ring_phase(uint32_t payload, double seconds)
{
    static struct ring r; /* static: aligned, and too large for comfort on the stack */
    int err;
    if (r.data == NULL) {
        r.data = aligned_alloc(64, RING_CAPACITY);
        if (r.data == NULL) {
            fail("aligned_alloc", errno);
        }
        memset(r.data, 0, RING_CAPACITY); /* touch every page before the clock runs */
    }
    atomic_store(&r.head, 0);
    atomic_store(&r.tail, 0);
    atomic_store(&r.stop, 0);
    r.payload = payload;
    r.slot = (RING_HEADER + (uint64_t) payload + 7) & ~(uint64_t) 7;
    r.seconds = seconds;
    if ((err = pthread_barrier_init(&r.start, NULL, 2)) != 0) {
        fail("pthread_barrier_init", err);
    }
    pthread_t producer, consumer;
    if ((err = pthread_create(&consumer, NULL, ring_consumer, &r)) != 0) {
        fail("pthread_create", err);
    }
    if ((err = pthread_create(&producer, NULL, ring_producer, &r)) != 0) {
        fail("pthread_create", err);
    }
    if ((err = pthread_join(producer, NULL)) != 0 || (err = pthread_join(consumer, NULL)) != 0) {
        fail("pthread_join", err);
    }
    pthread_barrier_destroy(&r.start);
    return (double) r.consumed / (r.finished - r.started);
}

static void run_ring(uint32_t payload, double seconds)
{
    ring_phase(payload, 0.2); /* warm-up, not counted */
    double rate = ring_phase(payload, seconds);
    printf("ring.%u.records.per.second=%.0f\n", payload, rate);
}

/* ---------------------------------------------------------------- udp */

#define UDP_PAYLOAD 1448
#define UDP_RCVBUF (4 << 20)

struct receiver {
    int fd;
    _Atomic int sender_done;
    uint64_t received;
    double first, last; /* times of the first and the last datagram received */
};

static void *udp_receive(void *arg)
{
    struct receiver *rx = arg;
    char buffer[2048];
    for (;;) {
        ssize_t got = recvfrom(rx->fd, buffer, sizeof buffer, 0, NULL, NULL);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                fail("recvfrom", errno);
            }
            /* 200 ms without a datagram: the end once the sender has stopped */
            if (atomic_load(&rx->sender_done)) {
                break;
            }
            continue;
        }
        double t = now_seconds();
        if (rx->received == 0) {
            rx->first = t;
        }
        rx->last = t;
        rx->received++;
    }
    return NULL;
}

static void run_udp(double seconds)
{
    struct receiver rx = {0};
    struct sockaddr_in address = {0};
    socklen_t length = sizeof address;
    int size = UDP_RCVBUF;
    struct timeval timeout = {.tv_sec = 0, .tv_usec = 200000};
    int err;

    rx.fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (rx.fd < 0) {
        fail("socket", errno);
    }
    if (setsockopt(rx.fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size) != 0) {
        fail("setsockopt SO_RCVBUF", errno);
    }
    if (setsockopt(rx.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0) {
        fail("setsockopt SO_RCVTIMEO", errno);
    }
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0; /* ephemeral */
    if (bind(rx.fd, (struct sockaddr *) &address, sizeof address) != 0) {
        fail("bind", errno);
    }
    if (getsockname(rx.fd, (struct sockaddr *) &address, &length) != 0) {
        fail("getsockname", errno);
    }
    pthread_t receiver;
    if ((err = pthread_create(&receiver, NULL, udp_receive, &rx)) != 0) {
        fail("pthread_create", err);
    }

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        fail("socket", errno);
    }
    char payload[UDP_PAYLOAD];
    memset(payload, 0x5a, sizeof payload);
    uint64_t sent = 0;
    double deadline = now_seconds() + seconds;
    for (;;) {
        ssize_t put = sendto(fd, payload, sizeof payload, 0, (struct sockaddr *) &address, sizeof address);
        if (put < 0) {
            /* ENOBUFS: the kernel dropped it on the way; neither is a reason to stop */
            if (errno != EINTR && errno != ENOBUFS) {
                fail("sendto", errno);
            }
        } else {
            sent++;
        }
        if (sent % 16 == 0 && now_seconds() >= deadline) {
            break;
        }
    }
    atomic_store(&rx.sender_done, 1);
    if ((err = pthread_join(receiver, NULL)) != 0) {
        fail("pthread_join", err);
    }
    close(fd);
    close(rx.fd);

    double rate = rx.received > 1 ? (double) rx.received / (rx.last - rx.first) : 0;
    printf("udp.%d.received.per.second=%.0f\n", UDP_PAYLOAD, rate);
    printf("udp.%d.sent=%llu\n", UDP_PAYLOAD, (unsigned long long) sent);
    printf("udp.%d.received=%llu\n", UDP_PAYLOAD, (unsigned long long) rx.received);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "spawn") == 0) {
        run_spawn(parse_long(argv[2], 1, 10000000));
    } else if (argc == 4 && strcmp(argv[1], "ring") == 0) {
        run_ring((uint32_t) parse_long(argv[2], 1, RING_MAX_RECORD), parse_seconds(argv[3]));
    } else if (argc == 3 && strcmp(argv[1], "udp") == 0) {
        run_udp(parse_seconds(argv[2]));
    } else {
        usage();
    }
    if (fflush(stdout) != 0) {
        fail("stdout", errno);
    }
    return 0;
}
