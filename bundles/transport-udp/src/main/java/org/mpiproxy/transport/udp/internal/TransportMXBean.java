package org.mpiproxy.transport.udp.internal;

import java.util.Map;

/** The UDP transport over JMX as {@code org.mpiproxy:type=Transport}; open types only. */
public interface TransportMXBean {

    /** Object name of the transport's MBean. */
    String OBJECT_NAME = "org.mpiproxy:type=Transport";

    /** @return where the socket is bound, {@code address:port} */
    String getLocalAddress();

    /** @return every counter by name, totals over rebinds */
    Map<String, Long> getCounters();

    /** @return datagrams received */
    long getDatagramsIn();

    /** @return datagrams sent */
    long getDatagramsOut();

    /** @return bytes received */
    long getBytesIn();

    /** @return bytes sent */
    long getBytesOut();

    /** @return the receive thread's name */
    String getReceiveThreadName();

    /** @return whether the receive thread runs; {@code false} from its death to its restart */
    boolean isReceiveThreadAlive();

    /** @return why the receive thread is dead, empty while it runs */
    String getReceiveThreadDeath();

    /** @return how long the receive thread has been inside the handler now, in milliseconds; 0 when it is not */
    long getReceiveThreadBusyMillis();

    /** @return where the receive thread is now: its innermost frame outside the JDK, empty when unknown */
    String getReceiveThreadAt();

    /** @return how often the receive thread was restarted after dying */
    long getReceiveThreadRestarts();

    /** @return failures the receive loop survived (the datagram or pass that met each was lost) */
    long getReceiveLoopFailures();
}
