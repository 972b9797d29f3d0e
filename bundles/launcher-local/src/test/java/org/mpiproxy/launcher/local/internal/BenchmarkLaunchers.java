package org.mpiproxy.launcher.local.internal;

import java.nio.file.Path;

import org.mpiproxy.api.ProcessLauncher;

/** Gives the benchmarks the local launcher the distribution uses, without OSGi. */
public final class BenchmarkLaunchers {

    private BenchmarkLaunchers() {
    }

    /**
     * @param programDirectory directory of the programs ranks may run
     * @return the launcher of the {@code launcher-local} bundle over that directory
     */
    public static ProcessLauncher local(Path programDirectory) {
        return new LocalProcessLauncher(programDirectory, System.getProperty("java.home"));
    }
}
