#!/usr/bin/env python3
"""Reorders UDP datagrams: reads packets from an NFQUEUE, holds some of them for a random delay
and accepts the others at once, so later packets overtake the held ones. Runs a command and
serves the queue until the command ends, then prints what it did and exits with the command's
status.

    nfqueue-reorder.py QUEUE HOLD_PERCENT MAX_DELAY_MS -- COMMAND ARG...
    nfqueue-reorder.py --probe QUEUE

Packets reach the queue by a rule such as
    iptables -A INPUT -p udp -j NFQUEUE --queue-num QUEUE --queue-bypass

The last line printed is
    nfqueue: packets P held H late L flows F
where "late" counts packets accepted after a packet of the same UDP flow (source port,
destination port) that entered the queue after them: the receiver sees them out of order.

Needs libnetfilter_queue.so.1 (Debian: libnetfilter-queue1). Exit status 2: the library is
missing; 3: the kernel refused the queue (no nfnetlink_queue); otherwise the command's status.
"""
import ctypes
import heapq
import os
import random
import select
import socket
import subprocess
import sys
import time

NF_ACCEPT = 1
NFQNL_COPY_PACKET = 2
NFQA_CFG_F_FAIL_OPEN = 1
COPY_BYTES = 64
SO_RCVBUFFORCE = 33


def load_library():
    try:
        lib = ctypes.CDLL("libnetfilter_queue.so.1", use_errno=True)
    except OSError as e:
        print("nfqueue: libnetfilter_queue.so.1 cannot be loaded (install libnetfilter-queue1): %s" % e,
              file=sys.stderr, flush=True)
        sys.exit(2)
    vp = ctypes.c_void_p
    lib.nfq_open.restype = vp
    lib.nfq_open.argtypes = []
    lib.nfq_close.argtypes = [vp]
    lib.nfq_create_queue.restype = vp
    lib.nfq_create_queue.argtypes = [vp, ctypes.c_uint16, vp, vp]
    lib.nfq_destroy_queue.argtypes = [vp]
    lib.nfq_set_mode.argtypes = [vp, ctypes.c_uint8, ctypes.c_uint32]
    lib.nfq_set_queue_maxlen.argtypes = [vp, ctypes.c_uint32]
    lib.nfq_set_queue_flags.argtypes = [vp, ctypes.c_uint32, ctypes.c_uint32]
    lib.nfq_fd.argtypes = [vp]
    lib.nfq_handle_packet.argtypes = [vp, ctypes.c_char_p, ctypes.c_int]
    lib.nfq_get_msg_packet_hdr.restype = vp
    lib.nfq_get_msg_packet_hdr.argtypes = [vp]
    lib.nfq_get_payload.argtypes = [vp, ctypes.POINTER(ctypes.c_void_p)]
    lib.nfq_set_verdict.argtypes = [vp, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, vp]
    return lib


CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class Reorderer:
    def __init__(self, lib, queue, hold, max_delay):
        self.lib = lib
        self.hold = hold
        self.max_delay = max_delay
        self.held = []            # heap of (due, arrival, packet id, flow, index in flow)
        self.arrivals = 0
        self.packets = 0
        self.held_count = 0
        self.late = 0
        self.next_index = {}      # flow -> index of its next packet
        self.max_accepted = {}    # flow -> highest index accepted
        self.random = random.Random()
        self.callback = CALLBACK(self.on_packet)
        self.handle = lib.nfq_open()
        if not self.handle:
            raise OSError(ctypes.get_errno(), "nfq_open failed")
        self.queue = lib.nfq_create_queue(self.handle, queue, self.callback, None)
        if not self.queue:
            err = ctypes.get_errno()
            lib.nfq_close(self.handle)
            raise OSError(err, "nfq_create_queue %d failed" % queue)
        lib.nfq_set_mode(self.queue, NFQNL_COPY_PACKET, COPY_BYTES)
        lib.nfq_set_queue_maxlen(self.queue, 65536)
        # a full queue accepts rather than drops: the loss comes from the nft rules alone
        lib.nfq_set_queue_flags(self.queue, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN)
        self.fd = lib.nfq_fd(self.handle)
        self.sock = socket.socket(fileno=os.dup(self.fd))
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        self.sock.setblocking(False)
        self.buffer = ctypes.create_string_buffer(65536)

    @staticmethod
    def flow_of(packet):
        if len(packet) < 20 or packet[0] >> 4 != 4:
            return None
        ihl = (packet[0] & 0x0F) * 4
        if packet[9] != 17 or len(packet) < ihl + 4:
            return None
        return (packet[ihl] << 8 | packet[ihl + 1], packet[ihl + 2] << 8 | packet[ihl + 3])

    def on_packet(self, qh, nfmsg, nfad, data):
        header = self.lib.nfq_get_msg_packet_hdr(nfad)
        packet_id = int.from_bytes(ctypes.string_at(header, 4), "big")
        pointer = ctypes.c_void_p()
        length = self.lib.nfq_get_payload(nfad, ctypes.byref(pointer))
        packet = ctypes.string_at(pointer, length) if length > 0 and pointer.value else b""
        flow = self.flow_of(packet)
        index = self.next_index.get(flow, 0)
        self.next_index[flow] = index + 1
        self.packets += 1
        self.arrivals += 1
        if self.random.random() * 100 < self.hold:
            self.held_count += 1
            due = time.monotonic() + self.random.uniform(0.0005, self.max_delay)
            heapq.heappush(self.held, (due, self.arrivals, packet_id, flow, index))
        else:
            self.accept(packet_id, flow, index)
        return 0

    def accept(self, packet_id, flow, index):
        if index < self.max_accepted.get(flow, -1):
            self.late += 1
        else:
            self.max_accepted[flow] = index
        self.lib.nfq_set_verdict(self.queue, packet_id, NF_ACCEPT, 0, None)

    def release_due(self, now):
        while self.held and self.held[0][0] <= now:
            _, _, packet_id, flow, index = heapq.heappop(self.held)
            self.accept(packet_id, flow, index)

    def serve_once(self, limit):
        now = time.monotonic()
        self.release_due(now)
        timeout = limit if not self.held else max(0.0, min(limit, self.held[0][0] - now))
        readable, _, _ = select.select([self.sock], [], [], timeout)
        if not readable:
            return
        for _ in range(256):
            try:
                n = self.sock.recv_into(self.buffer)
            except BlockingIOError:
                return
            except OSError:
                # ENOBUFS: the kernel dropped queue messages; their packets are lost like any other
                return
            if n <= 0:
                return
            self.lib.nfq_handle_packet(self.handle, self.buffer, n)
            self.release_due(time.monotonic())

    def close(self):
        while self.held:
            _, _, packet_id, flow, index = heapq.heappop(self.held)
            self.accept(packet_id, flow, index)
        self.lib.nfq_destroy_queue(self.queue)
        self.lib.nfq_close(self.handle)
        self.sock.close()


def open_queue(lib, queue, hold, max_delay):
    try:
        return Reorderer(lib, queue, hold, max_delay)
    except OSError as e:
        print("nfqueue: the kernel refused NFQUEUE %d: %s" % (queue, e), file=sys.stderr, flush=True)
        sys.exit(3)


def main(argv):
    if len(argv) == 3 and argv[1] == "--probe":
        open_queue(load_library(), int(argv[2]), 0, 0.001).close()
        print("nfqueue: queue %s can be bound" % argv[2], flush=True)
        return 0
    if len(argv) < 6 or argv[4] != "--":
        print(__doc__, file=sys.stderr)
        return 64
    queue, hold, max_delay = int(argv[1]), float(argv[2]), float(argv[3]) / 1000.0
    reorderer = open_queue(load_library(), queue, hold, max_delay)
    child = subprocess.Popen(argv[5:])
    try:
        while child.poll() is None:
            reorderer.serve_once(0.05)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        reorderer.close()
    print("nfqueue: packets %d held %d late %d flows %d"
          % (reorderer.packets, reorderer.held_count, reorderer.late, len(reorderer.next_index)), flush=True)
    return child.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
