package org.mpiproxy.process;

import java.nio.charset.StandardCharsets;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * MUNGE, the authentication service of the cluster ({@code munged}), through its client library
 * {@code libmunge.so.2} and JNA: a credential made here names this process's uid and gid, and one
 * decoded here names the uid and gid of the process that made it. A call asks the local
 * {@code munged} over its socket (well under a millisecond; spawning {@code munge} or
 * {@code unmunge} takes some ten). Stateless and thread-safe: every call has its own context.
 */
public final class Munge {

    /** {@code MUNGE_OPT_UID_RESTRICTION} of {@code munge.h}: only this uid (or root) may decode. */
    private static final int OPT_UID_RESTRICTION = 9;
    /** {@code EMUNGE_SUCCESS}. */
    private static final int SUCCESS = 0;
    /** {@code EMUNGE_SNAFU}, {@code EMUNGE_NO_MEMORY}, {@code EMUNGE_SOCKET}, {@code EMUNGE_TIMEOUT}: this side's. */
    private static final int SNAFU = 1;
    private static final int NO_MEMORY = 5;
    private static final int SOCKET = 6;
    private static final int TIMEOUT = 7;

    /**
     * A credential decoded by {@code munged}.
     *
     * @param payload what its maker put in it
     * @param uid     the uid of its maker
     * @param gid     the gid of its maker
     */
    public record Decoded(byte[] payload, long uid, long gid) {
    }

    /** The functions of libmunge this class calls; a context is {@code munge_ctx_t}. */
    interface LibMunge extends Library {
        Pointer munge_ctx_create();

        void munge_ctx_destroy(Pointer ctx);

        int munge_ctx_set(Pointer ctx, int option, Object... value);

        String munge_ctx_strerror(Pointer ctx);

        String munge_strerror(int error);

        int munge_encode(PointerByReference credential, Pointer ctx, byte[] payload, int length);

        int munge_decode(String credential, Pointer ctx, PointerByReference payload, IntByReference length,
                         IntByReference uid, IntByReference gid);
    }

    /** The C library's {@code free}, for what libmunge allocates. */
    interface LibC extends Library {
        void free(Pointer pointer);
    }

    /** libmunge and the C library, or why they cannot be called. */
    private static final class Holder {
        static final LibMunge MUNGE;
        static final LibC LIBC;
        static final String WHY;

        static {
            LibMunge munge = null;
            LibC libc = null;
            String why = null;
            try {
                munge = Native.load("munge", LibMunge.class);
                libc = Native.load("c", LibC.class);
            } catch (LinkageError | RuntimeException e) {
                why = "libmunge cannot be loaded: " + e.getMessage();
            }
            MUNGE = munge;
            LIBC = libc;
            WHY = why;
        }
    }

    private Munge() {
    }

    /**
     * Asks {@code munged} for a credential of an empty payload, which nobody decodes.
     *
     * @return {@code null} when MUNGE works here, else why not in one line
     */
    public static String problem() {
        try {
            encode(new byte[0], -1);
            return null;
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
    }

    /**
     * @param payload       what the credential carries
     * @param restrictToUid the only uid that may decode it (root may too), or -1 for anyone
     * @return the credential in its text form ({@code MUNGE:...:})
     * @throws IllegalStateException when libmunge cannot be called or {@code munged} refuses (its reason)
     */
    public static String encode(byte[] payload, long restrictToUid) {
        LibMunge munge = library();
        Pointer ctx = munge.munge_ctx_create();
        if (ctx == null) {
            throw new IllegalStateException("munge: out of memory");
        }
        try {
            if (restrictToUid >= 0) {
                check(munge, ctx, munge.munge_ctx_set(ctx, OPT_UID_RESTRICTION, (int) restrictToUid));
            }
            PointerByReference credential = new PointerByReference();
            int error = munge.munge_encode(credential, ctx, payload, payload.length);
            Pointer text = credential.getValue();
            try {
                check(munge, ctx, error);
                return text.getString(0, StandardCharsets.US_ASCII.name());
            } finally {
                free(text);
            }
        } finally {
            munge.munge_ctx_destroy(ctx);
        }
    }

    /**
     * @param credential a credential in its text form
     * @return its payload and the uid and gid of its maker
     * @throws IllegalArgumentException when {@code munged} refuses it (expired, replayed, another key,
     *                                  restricted to another user, malformed): its reason
     * @throws IllegalStateException    when libmunge cannot be called or {@code munged} does not answer
     */
    public static Decoded decode(String credential) {
        LibMunge munge = library();
        Pointer ctx = munge.munge_ctx_create();
        if (ctx == null) {
            throw new IllegalStateException("munge: out of memory");
        }
        try {
            PointerByReference payload = new PointerByReference();
            IntByReference length = new IntByReference();
            IntByReference uid = new IntByReference();
            IntByReference gid = new IntByReference();
            int error = munge.munge_decode(credential, ctx, payload, length, uid, gid);
            Pointer bytes = payload.getValue();
            try {
                if (error != SUCCESS) {
                    String why = reason(munge, ctx, error);
                    // the socket, its daemon and memory are this side's problem; the rest the credential's
                    if (error == SNAFU || error == NO_MEMORY || error == SOCKET || error == TIMEOUT) {
                        throw new IllegalStateException(why);
                    }
                    throw new IllegalArgumentException(why);
                }
                byte[] data = bytes == null ? new byte[0] : bytes.getByteArray(0, length.getValue());
                return new Decoded(data, Integer.toUnsignedLong(uid.getValue()),
                        Integer.toUnsignedLong(gid.getValue()));
            } finally {
                free(bytes);
            }
        } finally {
            munge.munge_ctx_destroy(ctx);
        }
    }

    private static LibMunge library() {
        if (Holder.MUNGE == null) {
            throw new IllegalStateException(Holder.WHY);
        }
        return Holder.MUNGE;
    }

    private static void check(LibMunge munge, Pointer ctx, int error) {
        if (error != SUCCESS) {
            throw new IllegalStateException(reason(munge, ctx, error));
        }
    }

    private static String reason(LibMunge munge, Pointer ctx, int error) {
        String detail = munge.munge_ctx_strerror(ctx);
        return "munge: " + (detail != null ? detail : munge.munge_strerror(error));
    }

    private static void free(Pointer pointer) {
        if (pointer != null) {
            Holder.LIBC.free(pointer);
        }
    }
}
