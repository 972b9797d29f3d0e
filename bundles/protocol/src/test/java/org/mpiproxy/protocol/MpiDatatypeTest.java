package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class MpiDatatypeTest {

    @Test
    void shouldKeepFreeNosCodesForV1Types() {
        assertEquals(0, MpiDatatype.CHAR.code());
        assertEquals(3, MpiDatatype.INT.code());
        assertEquals(4, MpiDatatype.UNSIGNED_CHAR.code());
        assertEquals(7, MpiDatatype.UNSIGNED_LONG.code());
        assertEquals(MpiDatatype.V1_MAX_CODE, MpiDatatype.UNSIGNED_LONG.code());
    }

    @Test
    void shouldReportElementSizes() {
        assertEquals(4, MpiDatatype.sizeOf(MpiDatatype.INT.code()));
        assertEquals(1, MpiDatatype.sizeOf(MpiDatatype.UNSIGNED_CHAR.code()));
        assertEquals(8, MpiDatatype.sizeOf(MpiDatatype.LONG.code()));
        assertEquals(8, MpiDatatype.sizeOf(MpiDatatype.DOUBLE.code()));
    }

    @Test
    void shouldRejectUnknownCodes() {
        assertEquals(-1, MpiDatatype.sizeOf(-1));
        assertEquals(-1, MpiDatatype.sizeOf(13));
        assertEquals(-1, MpiDatatype.sizeOf(65535));
        assertNull(MpiDatatype.ofCode(13));
        assertEquals(MpiDatatype.FLOAT, MpiDatatype.ofCode(11));
    }

    @Test
    void shouldNameErrors() {
        assertEquals("MPI_ERR_IO", MpiErrors.name(35));
        assertEquals("MPI_ERR_99", MpiErrors.name(99));
    }
}
