package org.mpiproxy.transport.udp.internal;

import java.lang.management.ManagementFactory;
import java.util.Map;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Registers the transport's {@link TransportMXBean} with the platform MBeanServer. */
final class TransportManagement implements TransportMXBean {

    private static final Logger LOG = LoggerFactory.getLogger(TransportManagement.class);

    private final UdpTransportComponent component;
    private final MBeanServer server;
    private final ObjectName name;

    private TransportManagement(UdpTransportComponent component, MBeanServer server) throws JMException {
        this.component = component;
        this.server = server;
        this.name = new ObjectName(OBJECT_NAME);
    }

    /** @return the registration, or {@code null} when JMX refused it (logged; the transport runs on) */
    static TransportManagement register(UdpTransportComponent component) {
        try {
            TransportManagement m = new TransportManagement(component, ManagementFactory.getPlatformMBeanServer());
            if (m.server.isRegistered(m.name)) {
                m.server.unregisterMBean(m.name);
            }
            m.server.registerMBean(m, m.name);
            return m;
        } catch (JMException | RuntimeException e) {
            LOG.warn("cannot register {}: {}", OBJECT_NAME, e.toString());
            return null;
        }
    }

    void unregister() {
        try {
            server.unregisterMBean(name);
        } catch (JMException e) {
            LOG.debug("unregistering {}", name, e);
        }
    }

    @Override
    public String getLocalAddress() {
        return component.localAddress().getAddress().getHostAddress() + ":" + component.localAddress().getPort();
    }

    @Override
    public Map<String, Long> getCounters() {
        return component.counters();
    }

    private long counter(String key) {
        return component.counters().getOrDefault(key, 0L);
    }

    @Override
    public long getDatagramsIn() {
        return counter("datagrams.in");
    }

    @Override
    public long getDatagramsOut() {
        return counter("datagrams.out");
    }

    @Override
    public long getBytesIn() {
        return counter("bytes.in");
    }

    @Override
    public long getBytesOut() {
        return counter("bytes.out");
    }

    @Override
    public String getReceiveThreadName() {
        return component.receiveThread().getName();
    }

    @Override
    public boolean isReceiveThreadAlive() {
        return component.supervision().death() == null;
    }

    @Override
    public String getReceiveThreadDeath() {
        String death = component.supervision().death();
        return death == null ? "" : death;
    }

    @Override
    public long getReceiveThreadBusyMillis() {
        return java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(component.supervision().busyNanos());
    }

    @Override
    public String getReceiveThreadAt() {
        return innermostOwnFrame(component.receiveThread().getStackTrace());
    }

    @Override
    public long getReceiveThreadRestarts() {
        return counter("receive.restarts");
    }

    @Override
    public long getReceiveLoopFailures() {
        return counter("errors");
    }

    /** @return the innermost frame outside the JDK, which names the code a thread is stuck in; empty when none */
    static String innermostOwnFrame(StackTraceElement[] trace) {
        for (StackTraceElement e : trace) {
            String c = e.getClassName();
            if (!c.startsWith("java.") && !c.startsWith("jdk.") && !c.startsWith("sun.")) {
                return ReceiveSupervision.frame(e);
            }
        }
        return "";
    }
}
