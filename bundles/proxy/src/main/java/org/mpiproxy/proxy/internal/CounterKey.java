package org.mpiproxy.proxy.internal;

/** A counter of one protocol: an enum constant with the name operators see. */
interface CounterKey {

    /** @return the name shown to operators ({@code exec.started}, {@code v2.exec.started}) */
    String key();

    /** @return the constant's position in its enum: the counter's index */
    int ordinal();
}
