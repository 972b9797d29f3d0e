package org.mpiproxy.launcher.core.internal;

import java.io.IOException;
import java.nio.file.Path;

/** Source of the CPU list ranks may be pinned to. */
@FunctionalInterface
interface AllowedCpus {

    /**
     * @return a CPU list such as {@code 0-1,4}
     * @throws IOException when it cannot be read
     */
    String list() throws IOException;

    /** @return the CPUs this process may run on, from {@code /proc/self/status} */
    static AllowedCpus ofThisProcess() {
        Path status = Path.of("/proc/self/status");
        return () -> CpuList.allowedList(status);
    }
}
