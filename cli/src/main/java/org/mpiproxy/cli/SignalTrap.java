package org.mpiproxy.cli;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;

/**
 * Catches SIGINT and SIGTERM so the launcher can stop the job on every node and still see a
 * second Ctrl-C (shutdown hooks cannot: the JVM ignores signals while they run). Uses the JDK's
 * {@code sun.misc.Signal} (module jdk.unsupported) by reflection, so compiling needs no
 * internal API; where it is missing, nothing is installed and the default handling applies.
 */
final class SignalTrap {

    private SignalTrap() {
    }

    /**
     * This JVM's SIGINT and SIGTERM, for the standalone launcher ({@link org.mpiproxy.api.LocalRuns.Signals}).
     *
     * @param handler gets 2 for SIGINT, 15 for SIGTERM
     */
    static void listen(java.util.function.IntConsumer handler) {
        install("INT", () -> handler.accept(2));
        install("TERM", () -> handler.accept(15));
    }

    /**
     * @param name    the signal's name without "SIG", e.g. {@code INT}
     * @param handler runs on the JVM's signal thread for every delivery; must return quickly
     * @return whether the handler was installed
     */
    static boolean install(String name, Runnable handler) {
        try {
            Class<?> signalClass = Class.forName("sun.misc.Signal");
            Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
            Object signal = signalClass.getConstructor(String.class).newInstance(name);
            InvocationHandler dispatch = (proxy, method, args) -> {
                switch (method.getName()) {
                    case "handle":
                        handler.run();
                        return null;
                    case "hashCode":
                        return System.identityHashCode(proxy);
                    case "equals":
                        return proxy == args[0];
                    default:
                        return "SignalTrap[" + name + "]";
                }
            };
            Object proxy = Proxy.newProxyInstance(handlerClass.getClassLoader(), new Class<?>[] {handlerClass}, dispatch);
            signalClass.getMethod("handle", signalClass, handlerClass).invoke(null, signal, proxy);
            return true;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return false;
        }
    }
}
