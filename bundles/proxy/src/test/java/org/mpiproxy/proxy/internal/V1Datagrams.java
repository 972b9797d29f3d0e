package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/** Builds v1 requests the way a host sends them, in direct buffers like the transport's. */
final class V1Datagrams {

    private V1Datagrams() {
    }

    static ByteBuffer header(int op, int rankId, int coreId, int typeOrCount, long datacount, int payloadLength) {
        ByteBuffer b = ByteBuffer.allocateDirect(V1HeaderDescriptor.HEADER_LENGTH + payloadLength)
                .order(ByteOrder.LITTLE_ENDIAN);
        new V1HeaderFlyweight().wrap(b, 0).set(op, 0, rankId, coreId, typeOrCount, datacount);
        return b;
    }

    static ByteBuffer exec(int rankId, int coreId, int worldSize, String command) {
        byte[] text = command.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = header(V1HeaderDescriptor.OP_EXEC, rankId, coreId, worldSize, 0, text.length);
        b.put(V1HeaderDescriptor.HEADER_LENGTH, text);
        return b;
    }

    static ByteBuffer sendInts(int rankId, int... values) {
        ByteBuffer b = header(V1HeaderDescriptor.OP_SEND, rankId, 0, MpiDatatype.INT.code(), values.length,
                values.length * 4);
        for (int i = 0; i < values.length; i++) {
            b.putInt(V1HeaderDescriptor.HEADER_LENGTH + i * 4, values[i]);
        }
        return b;
    }

    static ByteBuffer recv(int rankId, MpiDatatype type, long count) {
        return header(V1HeaderDescriptor.OP_RECV, rankId, 0, type.code(), count, 0);
    }

    static ByteBuffer terminate(int rankId, int coreId) {
        return header(V1HeaderDescriptor.OP_TERMINATE, rankId, coreId, 0, 0, 0);
    }

    static int[] range(int from, int count) {
        int[] v = new int[count];
        for (int i = 0; i < count; i++) {
            v[i] = from + i;
        }
        return v;
    }
}
