package org.mpiproxy.process;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

/**
 * The numeric ids of user and group names, as the C library's user database gives them
 * ({@code getpwnam_r}, {@code getgrnam_r} through JNA, so every name service the node is set up
 * with answers). The JDK names a Unix socket's peer ({@code SO_PEERCRED}) by user and group
 * name, and by the number itself when the database has no entry: a name of digits only is that
 * number. Stateless and thread-safe.
 */
public final class UnixIds {

    /** The largest id: {@code uid_t} and {@code gid_t} are unsigned 32-bit numbers. */
    public static final long MAX_ID = 0xFFFF_FFFFL;
    /** glibc's {@code ERANGE}: the buffer is too small for the entry. */
    private static final int ERANGE = 34;
    /** glibc's {@code EINTR}. */
    private static final int EINTR = 4;
    /** The first buffer for an entry's strings; doubled while too small. */
    private static final int FIRST_BUFFER_BYTES = 1024;
    /** An entry larger than this is refused (a group with a very long member list). */
    private static final int MAX_BUFFER_BYTES = 1 << 22;
    /** Room for {@code struct passwd} (48 bytes on 64-bit Linux) and {@code struct group} (32). */
    private static final int ENTRY_BYTES = 64;

    /** The C library's functions this class calls. */
    interface LibC extends Library {
        int getpwnam_r(String name, Pointer entry, Pointer buffer, long size, PointerByReference result);

        int getgrnam_r(String name, Pointer entry, Pointer buffer, long size, PointerByReference result);

        String strerror(int error);
    }

    /** The C library, or why it cannot be called. */
    private static final class Holder {
        static final LibC LIBC;
        static final String WHY;

        static {
            LibC libc = null;
            String why = null;
            try {
                libc = Native.load("c", LibC.class);
            } catch (LinkageError | RuntimeException e) {
                why = "the C library cannot be called through JNA: " + e;
            }
            LIBC = libc;
            WHY = why;
        }
    }

    private UnixIds() {
    }

    /**
     * @param user a user name, or a uid in decimal digits
     * @return its uid
     * @throws IllegalArgumentException when the node knows no such user ({@code no user named x on this node})
     * @throws IllegalStateException    when the user database cannot be asked (no JNA, a failing name service)
     */
    public static long uid(String user) {
        return lookup(user, true);
    }

    /**
     * @param group a group name, or a gid in decimal digits
     * @return its gid
     * @throws IllegalArgumentException when the node knows no such group ({@code no group named x on this node})
     * @throws IllegalStateException    when the group database cannot be asked (no JNA, a failing name service)
     */
    public static long gid(String group) {
        return lookup(group, false);
    }

    /**
     * @param name a name
     * @return the number a name of decimal digits only stands for, or -1 when it is not one
     * @throws IllegalArgumentException when it is all digits but beyond {@link #MAX_ID}
     */
    static long number(String name) {
        if (name.isEmpty() || !name.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        if (name.length() > 10 || Long.parseLong(name) > MAX_ID) {
            throw new IllegalArgumentException("id " + name + " is not 0.." + MAX_ID);
        }
        return Long.parseLong(name);
    }

    private static long lookup(String name, boolean user) {
        String what = user ? "user" : "group";
        if (name == null || name.isEmpty() || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("\"" + name + "\" is not a " + what + " name");
        }
        long id = number(name);
        if (id >= 0) {
            return id;
        }
        if (Holder.LIBC == null) {
            throw new IllegalStateException("cannot look up " + what + " " + name + ": " + Holder.WHY);
        }
        LibC libc = Holder.LIBC;
        Memory entry = new Memory(ENTRY_BYTES);
        for (int size = FIRST_BUFFER_BYTES; ; ) {
            Memory buffer = new Memory(size);
            PointerByReference result = new PointerByReference();
            int error = user ? libc.getpwnam_r(name, entry, buffer, size, result)
                    : libc.getgrnam_r(name, entry, buffer, size, result);
            if (error == ERANGE && size < MAX_BUFFER_BYTES) {
                size *= 2;
            } else if (error == EINTR) {
                continue;
            } else if (error != 0) {
                throw new IllegalStateException("cannot look up " + what + " " + name + ": " + libc.strerror(error));
            } else if (result.getValue() == null) {
                throw new IllegalArgumentException("no " + what + " named " + name + " on this node");
            } else {
                // struct passwd: name and password (pointers), then uid; struct group: name and password, then gid
                return entry.getInt(2L * Native.POINTER_SIZE) & MAX_ID;
            }
        }
    }
}
