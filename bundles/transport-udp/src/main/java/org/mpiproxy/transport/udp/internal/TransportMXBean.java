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
}
