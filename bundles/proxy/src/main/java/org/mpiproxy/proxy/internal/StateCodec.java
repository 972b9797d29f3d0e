package org.mpiproxy.proxy.internal;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes and reads the plain values of a hand-over ({@link ProtocolFront#handOver()}) as a small
 * tagged binary format, for the state that outlives the JVM ({@link NodeRestart}). It knows maps,
 * lists, arrays and the JDK value types jobs are made of; anything else (process and channel
 * handles, futures, functions, the PMI server) is left out and its key named in {@link #dropped()}.
 * No class is ever loaded by name, so a state file cannot make the reader run code, and no array
 * or collection is made larger than the bytes left in the input could fill (a damaged length
 * field is an {@link IOException}, not an allocation of gigabytes). Not thread-safe.
 */
final class StateCodec {

    private static final byte NULL = 0;
    private static final byte STRING = 1;
    private static final byte LONG = 2;
    private static final byte INT = 3;
    private static final byte BOOLEAN = 4;
    private static final byte DOUBLE = 5;
    private static final byte BYTES = 6;
    private static final byte LONGS = 7;
    private static final byte INTS = 8;
    private static final byte OBJECTS = 9;
    private static final byte LIST = 10;
    private static final byte MAP = 11;
    private static final byte INSTANT = 12;
    private static final byte PATH = 13;
    private static final byte SOCKET = 14;
    private static final byte SHORT = 15;
    private static final byte SET = 16;
    private static final byte RANK_INFO = 17;
    private static final byte JOB_INFO = 18;
    private static final byte BOOLEANS = 19;
    /** Deepest nesting read; deeper is a damaged file. */
    private static final int MAX_DEPTH = 64;
    /** Longest array or collection read. */
    private static final int MAX_LENGTH = 64 << 20;

    private final Set<String> dropped = new java.util.TreeSet<>();
    /** While reading: the input, counting what is left of it. */
    private Remaining input;

    /** @return the keys whose values could not be written */
    Set<String> dropped() {
        return dropped;
    }

    /** @return whether {@link #write} keeps {@code value} */
    static boolean writable(Object value) {
        return value == null || value instanceof String || value instanceof Long || value instanceof Integer
                || value instanceof Short || value instanceof Boolean || value instanceof Double
                || value instanceof byte[] || value instanceof long[] || value instanceof int[]
                || value instanceof boolean[]
                || value instanceof Object[] || value instanceof List || value instanceof Set || value instanceof Map
                || value instanceof Instant || value instanceof Path || value instanceof InetSocketAddress
                || value instanceof org.mpiproxy.api.RankInfo || value instanceof org.mpiproxy.api.JobInfo;
    }

    void write(DataOutputStream out, Object value, String key) throws IOException {
        if (!writable(value)) {
            dropped.add(key + " (" + value.getClass().getSimpleName() + ")");
            out.writeByte(NULL);
        } else if (value == null) {
            out.writeByte(NULL);
        } else if (value instanceof String s) {
            out.writeByte(STRING);
            writeString(out, s);
        } else if (value instanceof Long l) {
            out.writeByte(LONG);
            out.writeLong(l);
        } else if (value instanceof Integer i) {
            out.writeByte(INT);
            out.writeInt(i);
        } else if (value instanceof Short s) {
            out.writeByte(SHORT);
            out.writeShort(s);
        } else if (value instanceof Boolean b) {
            out.writeByte(BOOLEAN);
            out.writeBoolean(b);
        } else if (value instanceof Double d) {
            out.writeByte(DOUBLE);
            out.writeDouble(d);
        } else if (value instanceof byte[] bytes) {
            out.writeByte(BYTES);
            out.writeInt(bytes.length);
            out.write(bytes);
        } else if (value instanceof long[] longs) {
            out.writeByte(LONGS);
            out.writeInt(longs.length);
            for (long l : longs) {
                out.writeLong(l);
            }
        } else if (value instanceof int[] ints) {
            out.writeByte(INTS);
            out.writeInt(ints.length);
            for (int i : ints) {
                out.writeInt(i);
            }
        } else if (value instanceof boolean[] flags) {
            out.writeByte(BOOLEANS);
            out.writeInt(flags.length);
            for (boolean f : flags) {
                out.writeBoolean(f);
            }
        } else if (value instanceof Object[] objects) {
            out.writeByte(OBJECTS);
            out.writeInt(objects.length);
            for (Object o : objects) {
                write(out, o, key + "[]");
            }
        } else if (value instanceof List<?> list) {
            out.writeByte(LIST);
            out.writeInt(list.size());
            for (Object o : list) {
                write(out, o, key + "[]");
            }
        } else if (value instanceof Set<?> set) {
            out.writeByte(SET);
            out.writeInt(set.size());
            for (Object o : set) {
                write(out, o, key + "[]");
            }
        } else if (value instanceof Map<?, ?> map) {
            List<Map.Entry<?, ?>> kept = new ArrayList<>();
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (writable(e.getKey()) && writable(e.getValue())) {
                    kept.add(e);
                } else {
                    dropped.add(key + "." + e.getKey()
                            + (e.getValue() == null ? "" : " (" + e.getValue().getClass().getSimpleName() + ")"));
                }
            }
            out.writeByte(MAP);
            out.writeInt(kept.size());
            for (Map.Entry<?, ?> e : kept) {
                write(out, e.getKey(), key);
                write(out, e.getValue(), key + "." + e.getKey());
            }
        } else if (value instanceof Instant t) {
            out.writeByte(INSTANT);
            out.writeLong(t.getEpochSecond());
            out.writeInt(t.getNano());
        } else if (value instanceof Path p) {
            out.writeByte(PATH);
            writeString(out, p.toString());
        } else if (value instanceof org.mpiproxy.api.RankInfo r) {
            out.writeByte(RANK_INFO);
            out.writeInt(r.rankId());
            out.writeInt(r.coreId());
            writeString(out, r.program());
            out.writeLong(r.pid());
            writeString(out, r.state().name());
            out.writeInt(r.exitStatus());
            out.writeLong(r.bytesIn());
            out.writeLong(r.bytesOut());
            out.writeLong(r.held());
            out.writeLong(r.dropped());
        } else if (value instanceof org.mpiproxy.api.JobInfo j) {
            out.writeByte(JOB_INFO);
            out.writeLong(j.jobId());
            writeString(out, j.protocol());
            writeString(out, j.owner());
            write(out, j.started(), key);
            write(out, new ArrayList<>(j.ranks()), key);
        } else {
            InetSocketAddress a = (InetSocketAddress) value;
            out.writeByte(SOCKET);
            byte[] address = a.getAddress() == null ? new byte[0] : a.getAddress().getAddress();
            out.writeByte(address.length);
            out.write(address);
            out.writeInt(a.getPort());
        }
    }

    /** Reads one value from an input of unknown length: lengths are checked against {@link #MAX_LENGTH} only. */
    Object read(DataInputStream in) throws IOException {
        return read(in, Long.MAX_VALUE);
    }

    /**
     * Reads one value.
     *
     * @param in   the input
     * @param size how many bytes the input holds: no length read may ask for more than what is left
     * @return the value
     * @throws IOException when the input ends early or is damaged, naming what is wrong
     */
    Object read(InputStream in, long size) throws IOException {
        input = new Remaining(in, size);
        try {
            return read(new DataInputStream(input), 0);
        } finally {
            input = null;
        }
    }

    private Object read(DataInputStream in, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IOException("state nested deeper than " + MAX_DEPTH);
        }
        byte tag = in.readByte();
        switch (tag) {
            case NULL:
                return null;
            case STRING:
                return readString(in);
            case LONG:
                return in.readLong();
            case INT:
                return in.readInt();
            case SHORT:
                return in.readShort();
            case BOOLEAN:
                return in.readBoolean();
            case DOUBLE:
                return in.readDouble();
            case BYTES: {
                byte[] bytes = new byte[length(in, 1, "byte array")];
                in.readFully(bytes);
                return bytes;
            }
            case LONGS: {
                long[] longs = new long[length(in, Long.BYTES, "long array")];
                for (int i = 0; i < longs.length; i++) {
                    longs[i] = in.readLong();
                }
                return longs;
            }
            case INTS: {
                int[] ints = new int[length(in, Integer.BYTES, "int array")];
                for (int i = 0; i < ints.length; i++) {
                    ints[i] = in.readInt();
                }
                return ints;
            }
            case BOOLEANS: {
                boolean[] flags = new boolean[length(in, 1, "boolean array")];
                for (int i = 0; i < flags.length; i++) {
                    flags[i] = in.readBoolean();
                }
                return flags;
            }
            case OBJECTS: {
                Object[] objects = new Object[length(in, 1, "array")];
                for (int i = 0; i < objects.length; i++) {
                    objects[i] = read(in, depth + 1);
                }
                return objects;
            }
            case LIST: {
                int n = length(in, 1, "list");
                List<Object> list = new ArrayList<>(Math.min(n, 1024));
                for (int i = 0; i < n; i++) {
                    list.add(read(in, depth + 1));
                }
                return list;
            }
            case SET: {
                int n = length(in, 1, "set");
                Set<Object> set = new java.util.LinkedHashSet<>();
                for (int i = 0; i < n; i++) {
                    set.add(read(in, depth + 1));
                }
                return set;
            }
            case MAP: {
                int n = length(in, 2, "map");
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    Object key = read(in, depth + 1);
                    map.put(key, read(in, depth + 1));
                }
                return map;
            }
            case INSTANT:
                return Instant.ofEpochSecond(in.readLong(), in.readInt());
            case PATH:
                return Path.of(readString(in));
            case RANK_INFO:
                try {
                    return new org.mpiproxy.api.RankInfo(in.readInt(), in.readInt(), readString(in), in.readLong(),
                            org.mpiproxy.api.RankInfo.State.valueOf(readString(in)), in.readInt(), in.readLong(),
                            in.readLong(), in.readLong(), in.readLong());
                } catch (IllegalArgumentException e) {
                    throw new IOException("a rank's state is not known: " + e.getMessage(), e);
                }
            case JOB_INFO: {
                long jobId = in.readLong();
                String protocol = readString(in);
                String owner = readString(in);
                Object started = read(in, depth + 1);
                Object ranks = read(in, depth + 1);
                if (!(started instanceof Instant) || !(ranks instanceof List<?> list)
                        || !list.stream().allMatch(r -> r instanceof org.mpiproxy.api.RankInfo)) {
                    throw new IOException("a finished job's record is damaged");
                }
                @SuppressWarnings("unchecked")
                List<org.mpiproxy.api.RankInfo> infos = (List<org.mpiproxy.api.RankInfo>) list;
                return new org.mpiproxy.api.JobInfo(jobId, protocol, owner, (Instant) started, infos);
            }
            case SOCKET: {
                byte[] address = new byte[in.readUnsignedByte()];
                if (address.length != 0 && address.length != 4 && address.length != 16) {
                    throw new IOException("an address of " + address.length + " bytes");
                }
                in.readFully(address);
                int port = in.readInt();
                return address.length == 0 ? InetSocketAddress.createUnresolved("", port)
                        : new InetSocketAddress(InetAddress.getByAddress(address), port);
            }
            default:
                throw new IOException("unknown value tag " + tag);
        }
    }

    /**
     * @param unit the fewest bytes each element takes in the input
     * @param what what the length is of, for the message
     * @return a length read, checked before anything is made that size
     */
    private int length(DataInputStream in, int unit, String what) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_LENGTH) {
            throw new IOException("length " + n + " of a " + what + " out of range");
        }
        long left = input != null ? input.left : Long.MAX_VALUE;
        if ((long) n * unit > left) {
            throw new IOException("length " + n + " of a " + what + " needs " + (long) n * unit + " bytes, but only "
                    + left + " are left");
        }
        return n;
    }

    private static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    private String readString(DataInputStream in) throws IOException {
        byte[] bytes = new byte[length(in, 1, "string")];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** An input that counts the bytes left of the size it was said to have. */
    private static final class Remaining extends FilterInputStream {

        long left;

        Remaining(InputStream in, long size) {
            super(in);
            this.left = size;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                left--;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                left -= n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(n);
            left -= Math.max(0, skipped);
            return skipped;
        }
    }
}
