package org.mpiproxy.proxy.internal;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.ReflectionException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM-wide drop box through which one revision of the proxy hands its running jobs to the
 * next: an update of the proxy bundle (or a restart of its component) stops the old revision and
 * starts the new one in the same JVM, and the jobs' ranks, channels and flow state must pass from
 * one to the other. The two revisions share no class of this bundle, so the box is an MBean of
 * the platform MBean server ({@code org.mpiproxy:type=HandOver}, visible to operators while a
 * hand-over waits), reached through the server's generic {@code invoke}, and what it holds is made
 * of JDK types and {@code org.mpiproxy.api} handles only.
 * <p>
 * The old revision {@linkplain #offer offers} its state for a window; the new one
 * {@linkplain #take takes} it as it starts. When nobody takes it within the window (the bundle
 * was stopped, not updated), the old revision's own code runs {@code expired}: it stops the ranks
 * as a shutdown would.
 */
final class HandOver {

    /** The drop box's name in the platform MBean server. */
    static final String NAME = "org.mpiproxy:type=HandOver";

    private static final Logger LOG = LoggerFactory.getLogger(HandOver.class);

    private HandOver() {
    }

    /**
     * Leaves {@code state} for the next revision. A box some earlier revision left and nobody took
     * is replaced: its own expiry still runs.
     *
     * @param state   what the next revision takes: JDK types and api handles only
     * @param window  how long the state waits for a taker
     * @param expired runs (on a thread of its own) when nobody took the state within the window
     * @return whether the box could be registered; {@code false} means nobody can take the state
     */
    static boolean offer(Map<String, Object> state, Duration window, Runnable expired) {
        Box box = new Box(state, Instant.now().plus(window));
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            ObjectName name = new ObjectName(NAME);
            if (server.isRegistered(name)) {
                server.unregisterMBean(name);
            }
            server.registerMBean(box, name);
        } catch (JMException | RuntimeException e) {
            LOG.warn("cannot leave the running jobs for the next revision of the proxy: {}", e.toString());
            return false;
        }
        Thread expiry = new Thread(() -> {
            try {
                Thread.sleep(Math.max(0, window.toMillis()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (box.expire()) {
                try {
                    ObjectName name = new ObjectName(NAME);
                    if (server.isRegistered(name) && server.getAttribute(name, "ExpiresAt").equals(box.expiresAt.toString())) {
                        server.unregisterMBean(name);
                    }
                } catch (JMException | RuntimeException e) {
                    LOG.debug("removing the expired hand-over", e);
                }
                LOG.warn("no new revision of the proxy took its running jobs within {} s: stopping them",
                        window.toSeconds());
                expired.run();
            }
        }, "mpiproxy-handover-expiry");
        expiry.setDaemon(true);
        expiry.start();
        return true;
    }

    /**
     * Leaves a stopping proxy's jobs for the next revision; when nobody takes them within the
     * window, or they cannot be left at all, their ranks are stopped (their job directories stay
     * recorded in the state directory, so the next proxy's sweep removes them).
     *
     * @param state  what {@link ProtocolFront#handOver()} gave
     * @param window {@code handover.seconds}
     * @param grace  {@code stop.grace.seconds}
     */
    static void leave(Map<String, Object> state, Duration window, Duration grace) {
        Runnable stop = () -> {
            RankHandOver.stopJobs(state.get("jobs"), grace);
            Object v2 = state.get("v2");
            if (v2 instanceof Map) {
                RankHandOver.stopJobs(((Map<?, ?>) v2).get("jobs"), grace);
                close(((Map<?, ?>) v2).get("pmi"));
            }
        };
        if (!offer(state, window, stop)) {
            stop.run();
        }
    }

    /** @return the ids of the jobs of both protocols in a hand-over ({@link ProtocolFront#handOver()}'s state) */
    static java.util.Set<Long> jobIds(Map<String, Object> state) {
        java.util.Set<Long> ids = RankHandOver.jobIds(state.get("jobs"));
        Object v2 = state.get("v2");
        if (v2 instanceof Map) {
            ids.addAll(RankHandOver.jobIds(((Map<?, ?>) v2).get("jobs")));
        }
        return ids;
    }

    /**
     * Gives v2's part of a hand-over to the v2 dispatcher in force; without one (v2 is disabled
     * now, or could not start), v2's ranks are stopped.
     *
     * @param state what {@link ProtocolFront#handOver()} gave
     * @param v2    the v2 dispatcher, or {@code null}
     * @param grace {@code stop.grace.seconds}
     */
    static void takeV2(Map<String, Object> state, V2Dispatcher v2, Duration grace) {
        Object handed = state.get("v2");
        if (!(handed instanceof Map)) {
            return;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> v2State = (Map<String, Object>) handed;
        if (v2 != null) {
            v2.adopt(v2State);
            return;
        }
        java.util.Set<Long> ids = RankHandOver.jobIds(v2State.get("jobs"));
        RankHandOver.stopJobs(v2State.get("jobs"), grace);
        close(v2State.get("pmi"));
        if (!ids.isEmpty()) {
            LOG.error("protocol v2 is not served by this revision of the proxy: the ranks of the v2 jobs it was"
                    + " handed ({}) were stopped", ids.stream().map(Job::hex).toList());
        }
    }

    /**
     * Gives the output streams of v2's part of a hand-over to a v2 dispatcher just made, before its
     * output listener is bound ({@link V2Dispatcher#adoptOutput}).
     *
     * @param state what {@link ProtocolFront#handOver()} gave, or {@code null}
     */
    @SuppressWarnings("unchecked")
    static void takeV2Output(Map<String, Object> state, V2Dispatcher v2) {
        if (state != null && state.get("v2") instanceof Map) {
            v2.adoptOutput((Map<String, Object>) state.get("v2"));
        }
    }

    private static void close(Object resource) {
        if (resource instanceof AutoCloseable) {
            try {
                ((AutoCloseable) resource).close();
            } catch (Exception e) {
                LOG.debug("closing what a hand-over held", e);
            }
        }
    }

    /**
     * Takes what a previous revision left, once.
     *
     * @return the state, or {@code null} when there is none (or it expired)
     */
    @SuppressWarnings("unchecked")
    static Map<String, Object> take() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            ObjectName name = new ObjectName(NAME);
            Object state = server.invoke(name, "take", new Object[0], new String[0]);
            try {
                server.unregisterMBean(name);
            } catch (InstanceNotFoundException e) {
                // its expiry removed it meanwhile
            }
            return state instanceof Map ? (Map<String, Object>) state : null;
        } catch (InstanceNotFoundException e) {
            return null;
        } catch (JMException | RuntimeException e) {
            LOG.warn("cannot take the jobs a previous revision of the proxy left: {}", e.toString());
            return null;
        }
    }

    /** The MBean: the state until it is taken or expires, whichever comes first. */
    private static final class Box implements DynamicMBean {
        private final Instant expiresAt;
        private Map<String, Object> state;
        private boolean expired;

        Box(Map<String, Object> state, Instant expiresAt) {
            this.state = state;
            this.expiresAt = expiresAt;
        }

        synchronized Map<String, Object> take() {
            Map<String, Object> s = expired ? null : state;
            state = null;
            return s;
        }

        /** @return whether the state was still there, and now never will be taken */
        synchronized boolean expire() {
            boolean untaken = state != null;
            state = null;
            expired = true;
            return untaken;
        }

        synchronized boolean waiting() {
            return state != null;
        }

        @Override
        public Object getAttribute(String attribute) throws AttributeNotFoundException {
            switch (attribute) {
                case "ExpiresAt":
                    return expiresAt.toString();
                case "Waiting":
                    return waiting();
                case "SecondsLeft":
                    return Math.max(0, TimeUnit.MILLISECONDS.toSeconds(Duration.between(Instant.now(), expiresAt).toMillis()));
                default:
                    throw new AttributeNotFoundException(attribute);
            }
        }

        @Override
        public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
            throw new AttributeNotFoundException(attribute.getName() + " is read-only");
        }

        @Override
        public AttributeList getAttributes(String[] attributes) {
            AttributeList list = new AttributeList();
            for (String a : attributes) {
                try {
                    list.add(new Attribute(a, getAttribute(a)));
                } catch (AttributeNotFoundException e) {
                    // left out, as the interface allows
                }
            }
            return list;
        }

        @Override
        public AttributeList setAttributes(AttributeList attributes) {
            return new AttributeList();
        }

        @Override
        public Object invoke(String actionName, Object[] params, String[] signature) throws ReflectionException {
            if ("take".equals(actionName) && (params == null || params.length == 0)) {
                return take();
            }
            throw new ReflectionException(new NoSuchMethodException(actionName));
        }

        @Override
        public MBeanInfo getMBeanInfo() {
            return new MBeanInfo(Box.class.getName(),
                    "Running jobs a stopped revision of the MPI proxy left for the next one",
                    new MBeanAttributeInfo[] {
                        new MBeanAttributeInfo("ExpiresAt", String.class.getName(),
                                "when the jobs are stopped if no new revision takes them", true, false, false),
                        new MBeanAttributeInfo("Waiting", boolean.class.getName(),
                                "whether the jobs still wait for a taker", true, false, true),
                        new MBeanAttributeInfo("SecondsLeft", long.class.getName(),
                                "seconds until ExpiresAt", true, false, false),
                    },
                    null,
                    new MBeanOperationInfo[] {
                        new MBeanOperationInfo("take", "takes the jobs (the next revision of the proxy does)",
                                null, Map.class.getName(), MBeanOperationInfo.ACTION),
                    },
                    null);
        }
    }
}
