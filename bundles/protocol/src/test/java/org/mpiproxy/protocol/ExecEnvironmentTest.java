package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The encoding of a job's common environment (docs/protocol-v2.md 5.10). */
class ExecEnvironmentTest {

    @Test
    void shouldRoundTripVariablesInOrderWithEmptyValuesEqualsSignsAndUtf8() {
        Map<String, String> variables = new LinkedHashMap<>();
        variables.put("PATH", "/usr/bin:/bin");
        variables.put("EMPTY", "");
        variables.put("OPTS", "a=b c=d");
        variables.put("GREETING", "grüß dich");
        byte[] bytes = ExecEnvironment.encode(variables);
        assertEquals("PATH=/usr/bin:/bin\0EMPTY=\0OPTS=a=b c=d\0GREETING=grüß dich\0",
                new String(bytes, StandardCharsets.UTF_8));
        Map<String, String> back = ExecEnvironment.decode(bytes);
        assertEquals(variables, back);
        assertEquals(List.copyOf(variables.keySet()), List.copyOf(back.keySet()));
        assertEquals(Map.of(), ExecEnvironment.decode(new byte[0]));
    }

    @Test
    void shouldRefuseWhatIsNotAnEnvironmentWithOneLine() {
        IllegalArgumentException unended = assertThrows(IllegalArgumentException.class,
                () -> ExecEnvironment.decode("A=1\0B=2".getBytes(StandardCharsets.UTF_8)));
        assertEquals("environment string 1 is not ended by a NUL byte", unended.getMessage());
        IllegalArgumentException noName = assertThrows(IllegalArgumentException.class,
                () -> ExecEnvironment.decode("A=1\0=2\0".getBytes(StandardCharsets.UTF_8)));
        assertTrue(noName.getMessage().startsWith("environment string 1 is not NAME=VALUE"), noName.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> ExecEnvironment.decode(new byte[] {'A', '=', (byte) 0xff, 0}));
        assertThrows(IllegalArgumentException.class, () -> ExecEnvironment.encode(Map.of("1A", "x")));
        assertThrows(IllegalArgumentException.class, () -> ExecEnvironment.encode(Map.of("A", "x\0y")));
    }

    @Test
    void shouldPutTheDigestBeforeThePlainForm() throws Exception {
        byte[] variables = ExecEnvironment.encode(Map.of("A", "1"));
        byte[] digest = ExecEnvironment.digest(variables);
        assertArrayEquals(java.security.MessageDigest.getInstance("SHA-256").digest("A=1\0".getBytes(
                StandardCharsets.US_ASCII)), digest);
        byte[] plain = new ExecCommand("prog", List.of(), Map.of()).encodePlain();
        byte[] payload = ExecEnvironment.execPayload(digest, plain);
        assertEquals(32 + plain.length, payload.length);
        assertArrayEquals(digest, java.util.Arrays.copyOf(payload, 32));
        assertThrows(IllegalArgumentException.class, () -> ExecEnvironment.execPayload(new byte[31], plain));
    }
}
