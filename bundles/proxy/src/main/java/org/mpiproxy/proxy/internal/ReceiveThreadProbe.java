package org.mpiproxy.proxy.internal;

import java.lang.management.ManagementFactory;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

/**
 * Reads what the UDP transport tells of its receive thread from its management bean
 * ({@code org.mpiproxy:type=Transport}, attributes {@code ReceiveThread*}): the transport's
 * bundle exports no package, and its bean is how it tells operators the same. Any thread.
 */
final class ReceiveThreadProbe {

    /** The transport's bean, as the transport registers it. */
    static final String TRANSPORT = "org.mpiproxy:type=Transport";

    /** Reads the receive thread's state. */
    @FunctionalInterface
    interface Reader {
        /**
         * @return the receive thread's state
         * @throws JMException when the transport's bean is not there or cannot be read
         */
        NodeHealth.ServingThread read() throws JMException;
    }

    private ReceiveThreadProbe() {
    }

    /** @return a reader of the transport's bean in the platform MBeanServer */
    static Reader platform() {
        return of(ManagementFactory.getPlatformMBeanServer(), TRANSPORT);
    }

    /**
     * @param server where the bean is registered
     * @param name   the bean's object name
     * @return a reader of that bean
     */
    static Reader of(MBeanServer server, String name) {
        ObjectName objectName;
        try {
            objectName = new ObjectName(name);
        } catch (MalformedObjectNameException e) {
            throw new IllegalArgumentException(name + " is not an object name", e);
        }
        return () -> new NodeHealth.ServingThread(
                (String) server.getAttribute(objectName, "ReceiveThreadName"),
                (Boolean) server.getAttribute(objectName, "ReceiveThreadAlive"),
                (String) server.getAttribute(objectName, "ReceiveThreadDeath"),
                (Long) server.getAttribute(objectName, "ReceiveThreadBusyMillis"),
                (String) server.getAttribute(objectName, "ReceiveThreadAt"),
                (Long) server.getAttribute(objectName, "ReceiveThreadRestarts"),
                (Long) server.getAttribute(objectName, "ReceiveLoopFailures"));
    }
}
