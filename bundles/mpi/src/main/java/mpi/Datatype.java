package mpi;

import org.mpiproxy.mpi.internal.engine.Kind;

/**
 * A datatype: what one element of a buffer is. The predefined types name Java elements
 * ({@code MPI.INT}: {@code int[]} or an {@code IntBuffer}; every type also in a
 * {@code ByteBuffer}, in that buffer's byte order). The pair types of {@code MINLOC}/
 * {@code MAXLOC} are laid out in a {@code ByteBuffer} as the C structs of MPI (value, then the
 * int index at the value's alignment: {@code MPI.DOUBLE_INT} takes 16 bytes; {@link MPI#doubleInt}
 * reads and writes them), {@code MPI.INT2} also as {@code int[]} pairs; {@code MPI.FLOAT_COMPLEX}
 * and {@code MPI.DOUBLE_COMPLEX} are (real, imaginary) pairs of {@code float[]}/{@code double[]}.
 * <p>
 * Derived types ({@link #createVector} and the other constructors) are typemaps: a list of
 * (predefined type, byte displacement) with bounds, as MPI defines them. Sending packs each
 * element's entries in order, receiving unpacks them in order, so a type's signature, not its
 * layout, must match the other side's. Displacements are in bytes of the buffer (the
 * {@code createH...} constructors, {@code createStruct}, {@code createResized}) or in extents of
 * the old type (the others); over an array or a typed NIO buffer they must fall on its elements,
 * over a {@code ByteBuffer} or {@code byte[]} (a struct's buffer, in the machine's byte order)
 * anywhere. A derived type is committed ({@link #commit}) before it is used to communicate. As in
 * Open MPI, {@link #getLb}, {@link #getExtent}, {@link #getSize} and the true bounds count in units
 * of the type's base (its old type's, down to a predefined type; bytes for a struct).
 * <p>
 * A failed call on a datatype goes to {@code MPI.COMM_WORLD}'s error handler, as in Open MPI.
 * Thread-safety: as every call of this library, one call at a time.
 */
public final class Datatype implements Freeable, Cloneable {

    /** The kind messages of it carry: its entries' common kind, {@code PACKED} when they differ. */
    final Kind kind;
    /** The element in memory and in messages. */
    final Typemap map;
    /** Whether buffers are moved by the typemap (derived and complex types), not as elements of {@link #kind}. */
    final boolean mapped;
    /** Bytes of one element in a buffer (the extent): the C struct's size for pairs. */
    final int extentBytes;
    /** Bytes of one element in a message. */
    final int packedSize;
    /** Bytes of the unit the getters count in (Open MPI's base size). */
    private final int baseSize;
    /** Whether reductions take it: a predefined type (and a duplicate of one). */
    private final boolean intrinsic;
    private final boolean predefined;
    private final String description;
    private String name;
    private boolean committed;
    private boolean freed;

    /** A predefined type whose elements are {@code kind}'s. */
    Datatype(Kind kind, String name, int extentBytes, int baseSize) {
        this(kind, Typemap.of(kind, extentBytes), false, baseSize, true, true, name, name);
    }

    /** A predefined complex type: (real, imaginary) elements of {@code part}. */
    Datatype(String name, Kind part) {
        this(part, new Typemap(new Kind[] {part, part}, new long[] {0, part.size()}, 0, 2L * part.size(), 0,
                2L * part.size()), true, part.size(), true, true, name, name);
    }

    /** The null datatype: freed from the start. */
    Datatype(String name) {
        this(Kind.BYTE, Typemap.of(Kind.BYTE, 1), false, 1, false, true, name, name);
        this.freed = true;
    }

    private Datatype(Kind kind, Typemap map, boolean mapped, int baseSize, boolean intrinsic, boolean predefined,
                     String name, String description) {
        this.kind = kind;
        this.map = map;
        this.mapped = mapped;
        this.extentBytes = (int) map.extent();
        this.packedSize = map.packedSize;
        this.baseSize = baseSize;
        this.intrinsic = intrinsic;
        this.predefined = predefined;
        this.name = name;
        this.description = description;
        this.committed = predefined;
    }

    /** A derived type of {@code map}, counted in units of {@code base}'s base. */
    private static Datatype derived(Typemap map, int baseSize, String description) {
        return new Datatype(map.commonKind(), map, true, baseSize, false, false, "", description);
    }

    // ---- the constructors of MPI ----

    /**
     * {@code MPI_TYPE_CONTIGUOUS}: {@code count} copies of {@code oldType}, one extent apart.
     *
     * @return a new, uncommitted type with {@code oldType}'s base
     * @throws MPIException {@code MPI.ERR_COUNT} for a negative count, {@code MPI.ERR_TYPE} for a
     *                      freed or null old type
     */
    public static Datatype createContiguous(int count, Datatype oldType) throws MPIException {
        return build("createContiguous", () -> {
            usableOld("createContiguous", oldType);
            return derived(Typemap.blocks("createContiguous", new int[] {count}, new long[] {0},
                    new Typemap[] {oldType.map}, false), oldType.baseSize, "contiguous(" + count + ", " + oldType + ")");
        });
    }

    /**
     * {@code MPI_TYPE_VECTOR}: {@code count} blocks of {@code blockLength} copies of
     * {@code oldType}, the blocks {@code stride} extents of it apart (a column of a row-major
     * matrix: {@code createVector(rows, 1, columns, MPI.DOUBLE)}).
     */
    public static Datatype createVector(int count, int blockLength, int stride, Datatype oldType)
            throws MPIException {
        return build("createVector", () -> {
            usableOld("createVector", oldType);
            return vector("createVector", count, blockLength, stride * oldType.map.extent(), oldType);
        });
    }

    /** {@code MPI_TYPE_CREATE_HVECTOR}: as {@link #createVector}, with {@code stride} in bytes. */
    public static Datatype createHVector(int count, int blockLength, int stride, Datatype oldType)
            throws MPIException {
        return build("createHVector", () -> {
            usableOld("createHVector", oldType);
            return vector("createHVector", count, blockLength, stride, oldType);
        });
    }

    private static Datatype vector(String call, int count, int blockLength, long strideBytes, Datatype oldType)
            throws MPIException {
        if (count < 0) {
            throw new MPIException(MPI.ERR_COUNT, call + ": count " + count + " is negative");
        }
        int[] lengths = new int[count];
        long[] starts = new long[count];
        Typemap[] olds = new Typemap[count];
        for (int i = 0; i < count; i++) {
            lengths[i] = blockLength;
            starts[i] = i * strideBytes;
            olds[i] = oldType.map;
        }
        return derived(Typemap.blocks(call, lengths, starts, olds, false), oldType.baseSize,
                call + "(" + count + ", " + blockLength + ", " + strideBytes + " bytes, " + oldType + ")");
    }

    /**
     * {@code MPI_TYPE_INDEXED}: block {@code i} is {@code blockLengths[i]} copies of
     * {@code oldType} at {@code displacements[i]} extents of it.
     *
     * @throws MPIException {@code MPI.ERR_ARG} when the arrays differ in length
     */
    public static Datatype createIndexed(int[] blockLengths, int[] displacements, Datatype oldType)
            throws MPIException {
        return build("createIndexed", () -> {
            usableOld("createIndexed", oldType);
            return indexed("createIndexed", blockLengths, displacements, oldType.map.extent(), oldType);
        });
    }

    /** {@code MPI_TYPE_CREATE_HINDEXED}: as {@link #createIndexed}, with displacements in bytes. */
    public static Datatype createHIndexed(int[] blockLengths, int[] displacements, Datatype oldType)
            throws MPIException {
        return build("createHIndexed", () -> {
            usableOld("createHIndexed", oldType);
            return indexed("createHIndexed", blockLengths, displacements, 1, oldType);
        });
    }

    /**
     * {@code MPI_TYPE_CREATE_INDEXED_BLOCK}: as {@link #createIndexed}, every block
     * {@code blockLength} copies long.
     */
    public static Datatype createIndexedBlock(int blockLength, int[] displacements, Datatype oldType)
            throws MPIException {
        return build("createIndexedBlock", () -> {
            usableOld("createIndexedBlock", oldType);
            if (displacements == null) {
                throw new MPIException(MPI.ERR_ARG, "createIndexedBlock: the displacements are null");
            }
            int[] lengths = new int[displacements.length];
            java.util.Arrays.fill(lengths, blockLength);
            return indexed("createIndexedBlock", lengths, displacements, oldType.map.extent(), oldType);
        });
    }

    private static Datatype indexed(String call, int[] lengths, int[] displacements, long unit, Datatype oldType)
            throws MPIException {
        if (lengths == null || displacements == null || lengths.length != displacements.length) {
            throw new MPIException(MPI.ERR_ARG, call + ": block lengths and displacements must be two arrays of one "
                    + "length");
        }
        long[] starts = new long[lengths.length];
        Typemap[] olds = new Typemap[lengths.length];
        for (int i = 0; i < lengths.length; i++) {
            starts[i] = displacements[i] * unit;
            olds[i] = oldType.map;
        }
        return derived(Typemap.blocks(call, lengths, starts, olds, false), oldType.baseSize,
                call + "(" + lengths.length + " blocks of " + oldType + ")");
    }

    /**
     * {@code MPI_TYPE_CREATE_STRUCT}: block {@code i} is {@code blockLengths[i]} copies of
     * {@code types[i]} at byte {@code displacements[i]}; the extent is rounded up to the largest
     * alignment of its entries (a C struct's padding). Its base is bytes: it describes a
     * {@code ByteBuffer} or a {@code byte[]} (see {@link Struct}).
     */
    public static Datatype createStruct(int[] blockLengths, int[] displacements, Datatype[] types)
            throws MPIException {
        return build("createStruct", () -> {
            if (blockLengths == null || displacements == null || types == null
                    || blockLengths.length != displacements.length || types.length != blockLengths.length) {
                throw new MPIException(MPI.ERR_ARG, "createStruct: block lengths, displacements and types must be "
                        + "three arrays of one length");
            }
            long[] starts = new long[types.length];
            Typemap[] olds = new Typemap[types.length];
            for (int i = 0; i < types.length; i++) {
                usableOld("createStruct", types[i]);
                starts[i] = displacements[i];
                olds[i] = types[i].map;
            }
            return derived(Typemap.blocks("createStruct", blockLengths, starts, olds, true), 1,
                    "struct(" + types.length + " blocks)");
        });
    }

    /**
     * {@code MPI_TYPE_CREATE_RESIZED}: {@code oldType}'s entries with the lower bound {@code lb}
     * and the extent {@code extent}, both in bytes.
     */
    public static Datatype createResized(Datatype oldType, int lb, int extent) throws MPIException {
        return build("createResized", () -> {
            usableOld("createResized", oldType);
            return derived(oldType.map.resized(lb, extent), oldType.baseSize,
                    "resized(" + oldType + ", lb " + lb + ", extent " + extent + ")");
        });
    }

    /** A constructor's body, under the lock; its failure goes to {@code MPI.COMM_WORLD}'s handler. */
    @FunctionalInterface
    private interface Body<T> {
        T run() throws MPIException;
    }

    private static <T> T build(String call, Body<T> body) throws MPIException {
        synchronized (MPI.LOCK) {
            MPI.check();
            try {
                return body.run();
            } catch (MPIException e) {
                throw MPI.raise(e);
            }
        }
    }

    private static void usableOld(String call, Datatype old) throws MPIException {
        if (old == null) {
            throw new MPIException(MPI.ERR_TYPE, call + ": the old type is null");
        }
        if (old.freed) {
            throw new MPIException(MPI.ERR_TYPE, call + ": " + old.what() + " has been freed");
        }
    }

    // ---- the type's life ----

    /** {@code MPI_TYPE_COMMIT}: the type may be used to communicate from now on (a predefined type always may). */
    public void commit() throws MPIException {
        build("commit", () -> {
            if (freed) {
                throw new MPIException(MPI.ERR_TYPE, "commit of " + what() + ", which has been freed");
            }
            committed = true;
            return null;
        });
    }

    /**
     * {@code MPI_TYPE_FREE}: the type becomes null ({@link #isNull}); types made from it stay as they are.
     *
     * @throws MPIException {@code MPI.ERR_TYPE} for a predefined type or one already freed
     */
    @Override
    public void free() throws MPIException {
        build("free", () -> {
            if (predefined) {
                throw new MPIException(MPI.ERR_TYPE, "free of " + what() + ": a predefined type cannot be freed");
            }
            if (freed) {
                throw new MPIException(MPI.ERR_TYPE, "free of " + what() + ", which has been freed");
            }
            freed = true;
            return null;
        });
    }

    /** @return whether it was freed, or is {@code MPI.DATATYPE_NULL} */
    public boolean isNull() {
        return freed;
    }

    /**
     * {@code MPI_TYPE_DUP}.
     *
     * @return a new type of the same typemap and committed state, which can be freed
     */
    public Datatype dup() throws MPIException {
        return build("dup", () -> {
            if (freed) {
                throw new MPIException(MPI.ERR_TYPE, "dup of " + what() + ", which has been freed");
            }
            Datatype d = new Datatype(kind, map, mapped, baseSize, intrinsic, false, name, "dup(" + this + ")");
            d.committed = committed;
            return d;
        });
    }

    /**
     * As {@link #dup}, under the name Open MPI's bindings also give it.
     *
     * @throws RuntimeException carrying the {@link MPIException} where {@code dup} would throw one
     */
    @Override
    public Datatype clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    // ---- what it is ----

    /** @return the lower bound, in units of the base ({@code MPI_TYPE_GET_EXTENT}) */
    public int getLb() throws MPIException {
        return units("getLb", map.lb);
    }

    /** @return the extent (upper minus lower bound), in units of the base */
    public int getExtent() throws MPIException {
        return units("getExtent", map.extent());
    }

    /** @return the lower bound of the entries themselves, in units of the base ({@code MPI_TYPE_GET_TRUE_EXTENT}) */
    public int getTrueLb() throws MPIException {
        return units("getTrueLb", map.trueLb);
    }

    /** @return the extent of the entries themselves, in units of the base */
    public int getTrueExtent() throws MPIException {
        return units("getTrueExtent", map.trueExtent());
    }

    /** @return the data of one element, in units of the base ({@code MPI_TYPE_SIZE}: 1 for {@code MPI.INT}) */
    public int getSize() throws MPIException {
        return units("getSize", map.packedSize);
    }

    private int units(String call, long bytes) throws MPIException {
        if (freed) {
            throw MPI.raise(new MPIException(MPI.ERR_TYPE, call + " of " + what() + ", which has been freed"));
        }
        return (int) (bytes / baseSize);
    }

    /** @return the type's name: {@code MPI_INT} and so on, empty for a derived type until {@link #setName} */
    public String getName() throws MPIException {
        return name;
    }

    /** Names the type (its name in messages too). */
    public void setName(String name) throws MPIException {
        this.name = name == null ? "" : name;
    }

    @Override
    public String toString() {
        return name.isEmpty() ? description : name;
    }

    private String what() {
        return predefined ? toString() : "the type " + this;
    }

    // ---- for the calls that use it ----

    /** @return whether it was made by a constructor (from a predefined type or not), not predefined or a duplicate of one */
    boolean derived() {
        return !intrinsic;
    }

    /** @throws MPIException {@code MPI.ERR_TYPE} unless it may be used to communicate */
    void checkUsable() throws MPIException {
        if (freed) {
            throw new MPIException(MPI.ERR_TYPE, what() + (predefined ? " is no datatype" : " has been freed"));
        }
        if (!committed) {
            throw new MPIException(MPI.ERR_TYPE, what() + " is not committed (Datatype.commit)");
        }
    }

    /**
     * @param count elements of this type a reduction combines
     * @return the elements of {@link #kind} the engine combines
     * @throws MPIException {@code MPI.ERR_OP} for a derived type with a predefined operation (those are
     *                      defined on predefined types only) and for complex types but with
     *                      {@code MPI.SUM}
     */
    int reduced(int count, Op op) throws MPIException {
        checkUsable();
        if (op.isUser()) {
            return count * packedSize / kind.size();
        }
        if (!intrinsic) {
            throw new MPIException(MPI.ERR_OP, op + " is not defined on derived datatypes (" + this + ")");
        }
        if (mapped) {
            if (op != MPI.SUM) {
                throw new MPIException(MPI.ERR_OP, op + " is not offered on " + this + " (MPI.SUM is)");
            }
            return count * map.kinds.length;
        }
        return count;
    }
}
