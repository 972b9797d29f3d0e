package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/** The fragments of one message appended in order until its last one arrived. */
final class MessageAssembly {

    private final int datatype;
    private final int tag;
    private ByteBuffer bytes = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);

    MessageAssembly(int datatype, int tag) {
        this.datatype = datatype;
        this.tag = tag;
    }

    void append(int fragmentDatatype, ByteBuffer src, int offset, int length) {
        if (fragmentDatatype != datatype) {
            throw new MpiException(MpiErrors.ERR_TYPE, "a message of " + MpiDatatype.ofCode(datatype)
                    + " continued with " + MpiDatatype.ofCode(fragmentDatatype) + " elements");
        }
        if (bytes.remaining() < length) {
            long needed = (long) bytes.position() + length;
            if (needed > Integer.MAX_VALUE - 8) {
                throw new MpiException(MpiErrors.ERR_NO_MEM, "a message of more than 2 GiB cannot be held");
            }
            int capacity = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(needed, 2L * bytes.capacity()));
            ByteBuffer larger = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
            bytes.flip();
            larger.put(bytes);
            bytes = larger;
        }
        bytes.put(bytes.position(), src, offset, length);
        bytes.position(bytes.position() + length);
    }

    TaggedMessage message(int source) {
        ByteBuffer data = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        data.flip();
        return new TaggedMessage(source, tag, datatype, data);
    }
}
